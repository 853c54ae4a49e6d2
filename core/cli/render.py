"""Human-readable rendering of envelopes and reports (the CLI's default output)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text


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
        console.print(f"omitted: {om}", style="yellow", markup=False)
    if env.get("follow_up"):
        console.print(f"next: {env['follow_up']}", style="green", markup=False)
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
    table = Table(title=title, show_header=False, title_justify="left")
    for key, value in data.items():
        table.add_row(str(key), str(value))
    console.print(table)


def candidates(console: Console, message: str, cands: list[dict[str, Any]]) -> None:
    console.print(message, style="yellow", markup=False)
    table = Table("identity to use", "name", "type", "path", "summary")
    for c in cands:
        table.add_row(c["identity"], c["name"], c["type"], c.get("path", ""), c.get("summary", ""))
    console.print(table)
