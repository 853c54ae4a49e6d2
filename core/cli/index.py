"""`graphctx index`: index a repository (incrementally) with a progress bar and a summary; list the
repositories of a scope, re-index one by name, remove one.

    graphctx index PATH [--repo NAME] [--root DIR ...]     index or re-index a checkout
    graphctx index --repo NAME                             re-index from where it was indexed last
    graphctx index --list                                  the repositories in the scope
    graphctx index --remove NAME                           delete one repository's graph

Imported at the end of graphctx.cli, whose app this command joins."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from graphctx.cli import JsonFlag, _emit, _progress, _service, app, out
from graphctx.errors import InputError, NotFound
from graphctx.scope import shared_scope

if TYPE_CHECKING:
    from graphctx.code.report import IndexReport

ROWS = (
    ("repository", "repo"),
    ("import roots", "roots_text"),
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
    path: Annotated[Path | None, typer.Argument(help="Repository root to index.")] = None,
    graph: Annotated[
        str | None, typer.Option("--graph", help="Index into the shared code graph with this id.")
    ] = None,
    repo: Annotated[
        str | None,
        typer.Option(
            "--repo",
            help=(
                "Repository name (default: the one last indexed from this directory, else its project "
                "name, else its directory's)."
            ),
        ),
    ] = None,
    root: Annotated[
        list[str] | None,
        typer.Option("--root", help="Import root inside the repository (repeatable; replaces discovery)."),
    ] = None,
    exclude: Annotated[
        list[str] | None,
        typer.Option("--exclude", help="Gitignore-style pattern to skip (repeatable; adds to settings)."),
    ] = None,
    list_: Annotated[bool, typer.Option("--list", help="List the repositories in the scope.")] = False,
    remove: Annotated[str | None, typer.Option("--remove", help="Remove this repository.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Index the Python, Go and Markdown files of a repository; a re-run only redoes what changed.
    Each repository is its own unit: indexing one never touches the others in the scope."""
    with _service(ctx, as_json, mode="read" if list_ else "write") as (service, scope):
        target = shared_scope(graph) if graph else scope
        if list_:
            repos = service.repositories(target)
            _emit(as_json, {"scope": target.as_dict(), "repositories": repos}, lambda: _repos(repos))
            return
        if remove is not None:
            removed = service.remove_repository(target, remove)
            _emit(as_json, {"scope": target.as_dict(), **removed}, lambda: _removed(removed))
            return
        if path is None:
            if repo is None:
                raise InputError("give a repository PATH, --repo NAME, --list or --remove NAME", field="path")
            known = {r["repo"]: r for r in service.repositories(target)}
            if repo not in known:
                raise NotFound(
                    f"no repository named {repo!r} in this scope; index it from its path", name=repo
                )
            path = Path(str(known[repo]["root"]))
        with _progress(as_json) as bar:
            tasks: dict[str, Any] = {}

            def progress(phase: str, done: int, total: int) -> None:
                if phase not in tasks:
                    tasks[phase] = bar.add_task(phase, total=total or None)
                bar.update(tasks[phase], completed=done, total=total or None)

            report = service.index_repository(
                target, path, progress=progress, exclude=exclude or (), repo=repo, roots=root or ()
            )
    data = {"scope": target.as_dict(), **report.as_dict()}
    _emit(as_json, data, lambda: _summary(report, data))


def _repos(repos: list[dict[str, Any]]) -> None:
    from rich.table import Table

    table = Table("repository", "root", "import roots", "summary", title="repositories")
    for r in repos:
        table.add_row(str(r["repo"]), str(r["root"]), str(r["layout"]) or "-", str(r["summary"]))
    out.print(table)
    if not repos:
        out.print("no repository is indexed in this scope", style="yellow")


def _removed(removed: dict[str, Any]) -> None:
    out.print(f"removed {removed['repo']}: {removed['entities_deleted']} entities deleted")
    for line in removed.get("index_errors", [])[:5]:
        out.print(f"index error: {line} (run `graphctx reconcile`)", style="red", markup=False)


def _summary(report: "IndexReport", data: dict[str, Any]) -> None:
    from rich.table import Table

    data = {**data, "roots_text": "; ".join(report.roots) or "-"}
    table = Table("", "", title=f"indexed {report.root}", show_header=False)
    for label, key in ROWS:
        value = data.get(key)
        table.add_row(label, "-" if value is None else str(value))
    for language, counts in sorted(report.languages.items()):
        for key, value in counts.items():
            table.add_row(f"{language} {key.replace('_', ' ')}", str(value))
    out.print(table)
    for line in report.layout_notes[:5]:
        out.print(f"layout: {line}", style="yellow", markup=False)
    for line in report.parse_errors[:5]:
        out.print(f"parse error: {line}", style="yellow", markup=False)
    for line in report.index_errors[:5]:
        out.print(f"index error: {line} (run `graphctx reconcile`)", style="red", markup=False)
