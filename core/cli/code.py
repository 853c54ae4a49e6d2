"""`graphctx search | symbol | callers | callees | impact`: the code operations on the command line.

The local CLI acts as the operator: `--graph G` reads the shared code graph G directly. Imported at
the end of graphctx.cli, whose app these commands join."""

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from graphctx import bounds
from graphctx.cli import Ids, JsonFlag, Tokens, _fail, answer, app, render
from graphctx.errors import BoundExceeded, GraphctxError, InputError

if TYPE_CHECKING:
    from rich.console import Console

DEFAULT_LIMIT = bounds.PER_DIRECTION_LIMIT
"""graphctx.code.ops.DEFAULT_LIMIT, named here so that `--help` does not import the code operations."""

Graph = Annotated[
    str | None, typer.Option("--graph", help="Read the shared code graph with this id instead of the tenant.")
]
Limit = Annotated[int, typer.Option(help="Most entries per direction (1-50).")]
Depth = Annotated[int, typer.Option(help="Hops (1-2).")]
Name = Annotated[str, typer.Argument(help="Qualified name, path::name, id, or an unambiguous name.")]


def _answer(ctx: typer.Context, as_json: bool, graph: str | None, op: str, **payload: Any) -> None:
    """Run the operation as HTTP and MCP do (same request model, same handler); print its envelope."""
    answer(ctx, as_json, op, payload, code_envelope, graph=graph)


@app.command()
def search(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="Words, a name, or an identifier.")],
    graph: Graph = None,
    max_tokens: Tokens = None,
    ids: Ids = False,
    as_json: JsonFlag = False,
) -> None:
    """Code and docs for a query: exact identifiers first, then BM25 + dense."""
    _answer(ctx, as_json, graph, "search", query=query, max_tokens=max_tokens, include_ids=ids)


@app.command()
def symbol(
    ctx: typer.Context,
    name: Name,
    limit: Limit = DEFAULT_LIMIT,
    graph: Graph = None,
    max_tokens: Tokens = None,
    ids: Ids = False,
    as_json: JsonFlag = False,
) -> None:
    """The definition card: signature, file:line, summary, callers, callees and tests."""
    _answer(ctx, as_json, graph, "symbol", name=name, limit=limit, max_tokens=max_tokens, include_ids=ids)


@app.command()
def callers(
    ctx: typer.Context,
    name: Name,
    depth: Depth = 1,
    limit: Limit = DEFAULT_LIMIT,
    graph: Graph = None,
    max_tokens: Tokens = None,
    ids: Ids = False,
    as_json: JsonFlag = False,
) -> None:
    """Who calls a symbol, with the file:line of every call site."""
    _answer(
        ctx,
        as_json,
        graph,
        "callers",
        name=name,
        depth=depth,
        limit=limit,
        max_tokens=max_tokens,
        include_ids=ids,
    )


@app.command()
def callees(
    ctx: typer.Context,
    name: Name,
    depth: Depth = 1,
    limit: Limit = DEFAULT_LIMIT,
    graph: Graph = None,
    max_tokens: Tokens = None,
    ids: Ids = False,
    as_json: JsonFlag = False,
) -> None:
    """What a symbol calls, with where each callee is defined."""
    _answer(
        ctx,
        as_json,
        graph,
        "callees",
        name=name,
        depth=depth,
        limit=limit,
        max_tokens=max_tokens,
        include_ids=ids,
    )


@app.command()
def impact(
    ctx: typer.Context,
    files: Annotated[list[str] | None, typer.Argument(help="Changed files (repository-relative).")] = None,
    diff: Annotated[
        Path | None, typer.Option("--diff", help="A unified diff to read changed lines from ('-' = stdin).")
    ] = None,
    depth: Depth = 1,
    limit: Limit = DEFAULT_LIMIT,
    graph: Graph = None,
    repo: Annotated[
        str | None,
        typer.Option("--repo", help="Only this indexed repository (paths are repository-relative)."),
    ] = None,
    max_tokens: Tokens = None,
    ids: Ids = False,
    as_json: JsonFlag = False,
) -> None:
    """What a change touches: affected symbols, their callers and the tests to run."""
    try:
        text = _read_diff(diff) if diff is not None else None
    except GraphctxError as exc:
        _fail(exc, as_json)
    except OSError as exc:
        _fail(GraphctxError(f"{exc.strerror or exc}: {exc.filename or ''}".strip()), as_json)
    _answer(
        ctx, as_json, graph, "impact", files=files or [], diff=text, depth=depth, limit=limit,
        max_tokens=max_tokens, include_ids=ids, repo=repo,
    )  # fmt: skip


