"""The `graphctx` command line: human output by default, `--json` for machines."""

# No `from __future__ import annotations` here nor in the command modules (certify, code, config, index):
# typer evaluates each string annotation of a command four times while it builds the command table, at
# every start; written as objects, each is evaluated once. Names imported for type checking only are
# quoted.

import importlib
import logging
import os
import shlex
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager, nullcontext
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer

from graphctx import __version__
from graphctx.errors import AmbiguousName, GraphctxError, InputError, NotFound
from graphctx.garbage import fewer_collections, frozen_for_exit
from graphctx.scope import Scope, shared_scope

if TYPE_CHECKING:  # imported where used, so that `--help` and `--version` start fast
    from types import ModuleType

    from rich.console import Console
    from rich.progress import Progress

    from graphctx.auth import Principal
    from graphctx.datadir import Mode
    from graphctx.kernel.ports import KeyStore
    from graphctx.service import ContextService
    from graphctx.settings import Settings

log = logging.getLogger("graphctx.cli")

_TIME_FORMATS = ["%Y-%m-%d", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M:%S%z", "%Y-%m-%dT%H:%M:%S.%f%z"]

app = typer.Typer(
    name="graphctx",
    help="Ranked, sourced, tenant-isolated context for AI agents out of a code-and-memory graph.",
    epilog="Settings: a flag, else its GRAPHCTX_* environment variable, else graphctx.toml in the data "
    "directory, else $XDG_CONFIG_HOME/graphctx/graphctx.toml, else the default. `graphctx config` shows "
    "each effective setting and where it came from.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    # click's plain help: rich's help panels import markdown-it and pygments, a third of a second
    # before `--help` prints anything; answers and reports still render with rich
    rich_markup_mode=None,
)


PIPED_WIDTH = 200
"""Columns of human output written to a pipe or a file (unless $COLUMNS says otherwise): a fixed width,
so that what a script or a log receives does not depend on the terminal that started it. On a
terminal, output follows the terminal's width."""


class _LazyConsole:
    """A rich Console made on first use, so that `--help` and `--version` never import rich."""

    def __init__(self, **options: Any) -> None:
        object.__setattr__(self, "_options", options)
        object.__setattr__(self, "_console", None)

    def _made(self) -> "Console":
        if self._console is None:
            from rich.console import Console

            made = Console(**self._options)
            # rich takes the width of any standard stream that is a terminal (80 when none is):
            # `graphctx config | less` would wrap at the terminal's width, a CI log at 80
            if not made.is_terminal and not os.environ.get("COLUMNS", "").isdigit():
                # a fixed size: rich would otherwise ask every standard stream for it at each print
                made.size = (PIPED_WIDTH, made.height)
            if made.color_system is None:  # no styles are written: highlighting would colour nothing
                from rich.highlighter import NullHighlighter

                made.highlighter = NullHighlighter()
            object.__setattr__(self, "_console", made)
        console: Console = self._console
        return console

    def __getattr__(self, name: str) -> Any:
        return getattr(self._made(), name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._made(), name, value)


class _LazyModule:
    """A module imported when one of its attributes is first used (`--help` needs none of them)."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self._name), attr)


out = cast("Console", _LazyConsole())
err = cast("Console", _LazyConsole(stderr=True, soft_wrap=True))  # error lines stay whole for grep and logs
render = cast("ModuleType", _LazyModule("graphctx.cli.render"))

JsonFlag = Annotated[bool, typer.Option("--json", help="Print the canonical JSON answer.")]
Tokens = Annotated[int | None, typer.Option("--max-tokens", help="Token budget (normalised to 256-20000).")]
Ids = Annotated[bool, typer.Option("--ids", help="Include opaque full ids.")]
AsOf = Annotated[
    datetime | None,
    typer.Option("--as-of", help="The instant to answer for (ISO-8601; default now).", formats=_TIME_FORMATS),
]


class Via(StrEnum):
    """How a read command answers: through a running `graphctx serve` on the data directory when one
    answers (auto), only through it (serve), or always by opening the stores (direct)."""

    auto = "auto"
    serve = "serve"
    direct = "direct"


class Context:
    def __init__(
        self, data_dir: Path | None, tenant: str | None, namespace: str | None, via: Via = Via.auto
    ) -> None:
        self.via = via
        overrides: dict[str, Any] = {}
        if data_dir is not None:
            overrides["data_dir"] = data_dir
        if tenant is not None:
            overrides["tenant_id"] = tenant
        if namespace is not None:
            overrides["namespace"] = namespace
        self.overrides = overrides
        flags = {"data_dir": "--data-dir", "tenant_id": "--tenant", "namespace": "--namespace"}
        self.command = ["graphctx", *(x for k, v in overrides.items() for x in (flags[k], str(v)))]
        """How a follow-up command starts: the program and the global options this one was given."""

    def settings(self, **extra: Any) -> "Settings":
        from pydantic import ValidationError

        from graphctx.errors import ConfigError
        from graphctx.settings import Settings, sources

        overrides = {**self.overrides, **extra}
        try:
            settings = Settings(**overrides)
        except ValidationError as exc:
            first = exc.errors()[0]
            name = str(first["loc"][0]) if first["loc"] else "settings"
            origin = sources(overrides).get(name, "the settings").replace("override", "a flag")
            raise ConfigError(
                f"setting {name} (from {origin}): {first['msg']}", setting=name, source=origin
            ) from None
        log.info(
            "data directory %s; graph %s, lexical %s, vectors %s, embedder %s",
            settings.data_dir, settings.graph_backend, settings.lexical_backend, settings.vector_backend,
            settings.embedder,
        )  # fmt: skip
        return settings


def _env(name: str) -> str:
    """Help text naming the environment variable that sets the same thing."""
    return f"[env var: GRAPHCTX_{name}]"


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"graphctx {__version__}\n")
        raise typer.Exit()


_QUIET = [False]
"""--quiet of this invocation: progress bars and notes off (errors and answers still print)."""


class _Stderr(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever sys.stderr is when a record is emitted (a test runner swaps it)."""

    @property
    def stream(self) -> Any:
        return sys.stderr

    @stream.setter
    def stream(self, value: Any) -> None:
        pass


def _logging(verbose: int, quiet: bool) -> None:
    """Warnings by default; -v graphctx's info, -vv its debug, -vvv every library's debug; -q errors
    only. Logs go to stderr, never into an answer on stdout."""
    root = logging.getLogger()
    if not any(isinstance(h, _Stderr) for h in root.handlers):
        handler = _Stderr()
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
    root.setLevel(logging.ERROR if quiet else logging.DEBUG if verbose >= 3 else logging.WARNING)
    level = {0: logging.NOTSET, 1: logging.INFO}.get(verbose, logging.DEBUG)
    logging.getLogger("graphctx").setLevel(logging.ERROR if quiet else level)


@app.callback()
def _root(
    ctx: typer.Context,
    data_dir: Annotated[Path | None, typer.Option(help=f"Data directory {_env('DATA_DIR')}.")] = None,
    tenant: Annotated[str | None, typer.Option(help=f"Tenant {_env('TENANT_ID')}.")] = None,
    namespace: Annotated[str | None, typer.Option(help=f"Namespace {_env('NAMESPACE')}.")] = None,
    verbose: Annotated[
        int, typer.Option("--verbose", "-v", count=True, help="More log lines on stderr (-vv, -vvv: more).")
    ] = 0,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="Only errors on stderr: no progress bars, no notes.")
    ] = False,
    via: Annotated[
        Via,
        typer.Option(
            envvar="GRAPHCTX_CLI_VIA",
            help="Read commands: through a running `graphctx serve` on the data directory when one "
            "answers, else by opening the stores (auto); only through serve (serve); never (direct).",
        ),
    ] = Via.auto,
    version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    # every file this process creates is private (0600, directories 0700), whatever the caller's umask
    from graphctx.locations import PRIVATE_UMASK

    os.umask(PRIVATE_UMASK)
    _logging(verbose, quiet)
    _QUIET[0] = quiet
    ctx.obj = Context(data_dir, tenant, namespace, via)


