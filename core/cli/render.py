"""Human-readable rendering of envelopes and reports (the CLI's default output)."""

from __future__ import annotations

import json
import shlex
from typing import TYPE_CHECKING, Any

from rich.text import Text

from graphctx.followups import calls_in

if TYPE_CHECKING:
    from rich.console import Console

COMMAND = ["graphctx"]
"""How this invocation was started (the program and its global options): a follow-up is printed
as a command line that starts the same way, so it runs against the same data and scope."""
POSITIONAL = {"query": 0, "name": 0, "source": 0, "target": 1}
"""Arguments the CLI takes by position; every other one is `--kebab-case value`."""


def _fact_text(line: dict[str, Any]) -> str:
    left = line.get("subject", "·")  # · is the entity the line belongs to
    right = line.get("object", "·" if "subject" in line else "")
    text = f"{left} —{line['predicate']}→ {right}".rstrip()
    if "value" in line:
        text += f": {line['value']}"
    since, until = line.get("valid_from"), line.get("valid_to")
    if since and until:
        text += f"  [{since} … {until}]"
    elif since or until:
        text += f"  [since {since}]" if since else f"  [until {until}]"
    status = line.get("status", "current" if line.get("current", True) else "ended")
    if status == "future":
        text += "  (future)"
    elif status == "ended":
        text += f"  (superseded by {line['superseded_by']})" if "superseded_by" in line else "  (ended)"
    if "source" in line:
        text += f"  ({line['source']})"
    if "id" in line:
        text += f"  id={line['id']}"
    return text


def _card(console: Console, card: dict[str, Any], title: str) -> None:
    head = Text(title, style="bold cyan")
    head.append(f"  {card['name']}", style="bold")
    head.append(f"  ({card['type']})", style="dim")
    if "qualified_name" in card:
        head.append(f"  {card['qualified_name']}", style="dim")
    if "id" in card:
        head.append(f"  id={card['id']}", style="dim")
    console.print(head)
    if "aliases" in card:
        console.print(f"    aka: {', '.join(card['aliases'])}", style="dim", markup=False)
    if "location" in card:
        loc = card["location"]
        lines = loc.get("lines")
        console.print(f"    at {loc['path']}" + (f":{lines[0]}-{lines[1]}" if lines else ""), markup=False)
    if "summary" in card:
        console.print(f"    {card['summary']}", markup=False)
    if "match" in card:
        console.print("    match: " + ", ".join(f"{k}={v}" for k, v in card["match"].items()), style="dim")
    for line in card.get("facts", []):
        console.print("    • " + _fact_text(line), markup=False)


def envelope(console: Console, env: dict[str, Any]) -> None:
    scope = env["scope"]
    console.print(
        f"[bold]{env['op']}[/bold]  tenant={scope['tenant_id']} namespace={scope['namespace']}"
        + (f" graph={scope['graph_id']}" if scope["graph_id"] else "")
        + f"  as of {env['as_of']}",
        highlight=False,
    )
    if "subject" in env:
        _card(console, {**env["subject"], "facts": env.get("facts", [])}, "subject")
    for item in env.get("items", []):
        _card(console, item, f"#{item['rank']}")
    for node in env.get("nodes", []):
        depth = f"depth {node['depth']}" if "depth" in node else "node"
        _card(console, node, depth)
    for edge in env.get("edges", []):
        console.print("    • " + _fact_text(edge), markup=False)
    if env.get("related"):
        console.print("[bold]related (2 hops)[/bold]")
        for r in env["related"]:
            console.print(f"    {r['name']} ({r['type']}) via {r['via']} —{r['predicate']}", markup=False)
    if env.get("found") is False:
        console.print("no path found", style="yellow")
    for om in env.get("omissions", []):
        console.print(
            f"omitted: {omission(om)}", style="yellow", markup=False, highlight=False, soft_wrap=True
        )
    if env.get("follow_up"):  # one line whatever the width, so that the command can be copied whole
        next_step = follow_up(env["follow_up"], env["scope"])
        console.print(f"next: {next_step}", style="green", markup=False, highlight=False, soft_wrap=True)
    legs = env.get("legs")
    if legs:
        console.print("legs: " + ", ".join(f"{k}={v.get('status')}" for k, v in legs.items()), style="dim")
    if env.get("isolation", {}).get("rejected"):
        console.print(f"isolation: {env['isolation']['rejected']} foreign hits rejected", style="red")
    budget = env["budget"]
    total = env.get("timings_ms", {}).get("total", 0.0)
    console.print(
        f"budget: {budget['used_tokens']}/{budget['max_tokens']} tokens"
        + ("  (truncated)" if env.get("truncated") else "")
        + f"  total {total:.1f} ms",
        style="dim",
    )


