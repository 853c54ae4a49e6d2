"""`graphctx index PATH`: index a repository (incrementally) with a progress bar and a summary.

Imported at the end of graphctx.cli, whose app this command joins."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from graphctx.cli import JsonFlag, _emit, _progress, _service, app, out
from graphctx.code.indexer import IndexReport
from graphctx.scope import shared_scope

ROWS = (
    ("files seen", "files_seen"),
    ("  new", "files_new"),
    ("  changed", "files_changed"),
    ("  unchanged", "files_unchanged"),
    ("  deleted", "files_deleted"),
    ("  re-resolved (unchanged, depend on a change)", "files_reresolved"),
    ("modules", "modules"),
    ("symbols", "symbols"),
    ("edges", "edges"),
    ("calls", "calls"),
    ("  resolved", "resolved_calls"),
    ("  unresolved", "unresolved_calls"),
    ("documents", "documents"),
    ("sections", "sections"),
    ("entities written", "entities_written"),
    ("entities deleted", "entities_deleted"),
    ("edges written", "facts_written"),
    ("parse errors", "parse_error_count"),
    ("files skipped", "skipped_count"),
    ("seconds", "seconds"),
)


@app.command()
def index(
    ctx: typer.Context,
    path: Annotated[Path, typer.Argument(help="Repository root to index.")],
    graph: Annotated[
        str | None, typer.Option("--graph", help="Index into the shared code graph with this id.")
    ] = None,
    exclude: Annotated[
        list[str] | None,
        typer.Option("--exclude", help="Gitignore-style pattern to skip (repeatable; adds to settings)."),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Index the Python and Markdown files of a repository; a re-run only redoes what changed."""
    with _service(ctx, as_json, mode="write") as (service, scope), _progress(as_json) as bar:
        target = shared_scope(graph) if graph else scope
        tasks: dict[str, Any] = {}

        def progress(phase: str, done: int, total: int) -> None:
            if phase not in tasks:
                tasks[phase] = bar.add_task(phase, total=total or None)
            bar.update(tasks[phase], completed=done, total=total or None)

        report = service.index_repository(target, path, progress=progress, exclude=exclude or ())
    data = {"scope": target.as_dict(), **report.as_dict()}
    _emit(as_json, data, lambda: _summary(report, data))


def _summary(report: IndexReport, data: dict[str, Any]) -> None:
    table = Table("", "", title=f"indexed {report.root}", show_header=False)
    for label, key in ROWS:
        value = data.get(key)
        table.add_row(label, "-" if value is None else str(value))
    out.print(table)
    for line in report.parse_errors[:5]:
        out.print(f"parse error: {line}", style="yellow", markup=False)
    for line in report.index_errors[:5]:
        out.print(f"index error: {line} (run `graphctx reconcile`)", style="red", markup=False)