@contextmanager
def _service(
    ctx: typer.Context, as_json: bool, *, mode: "Mode", **extra: Any
) -> "Iterator[tuple[ContextService, Scope]]":
    """Open the service to read or to write, map typed errors to clear messages and exit codes.

    Read commands open every store read-only: they never create the data directory and work while
    `graphctx serve` (or another writer) holds it."""
    from graphctx.service import ContextService

    try:
        settings = ctx.obj.settings(**extra)
        scope = Scope(settings.tenant_id, settings.namespace)
        with ContextService.open(settings, mode=mode) as service:
            yield service, scope
    except GraphctxError as exc:
        _fail(exc, as_json)
    except OSError as exc:
        _fail(GraphctxError(f"{exc.strerror or exc}: {exc.filename or ''}".strip()), as_json)


def _fail(exc: GraphctxError, as_json: bool) -> None:
    if as_json:
        out.print_json(dumps({"error": exc.to_dict(full=True)}))
    elif isinstance(exc, AmbiguousName):
        render.candidates(err, exc.message, exc.candidates)
    else:
        err.print(f"error [{exc.code}]: {exc.message}", style="red", markup=False, highlight=False)
    raise typer.Exit(exc.exit_status)


def dumps(data: Any) -> str:
    """The canonical JSON every transport returns (graphctx.envelope.canonical, imported when needed)."""
    from graphctx.envelope import canonical

    return canonical(data)