def report(console: Console, title: str, data: dict[str, Any]) -> None:
    from rich.table import Table  # here: an answer's output needs no table

    table = Table(title=title, show_header=False, title_justify="left")
    for key, value in data.items():
        table.add_row(str(key), cell(value))
    console.print(table)


def cell(value: Any) -> str:
    """A report value as a person reads it: a list one item a line ("none" when empty), a mapping
    as `key: value` pairs, never Python's repr."""
    if isinstance(value, list | tuple):
        return "\n".join(cell(v) for v in value) if value else "none"
    if isinstance(value, dict):
        return "  ".join(f"{k}: {cell(v)}" for k, v in value.items())
    return str(value)


def candidates(console: Console, message: str, cands: list[dict[str, Any]]) -> None:
    from rich.table import Table

    console.print(message, style="yellow", markup=False)
    table = Table("identity to use", "name", "type", "path", "summary")
    for c in cands:
        table.add_row(c["identity"], c["name"], c["type"], c.get("path", ""), c.get("summary", ""))
    console.print(table)


_REASONS = {
    "budget": "to fit the token budget",
    "limit": "by a limit",
    "deadline": "when the deadline passed",
}


def omission(om: dict[str, Any]) -> str:
    """One omission record as a sentence: how many of what, of which entry, why, and the first names."""
    count = om.get("count")
    reason = om.get("reason", "")
    if om.get("what") == "summary":  # an entry's summary is shortened, not dropped
        return f"summary of {om.get('of', 'an entry')} shortened {_REASONS.get(reason, reason)}".rstrip()
    amount = "some" if count is None else f"at least {count}" if om.get("at_least") else str(count)
    what = str(om.get("what", "entries")).replace("_", " ")
    text = f"{amount} {what}"
    if om.get("unit"):
        text += f" ({om['unit']})"
    if om.get("of"):
        text += f" of {om['of']}"
    text += f" left out {_REASONS.get(reason, reason)}".rstrip()
    if reason == "limit" and "limit" in om:
        text += f" of {om['limit']}"
    if om.get("names"):
        text += ": " + ", ".join(om["names"]) + ("…" if count and count > len(om["names"]) else "")
    return text


def follow_up(text: str, scope: dict[str, str]) -> str:
    """The follow-up with each call it names (`op {json}`) written as the command line that runs it."""
    for op, args in calls_in(text):
        text = text.replace(f"`{op} {json.dumps(args, ensure_ascii=False)}`", command(op, args, scope))
    return text


def command(op: str, args: dict[str, Any], scope: dict[str, str]) -> str:
    positional: list[str] = []
    options: list[str] = []
    for key, value in args.items():
        if key in POSITIONAL:
            positional.insert(POSITIONAL[key], str(value))
        else:
            options += [f"--{key.replace('_', '-')}", str(value)]
    if scope.get("graph_id") and op in ("search", "symbol", "callers", "callees", "impact"):
        options += ["--graph", scope["graph_id"]]
    return shlex.join([*COMMAND, op, *positional, *options])
