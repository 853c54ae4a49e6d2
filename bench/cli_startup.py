"""How long the CLI takes to start: `graphctx --help` and `--version`, one `recall` on the demo memory
and one `search` over the non-test standard library (indexed once before timing, as
bench/index_speed.py copies it) beside the interpreter's own start (`python -c pass`) and beside
importing what `--help` imported before the CLI's imports became lazy (graphctx.api and
graphctx.service: pydantic, numpy, the code indexer). `recall` and `search` run twice: opening the
stores (`--via direct`) and through a `graphctx serve --workers 1` running on the same data
directory (`--via serve`, started before timing). Each command runs --runs times, interleaved, in
fresh processes; medians and ratios to the interpreter. Prints; writes docs/results.md only with
--write.

    python bench/cli_startup.py --runs 21 --write
    python bench/cli_startup.py --runs 21 --graphify /tmp/gfy --write   # beside `graphify query`
    python bench/cli_startup.py --venv .venv --venv /tmp/pkg/venv-none --write   # editable beside a wheel
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import _code_graphify
from _code_data import copy_tree
from _report import header, median, write_section
from token_reduction import DEFAULT_ROOT

DEMO_QUERY = "who owns checkout-api"
SEARCH_QUERY = "parse a URL into components"

# Every child runs as from a user's shell: with bytecode caching on even where this session turns it
# off (PYTHONDONTWRITEBYTECODE would make an editable install recompile graphctx at every start).
BASE_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def prepare(work: Path) -> tuple[dict[str, str], dict[str, str], int]:
    """A demo-memory data directory and a data directory holding the indexed non-test standard library;
    the environment each CLI call runs in (GRAPHCTX_DATA_DIR) and the tree's file count."""
    demo, stdlib = work / "demo", work / "stdlib"
    py = [sys.executable, "-m", "graphctx.cli"]
    subprocess.run([*py, "demo", "--data-dir", str(demo)], check=True, stdout=subprocess.DEVNULL)
    files, _ = copy_tree(DEFAULT_ROOT, work / "tree", with_tests=False)
    env = {**BASE_ENV, "GRAPHCTX_DATA_DIR": str(stdlib)}
    subprocess.run([*py, "index", str(work / "tree")], check=True, env=env, stdout=subprocess.DEVNULL)
    demo_env = {**BASE_ENV, "GRAPHCTX_DATA_DIR": str(demo), "GRAPHCTX_TENANT_ID": "demo"}
    return demo_env, env, files


def commands(venv: Path | None, demo_env: dict[str, str], stdlib_env: dict[str, str]) -> dict[str, tuple]:
    """The commands timed for one install (`venv`, a venv with graphctx installed, or this one), each
    with the environment it runs in (None: this one)."""
    py = str(venv / "bin" / "python") if venv else sys.executable
    script = str((venv / "bin" if venv else Path(sys.executable).parent) / "graphctx")
    found: dict[str, tuple] = {
        "python -c pass (the floor)": ([py, "-c", "pass"], None),
        "python -m graphctx.cli --version": ([py, "-m", "graphctx.cli", "--version"], None),
        "python -m graphctx.cli --help": ([py, "-m", "graphctx.cli", "--help"], None),
        "import graphctx.api, graphctx.service (what --help imported before)": (
            [py, "-c", "import graphctx.api, graphctx.service"], None,
        ),
    }  # fmt: skip
    cli = [py, "-m", "graphctx.cli"]  # without a console script: the module, as the rows above
    if Path(script).exists():
        cli = [script]
        found["graphctx --version (console script)"] = ([script, "--version"], None)
        found["graphctx --help (console script)"] = ([script, "--help"], None)
    for via in ("direct", "serve"):
        found[f"graphctx --via {via} recall '{DEMO_QUERY}' (demo memory)"] = (
            [*cli, "--via", via, "recall", DEMO_QUERY], demo_env,
        )  # fmt: skip
        found[f"graphctx --via {via} search '{SEARCH_QUERY}' (standard library)"] = (
            [*cli, "--via", via, "search", SEARCH_QUERY], stdlib_env,
        )  # fmt: skip
    return found


GRAPHIFY_QUERY = f"graphify query '{SEARCH_QUERY}' (standard library, its graph.json)"


def graphify_query(data_dir: Path, tree: Path) -> dict[str, tuple]:
    """graphify's `query` on its own graph of the same tree (bench/_code_graphify.py: a pinned venv
    under data_dir, the graph built once with `extract --code-only --no-cluster` and kept there)."""
    exe = _code_graphify.ensure_venv(data_dir)
    out = data_dir / "cli-startup-stdlib"
    _code_graphify.build(exe, tree, out, data_dir / "home")
    graph = out / "graphify-out" / "graph.json"
    return {GRAPHIFY_QUERY: ([str(exe), "query", SEARCH_QUERY, "--graph", str(graph)], None)}


SERVE_START_TIMEOUT_S = 180.0