def _emit(as_json: bool, data: dict[str, Any], human: Callable[[], None]) -> None:
    if as_json:
        sys.stdout.write(dumps(data) + "\n")
    else:
        human()


@app.command()
def recall(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="What to recall, in words or identifiers.")],
    max_tokens: Tokens = None,
    depth: Annotated[int, typer.Option(help="Expansion hops (1-2).")] = 1,
    as_of: AsOf = None,
    ids: Ids = False,
    as_json: JsonFlag = False,
) -> None:
    """Ranked memory and code context for a query, as an evidence envelope."""
    payload = {"query": query, "max_tokens": max_tokens, "depth": depth, "include_ids": ids, "as_of": as_of}
    answer(ctx, as_json, "recall", payload, _envelope)


@app.command()
def explain(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="Id, qualified name, path::name, or an unambiguous name.")],
    max_tokens: Tokens = None,
    history: Annotated[bool, typer.Option(help="Include facts that are no longer valid.")] = True,
    as_of: AsOf = None,
    ids: Ids = False,
    as_json: JsonFlag = False,
) -> None:
    """Everything remembered about one entity: what is valid at --as-of (default now), then its
    timeline (ended facts with what superseded them, future facts)."""
    payload = {"name": name, "max_tokens": max_tokens, "include_history": history, "include_ids": ids,
               "as_of": as_of}  # fmt: skip
    answer(ctx, as_json, "explain", payload, _envelope)


@app.command()
def neighbourhood(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="The entity to start from.")],
    depth: Annotated[int, typer.Option(help="Hops (1-2).")] = 1,
    edge: Annotated[list[str] | None, typer.Option(help="Edge type to follow (repeatable).")] = None,
    direction: Annotated[str, typer.Option(help="out, in or both.")] = "both",
    limit: Annotated[int, typer.Option(help="Most nodes to return.")] = 50,
    max_tokens: Tokens = None,
    ids: Ids = False,
    as_json: JsonFlag = False,
) -> None:
    """The entities around one entity, bounded."""
    payload = {"name": name, "depth": depth, "edge_types": edge or [], "direction": direction, "limit": limit,
               "max_tokens": max_tokens, "include_ids": ids}  # fmt: skip
    answer(ctx, as_json, "neighbourhood", payload, _envelope)


@app.command()
def path(
    ctx: typer.Context,
    source: Annotated[str, typer.Argument(help="Start entity.")],
    target: Annotated[str, typer.Argument(help="End entity.")],
    max_depth: Annotated[int, typer.Option(help="Most hops (1-4).")] = 4,
    edge: Annotated[list[str] | None, typer.Option(help="Edge type to follow (repeatable).")] = None,
    max_tokens: Tokens = None,
    ids: Ids = False,
    as_json: JsonFlag = False,
) -> None:
    """The shortest path between two entities."""
    payload = {"source": source, "target": target, "max_depth": max_depth, "edge_types": edge or [],
               "max_tokens": max_tokens, "include_ids": ids}  # fmt: skip
    answer(ctx, as_json, "path", payload, _envelope)