def _read_diff(source: Path) -> str:
    """The diff's text, read no further than one byte over the bound (never buffered whole)."""
    limit = bounds.DIFF_BYTES
    if str(source) == "-":
        data = sys.stdin.buffer.read(limit + 1)
        size = len(data)  # at least; stdin is not read past the bound
    else:
        with source.open("rb") as fh:
            data = fh.read(limit + 1)
            size = max(len(data), os.fstat(fh.fileno()).st_size)
    if len(data) > limit:
        raise BoundExceeded("diff", limit, size)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"the diff is not UTF-8 text (byte {exc.start})", field="diff") from None


# -- human output ---------------------------------------------------------------------------------


def _where(card: dict[str, Any]) -> str:
    if "at" in card:
        return str(card["at"])
    loc = card.get("location")  # search items carry the recall-style location
    if not loc:
        return ""
    lines = loc.get("lines")
    return f"{loc['path']}:{lines[0]}-{lines[1]}" if lines else loc["path"]


def _path(card: dict[str, Any]) -> str:
    where = _where(card)
    head, sep, span = where.rpartition(":")
    return head if sep and "-" in span else where


def _entry(console: "Console", card: dict[str, Any], indent: str = "  ", sites_in: str = "") -> None:
    """One card; `sites_in`: the file its call lines are in (the caller's, or the subject's)."""
    from rich.text import Text

    line = Text(indent)
    line.append(card.get("qualified_name", card["name"]), style="bold")
    if "type" in card:
        line.append(f"  ({card['type']})", style="dim")
    if card.get("test"):
        line.append("  test", style="green")
    if _where(card):
        line.append(f"  {_where(card)}")
    if "depth" in card:
        line.append(f"  depth {card['depth']}", style="dim")
    if "id" in card:
        line.append(f"  id={card['id']}", style="dim")
    console.print(line)
    if "def_line" in card:
        console.print(f"{indent}    def at line {card['def_line']}", style="dim", markup=False)
    if "signature" in card:
        console.print(f"{indent}    {card['signature']}", markup=False, highlight=False)
    if "summary" in card:
        console.print(f"{indent}    {card['summary']}", style="dim", markup=False, highlight=False)
    if card.get("via"):
        console.print(f"{indent}    via {', '.join(card['via'])}", style="dim", markup=False)
    if card.get("lines"):
        more = f" (+{card['more_lines']} more)" if card.get("more_lines") else ""
        where = sites_in or _path(card)
        sites = ", ".join(f"{where}:{line}" for line in card["lines"])
        console.print(f"{indent}    at {sites}{more}", markup=False, highlight=False)
    if card.get("run"):
        console.print(f"{indent}    run {card['run']}", markup=False, highlight=False)


def code_envelope(console: "Console", env: dict[str, Any]) -> None:
    from rich.text import Text

    """Subject, then each section with its counts; the shared footer (omissions, budget) after."""
    if "subject" in env:
        console.print(Text("subject", style="bold cyan"))
        _entry(console, env["subject"])
    for item in env.get("items", []):
        console.print(Text(f"#{item['rank']}", style="bold cyan"), end="")
        _entry(console, item, indent=" ")
    for path in env.get("unknown", []):
        console.print(f"not in the graph: {path['path']}", style="yellow", markup=False)
    counts = env.get("counts", {})
    for key in ("affected", "callers", "callees", "tests"):
        if key not in env:
            continue
        total = counts.get(key, len(env[key]))
        console.print(Text(f"{key} ({len(env[key])} of {total})", style="bold cyan"))
        # a callee's call lines are in the subject's file; the others' in their own
        subject_file = _path(env["subject"]) if key == "callees" and "subject" in env else ""
        for card in env[key]:
            _entry(console, card, sites_in=subject_file if card.get("depth", 1) == 1 else "")
    render.envelope(console, {k: v for k, v in env.items() if k not in ("subject", "items")})