@contextmanager
def serving(venv: Path | None, env: dict[str, str]) -> Iterator[None]:
    """`graphctx serve --workers 1` on env's data directory (a free port), until the block ends; up
    once it advertises itself there (graphctx.transports.local)."""
    py = str(venv / "bin" / "python") if venv else sys.executable
    advert = Path(env["GRAPHCTX_DATA_DIR"]) / "serve.json"
    proc = subprocess.Popen(
        [py, "-m", "graphctx.cli", "serve", "--port", "0", "--workers", "1", "--log-level", "warning"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + SERVE_START_TIMEOUT_S
        while not advert.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(
                    f"graphctx serve on {advert.parent} did not start within {SERVE_START_TIMEOUT_S} s"
                )
            time.sleep(0.2)
        yield
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def run(runs: int, cmds: dict[str, tuple]) -> dict[str, list[float]]:
    """`runs` timed rounds after one untimed round (which writes the bytecode caches, as a user's
    first call does)."""
    times: dict[str, list[float]] = {name: [] for name in cmds}
    for round_ in range(runs + 1):
        for name, (argv, env) in cmds.items():  # interleaved: a busy moment hits every command alike
            started = time.perf_counter()
            subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True,
                           env=env or BASE_ENV)  # fmt: skip
            if round_:
                times[name].append(time.perf_counter() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument(
        "--venv", type=Path, action="append", default=[],
        help="a venv with graphctx installed (repeatable; default: this interpreter's install)",
    )  # fmt: skip
    parser.add_argument(
        "--graphify", type=Path, metavar="DATA_DIR",
        help="also time `graphify query` on its graph of the same tree (its venv and graph kept in DATA_DIR)",
    )  # fmt: skip
    parser.add_argument("--write", action="store_true", help="write the section into docs/results.md")
    args = parser.parse_args()
    tables = []
    work = Path(tempfile.mkdtemp(prefix="graphctx-cli-startup-"))
    try:
        demo_env, stdlib_env, files = prepare(work)
        for venv in args.venv or [None]:
            with ExitStack() as stack:
                for env in (demo_env, stdlib_env):
                    stack.enter_context(serving(venv, env))
                cmds = commands(venv, demo_env, stdlib_env)
                if args.graphify:
                    cmds |= graphify_query(args.graphify, work / "tree")
                tables.append(table(venv, run(args.runs, cmds)))
                tables.append(import_profile(cmds))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    command = (
        f"python bench/cli_startup.py --runs {args.runs}"
        + "".join(f" --venv {v}" for v in args.venv)
        + (f" --graphify {args.graphify}" if args.graphify else "")
        + (" --write" if args.write else "")
    )
    body = (
        "### CLI start-up\n\n"
        + header(
            command,
            f"{args.runs} runs of each, interleaved; `recall` on the demo memory, `search` on the non-test "
            f"standard library ({files:,} files) indexed once before timing",
        )
        + "\n"
        + "\n\n".join(tables)
        + "\n\n`--via serve`: the CLI finds the `graphctx serve` running on the data directory (its advert, "
        "`serve.json`) and sends it the read; it imports neither the stores nor the service. "
        "The targets: `--help` and `--version` under 150 ms, one `recall` under 400 ms. This machine "
        "is shared with other work (1-minute load average "
        f"{os.getloadavg()[0]:.1f} at the end of the run), so the medians carry its load; the ratio to "
        "`python -c pass` in the same run is the steadier figure. An editable install (`pip install -e`) "
        "adds its import hook to every start; a wheel install (`.ci/package` builds one) does not. "
        "Every command runs with bytecode caching on (PYTHONDONTWRITEBYTECODE unset, as in a user's "
        "shell) after one untimed round that writes the caches.\n"
    )
    print(body)
    if args.write:
        write_section("cli_startup", body)


PROFILED = ("graphctx.cli", "typer._adapters", "graphctx.transports.local", "http.client", "rich.console")
"""Top-level imports of a read through serve whose cumulative import time is reported."""


def import_profile(cmds: dict[str, tuple], runs: int = 5) -> str:
    """Where a `--via serve` recall's start goes: the cumulative import time of its main top-level
    imports (PYTHONPROFILEIMPORTTIME), medians of `runs` runs, beside its wall time."""
    name = next(n for n in cmds if "--via serve recall" in n)
    argv, env = cmds[name]
    found: dict[str, list[float]] = {m: [] for m in PROFILED}
    walls = []
    for _ in range(runs):
        started = time.perf_counter()
        done = subprocess.run(argv, env={**(env or BASE_ENV), "PYTHONPROFILEIMPORTTIME": "1"},
                              capture_output=True, text=True, check=True)  # fmt: skip
        walls.append(time.perf_counter() - started)
        seen = {}
        for line in done.stderr.splitlines():
            fields = line.split("|")
            if line.startswith("import time:") and len(fields) == 3 and fields[1].strip().isdigit():
                seen.setdefault(fields[2].rstrip(), int(fields[1]))  # the name unindented: top level
        for module in PROFILED:
            found[module].append(seen.get(f" {module}", 0) / 1000)
    rows = [f"| `{m}` | {median(t):.0f} |" for m, t in found.items()]
    return (
        f"Where `{name}` starts ({runs} more runs with the import profile on, wall median "
        f"{median(walls) * 1000:.0f} ms): cumulative import time of its top-level imports "
        "(`typer._adapters` is typer's own pydantic-based parameter coercion; 0: not imported)\n\n"
        "| import | median ms |\n|---|---:|\n" + "\n".join(rows)
    )


def table(venv: Path | None, times: dict[str, list[float]]) -> str:
    floor = median(next(iter(times.values())))
    graphify = median(times[GRAPHIFY_QUERY]) if GRAPHIFY_QUERY in times else None

    def beside(name: str, t: list[float]) -> str:
        return f" {median(t) / graphify:.2f} |" if graphify and " search " in name else " |"

    rows = [
        f"| {name} | {median(t) * 1000:.0f} | {min(t) * 1000:.0f} | {median(t) / floor:.1f} |"
        + beside(name, t)
        for name, t in times.items()
    ]
    where = f"`{venv}`" if venv else f"`{sys.prefix}` (this interpreter's)"
    return (
        f"#### Installed in {where}\n\n"
        "| command | median ms | fastest ms | x the interpreter | x graphify query |\n"
        "|---|---:|---:|---:|---:|\n" + "\n".join(rows)
    )


if __name__ == "__main__":
    main()