def _envelope(console: "Console", env: dict[str, Any]) -> None:
    render.envelope(console, env)  # looked up here: a --json answer never imports rich


def answer(
    ctx: typer.Context,
    as_json: bool,
    op: str,
    payload: dict[str, Any],
    human: "Callable[[Console, dict[str, Any]], None]",
    graph: str | None = None,
) -> None:
    """A read operation exactly as HTTP and MCP run it: the same request model (so an out-of-range
    depth or limit is the same `invalid_input`, never clamped), then the same handler."""
    served = _through_serve(ctx, as_json, op, payload, graph)
    if served is not None:
        if as_json:
            sys.stdout.write(served + "\n")  # serve's canonical JSON, as `dumps` writes it here
            return
        import json

        env = json.loads(served)
    else:
        from graphctx import api

        with _service(ctx, as_json, mode="read") as (service, scope):
            env = api.answer(service, shared_scope(graph) if graph else scope, op, payload)
    if not as_json:
        render.COMMAND[:] = ctx.obj.command
    _emit(as_json, env, lambda: human(out, env))


_SERVE_TROUBLE = {"settings_differ", "unauthenticated", "over_capacity", "internal_error", "request_timeout"}
"""Errors of serve itself rather than of the read: the read is answered directly instead."""


def _through_serve(
    ctx: typer.Context, as_json: bool, op: str, payload: dict[str, Any], graph: str | None
) -> str | None:
    """The answer of a running `graphctx serve` on this data directory (graphctx.transports.local), or
    None to answer by opening the stores. An error of the read itself is reported as a direct call
    reports it; with --via serve, no serve to answer is `serve_unavailable` (exit 69)."""
    if ctx.obj.via is Via.direct:
        return None
    from graphctx.transports import local

    if op not in local.READS:
        return None
    import json

    from graphctx.errors import ServeUnavailable, from_dict

    def direct(reason: str) -> str | None:
        if ctx.obj.via is Via.serve:
            _fail(ServeUnavailable(f"--via serve: {reason}"), as_json)
        log.info("answering directly (opening the stores): %s", reason)
        return None

    data_dir = local.data_dir_of(ctx.obj.overrides.get("data_dir"), os.environ)
    advert = local.find(data_dir, local.fingerprint(data_dir, os.environ))
    if isinstance(advert, str):
        return direct(advert)
    scope = local.scope_of(ctx.obj.overrides, os.environ)
    body = {"fingerprint": advert.fingerprint, "scope": scope, "graph": graph, "request": payload}
    try:
        status, raw = local.call(advert, op, body)
        text = raw.decode("utf-8")
        error = json.loads(text).get("error") if status != 200 else None
    except local.Unreachable as exc:
        return direct(f"the serve advertised ({advert.where()}) did not answer: {exc}")
    except (UnicodeDecodeError, ValueError, AttributeError):
        return direct(f"the serve advertised ({advert.where()}) sent an answer that is not JSON")
    if status == 200:
        log.info("answered by graphctx serve (%s)", advert.where())
        return text
    if not isinstance(error, dict) or error.get("code") in _SERVE_TROUBLE:
        code = error.get("code") if isinstance(error, dict) else f"HTTP {status}"
        return direct(f"the serve advertised ({advert.where()}) refused the read: {code}")
    log.info("answered by graphctx serve (%s) with an error", advert.where())
    _fail(from_dict(error), as_json)
    return None


def _count_lines(path: Path) -> int:
    """Non-blank lines, none held in memory whole (a huge or binary file has no need to be)."""
    from graphctx.records import bounded_lines

    with path.open("rb") as fh:
        return sum(1 for line in bounded_lines(fh) if line.strip())


@app.command()
def remember(
    ctx: typer.Context,
    file: Annotated[
        Path | None, typer.Option("--file", "-f", help="JSONL of entities and facts ('-' = stdin).")
    ] = None,
    entity: Annotated[
        list[str] | None, typer.Option(help="One entity as a JSON object (repeatable).")
    ] = None,
    fact: Annotated[list[str] | None, typer.Option(help="One fact as a JSON object (repeatable).")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Store entities and facts (all or nothing; a --file is checked whole, then written in batches)."""
    with _service(ctx, as_json, mode="write") as (service, scope):
        if file is not None:
            report = _load(service, scope, file, as_json)
        else:
            import json

            try:
                ents = [json.loads(e) for e in entity or []]
                facts = [json.loads(f) for f in fact or []]
            except json.JSONDecodeError as exc:
                raise InputError(f"--entity/--fact must be JSON objects ({exc.msg})") from None
            if not ents and not facts:
                raise InputError("nothing to remember: give --file, --entity or --fact")
            report = service.remember(scope, ents, facts)
    _emit(as_json, report, lambda: render.report(out, "remembered", _flat(report)))
    if report.get("interrupted"):
        err.print(
            f"interrupted: {report['written']} of {report['records']} records written, in whole batches; the "
            "graph and the indexes agree. Run the same command again to finish: records already written "
            "are left unchanged.",
            style="yellow",
            markup=False,
            highlight=False,
        )
        raise typer.Exit(130)


def _load(service: "ContextService", scope: Scope, file: Path, as_json: bool) -> dict[str, Any]:
    from graphctx.records import bounded_lines

    with _stop_on_interrupt() as stop:
        if str(file) == "-":
            return service.remember_jsonl(scope, bounded_lines(sys.stdin.buffer), stop=stop)
        total = _count_lines(file)
        with file.open("rb") as fh, _progress(as_json) as bar:
            task = bar.add_task(f"loading {file.name}", total=total)
            return service.remember_jsonl(
                scope, bounded_lines(fh), progress=lambda n: bar.advance(task, n), stop=stop
            )


@contextmanager
def _stop_on_interrupt() -> Iterator[Callable[[], bool]]:
    """The first Ctrl-C (or SIGTERM) asks the load to stop at the next batch boundary; a second one
    interrupts at once (the journal completes the batch in flight at the next write or start)."""
    asked: list[int] = []

    def handler(signum: int, frame: object) -> None:
        if asked:
            raise KeyboardInterrupt
        asked.append(signum)
        err.print("stopping after the current batch (Ctrl-C again to stop now)", style="yellow", markup=False)

    try:
        previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    except ValueError:  # not the main thread (embedded use): no handler, never asked to stop
        yield lambda: False
        return
    try:
        yield lambda: bool(asked)
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


@contextmanager
def _progress(quiet: bool) -> "Iterator[Progress]":
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        disable=quiet or _QUIET[0] or not err.is_terminal,
    )
    with bar:
        yield bar


@app.command()
def forget(
    ctx: typer.Context,
    entity: Annotated[
        list[str] | None, typer.Option(help="Entity id to delete, with its facts (repeatable).")
    ] = None,
    fact: Annotated[
        list[str] | None, typer.Option(help="Fact id to invalidate; the row is kept (repeatable).")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Delete entities or invalidate facts (all or nothing)."""
    with _service(ctx, as_json, mode="write") as (service, scope):
        if not entity and not fact:
            raise InputError("nothing to forget: give --entity or --fact")
        report = service.forget(scope, entity or [], fact or [])
    _emit(as_json, report, lambda: render.report(out, "forgotten", report))


@app.command()
def reconcile(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """Repair the indexes from the graph: replay pending work, then compare by id and content hash."""
    with _service(ctx, as_json, mode="write") as (service, scope), _progress(as_json) as bar:
        task = bar.add_task("comparing", total=None)
        report = service.reconcile(scope, progress=lambda n: bar.advance(task, n))
    _emit(as_json, report, lambda: render.report(out, "reconciled", report))


@app.command()
def status(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """What the scope holds and how the stores are doing (pending work, who writes the directory)."""
    from graphctx.datadir import exposure_warning

    with _service(ctx, as_json, mode="read") as (service, scope):
        report = service.status(scope)
        warning = exposure_warning(service.settings.data_dir) if report["exposed"] else None
    if warning:
        err.print(warning, style="bold red", markup=False, highlight=False)
    _emit(as_json, report, lambda: render.report(out, "status", _flat(report)))


def _flat(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict) and value:
            flat.update(_flat(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


DEMO_QUERIES = ("who owns checkout-api", "payment latency incident", "why did we move off Redis")


@app.command()
def demo(
    ctx: typer.Context,
    data_dir: Annotated[
        Path | None, typer.Option(help="Fresh directory for the demo, kept (default: a new temp dir).")
    ] = None,
    keep: Annotated[
        bool, typer.Option("--keep", help="Keep the temporary data directory to explore it afterwards.")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Load the bundled sample memory into a fresh data directory and run a few recalls, saying which
    backends answered. A temporary directory is removed at the end unless --keep."""
    import shutil
    import tempfile

    from graphctx.demo import sample_path

    temporary = data_dir is None
    target = data_dir or Path(tempfile.mkdtemp(prefix="graphctx-demo-"))
    if not temporary and target.exists() and any(target.iterdir()):
        _fail(InputError(f"{target} is not empty; the demo needs a fresh data directory"), as_json)
    kept = keep or not temporary
    scope_flags = ["--data-dir", str(target), "--tenant", "demo", "--namespace", "default"]
    answers = []
    try:
        with _service(ctx, as_json, mode="write", data_dir=target, tenant_id="demo", namespace="default") as (
            service,
            scope,
        ):
            backends = service.stores.describe()
            if not as_json:
                fate = "kept" if kept else "temporary, removed at the end (--keep keeps it)"
                out.print(
                    f"demo data directory: {target} ({fate})", markup=False, highlight=False, soft_wrap=True
                )
                used = ", ".join(f"{k} {v}" for k, v in backends.items())
                out.print(f"backends: {used}", markup=False, highlight=False, soft_wrap=True)
            with sample_path().open(encoding="utf-8") as fh, _progress(as_json) as bar:
                task = bar.add_task("loading sample memory", total=_count_lines(sample_path()))
                loaded = service.remember_jsonl(scope, fh, progress=lambda n: bar.advance(task, n))
            if not as_json:
                render.COMMAND[:] = ["graphctx", *scope_flags]
                render.report(
                    out, "loaded", _flat({"entities": loaded["entities"], "facts": loaded["facts"]})
                )
            for query in DEMO_QUERIES:
                env = service.recall(scope, query)
                answers.append({"query": query, "answer": env})
                if not as_json:
                    out.rule(f"recall: {query}")
                    render.envelope(out, env)
    finally:
        if not kept:
            shutil.rmtree(target, ignore_errors=True)
    if as_json:
        report = {"data_dir": str(target), "kept": kept, "backends": backends, "recalls": answers}
        sys.stdout.write(dumps(report) + "\n")
    elif kept:
        try_it = shlex.join(["graphctx", *scope_flags, "explain", "checkout-api"])
        out.print(f"\nTry: {try_it}", highlight=False, markup=False, soft_wrap=True)
    else:
        out.print(
            f"\nRemoved {target}. To explore the sample afterwards: graphctx demo --keep",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )


@app.command()
def serve(
    ctx: typer.Context,
    host: Annotated[str | None, typer.Option(help=f"Address to listen on {_env('HTTP_HOST')}.")] = None,
    port: Annotated[int | None, typer.Option(help=f"Port to listen on {_env('HTTP_PORT')}.")] = None,
    log_level: Annotated[str, typer.Option(help="uvicorn log level.")] = "info",
    workers: Annotated[
        int | None,
        typer.Option(
            min=1,
            max=64,
            help="Reader processes serving requests beside one writer process (default: the core count); "
            "1 serves everything from this one process.",
        ),
    ] = None,
) -> None:
    """Serve the HTTP API (POST /v1/<operation>, API keys, OpenAPI at /docs) and MCP at /mcp on the
    configured stores, under the limits of GRAPHCTX_HTTP_* and GRAPHCTX_MCP_* (docs/operations.md)."""
    from graphctx.arenas import limit_for_serving

    limit_for_serving(os.environ)  # first: before the serving threads and the reader processes start
    from graphctx import registry
    from graphctx.service import ContextService
    from graphctx.transports import server
    from graphctx.transports.local import LocalAccess, advertise, withdraw

    overrides: dict[str, Any] = {}
    if host is not None:
        overrides["http_host"] = host
    if port is not None:
        overrides["http_port"] = port
    count = workers if workers is not None else _cores()
    if count > 1:
        from graphctx.transports.workers import serve_workers

        try:
            settings = ctx.obj.settings(**overrides)
            serve_workers(
                settings,
                count,
                log_level=log_level,
                announce=lambda line: err.print(line, markup=False, highlight=False),
            )
        except GraphctxError as exc:
            _fail(exc, False)
        except OSError as exc:
            _fail(GraphctxError(f"{exc.strerror or exc}: {exc.filename or ''}".strip()), False)
        err.print("graphctx: stopped", markup=False, highlight=False)
        return
    with ExitStack() as stack:
        try:
            settings = ctx.obj.settings(**overrides)
            # a writer: takes the data directory's lock and completes what a crash left first
            service = stack.enter_context(ContextService.open(settings))
            keys: KeyStore = registry.factory("keys", settings.key_store_backend)(settings)
            stack.callback(keys.close)
        except GraphctxError as exc:
            _fail(exc, False)
        except OSError as exc:
            _fail(GraphctxError(f"{exc.strerror or exc}: {exc.filename or ''}".strip()), False)
        # only the writer advertises itself to the CLI: one per data directory
        access = LocalAccess.new(settings.data_dir, os.environ) if service.stores.mode == "write" else None
        app_ = server.build_app(service, keys, settings, local_access=access)
        _warn_exposed(settings.data_dir)
        err.print(
            f"graphctx: serving HTTP on http://{settings.http_host}:{settings.http_port}/v1 and MCP on "
            f"{server.MCP_PATH} (data: {settings.data_dir}; graph {settings.graph_backend}, vectors "
            f"{settings.vector_backend})",
            markup=False,
            highlight=False,
        )
        if access is not None:
            stack.callback(withdraw, settings.data_dir, access)
        server.serve(
            app_,
            settings,
            log_level=log_level,
            on_listening=(lambda h, p: advertise(settings, h, p, access)) if access else None,
        )
    err.print("graphctx: stopped", markup=False, highlight=False)


def _warn_exposed(data_dir: Path) -> None:
    from graphctx.datadir import exposure_warning

    warning = exposure_warning(data_dir)
    if warning:
        err.print(warning, style="bold red", markup=False, highlight=False)


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


keys_app = typer.Typer(
    help="Create, list and revoke API keys. Keys are stored hashed; a token is shown once.",
    no_args_is_help=True,
)
app.add_typer(keys_app, name="keys")


@contextmanager
def _key_store(ctx: typer.Context, as_json: bool) -> "Iterator[KeyStore]":
    from graphctx import registry

    try:
        settings = ctx.obj.settings()
        store: KeyStore = registry.factory("keys", settings.key_store_backend)(settings)
        try:
            yield store
        finally:
            store.close()
    except GraphctxError as exc:
        _fail(exc, as_json)


def _principal_dict(p: "Principal") -> dict[str, Any]:
    return {
        "key_id": p.key_id,
        "name": p.name,
        "tenant_id": p.tenant_id,
        "namespaces": list(p.namespaces),
        "graph_ids": list(p.graph_ids),
    }


@keys_app.command("create")
def keys_create(
    ctx: typer.Context,
    name: Annotated[str, typer.Option("--name", help="Who the key is for (shown in `keys list`).")],
    tenant: Annotated[str, typer.Option("--tenant", help="The one tenant the key can reach.")],
    namespace: Annotated[
        list[str] | None,
        typer.Option("--namespace", help="A namespace it may use (repeatable; the first is the default)."),
    ] = None,
    graph: Annotated[
        list[str] | None, typer.Option("--graph", help="A shared code graph it may read (repeatable).")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Create an API key for one tenant; print its token once (only a hash is stored)."""
    from graphctx.auth import Principal

    with _key_store(ctx, as_json) as store:
        if not name.strip() or len(name) > 200:
            raise InputError("--name must be 1-200 characters", field="name")
        principal = Principal(
            name=name.strip(),
            tenant_id=tenant,
            namespaces=tuple(dict.fromkeys(namespace or ["default"])),
            graph_ids=tuple(dict.fromkeys(graph or [])),
        )
        issued = store.create(principal)
    data = {**_principal_dict(principal), "key_id": issued.key_id, "token": issued.token}
    if as_json:
        sys.stdout.write(dumps(data) + "\n")
        return
    render.report(out, "API key created", {k: v for k, v in data.items() if k != "token"})
    err.print("The token is shown only this once; store it now:", style="yellow", markup=False)
    sys.stdout.write(issued.token + "\n")


@keys_app.command("list")
def keys_list(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """The active keys (never their secrets)."""
    with _key_store(ctx, as_json) as store:
        principals = store.list()
    rows = [_principal_dict(p) for p in principals]
    if as_json:
        sys.stdout.write(dumps(rows) + "\n")
        return
    from rich.table import Table

    table = Table("key id", "name", "tenant", "namespaces", "graphs", title="active API keys")
    for r in rows:
        table.add_row(
            r["key_id"], r["name"], r["tenant_id"], ", ".join(r["namespaces"]), ", ".join(r["graph_ids"])
        )
    out.print(table)


@keys_app.command("revoke")
def keys_revoke(
    ctx: typer.Context,
    key_id: Annotated[str, typer.Argument(help="The key id (from `keys list`).")],
    as_json: JsonFlag = False,
) -> None:
    """Revoke a key: every later request with it is refused."""
    with _key_store(ctx, as_json) as store:
        if not store.revoke(key_id):
            raise NotFound(f"no active key with id {key_id[:40]!r}", key_id=key_id[:40])
    _emit(as_json, {"key_id": key_id, "revoked": True}, lambda: out.print(f"revoked {key_id}", markup=False))


_SERVERS = frozenset({"serve", "mcp"})
"""Long-running commands: they keep the garbage collector's usual thresholds."""


def main() -> None:
    # A short call allocates what lives to its end (its imports, one answer), so it runs with fewer
    # collections (graphctx.garbage: ~7 % of a `search`) and leaves its objects frozen for the
    # interpreter's shutdown (~12 %). A server keeps the usual collections; a word of the command
    # line that only looks like a server's name just forgoes the saving. This is the process's
    # entry point: a program calling it in-process keeps its objects frozen afterwards.
    short = not _SERVERS & set(sys.argv[1:])
    with fewer_collections() if short else nullcontext():
        try:
            _main()
        finally:
            if short:  # the process ends next; frozen before the thresholds drop back and collect
                frozen_for_exit()


def _main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        err.print(
            "interrupted; a write in flight is journaled and completed at the next write or start",
            markup=False,
        )
        raise SystemExit(130) from None
    except Exception as exc:  # a crash is a bug; say so plainly, keep the traceback for debugging
        if os.environ.get("GRAPHCTX_DEBUG"):
            raise
        err.print(f"internal error: {type(exc).__name__}: {exc}", style="red", markup=False)
        raise SystemExit(70) from None


@app.command("mcp")
def mcp_stdio(ctx: typer.Context) -> None:
    """Serve MCP over stdio for an agent that starts graphctx as a subprocess.

    Calls run as the local operator (--tenant / --namespace), or as the principal of $GRAPHCTX_API_KEY
    when it is set. Stdout carries only the protocol; logs go to stderr."""
    from graphctx.transports.mcp_stdio import main as serve_stdio

    raise typer.Exit(serve_stdio(ctx.obj.settings()))


from graphctx.cli import certify as _certify  # noqa: E402, F401  (registers certify)
from graphctx.cli import code as _code  # noqa: E402, F401  (registers search, symbol, callers, callees, impact)
from graphctx.cli import config as _config  # noqa: E402, F401  (registers config)
from graphctx.cli import index as _index  # noqa: E402, F401  (registers index)
