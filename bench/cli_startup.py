"""How long the CLI takes to start: `graphctx --help` and `--version` beside the interpreter's own
start (`python -c pass`) and beside importing what `--help` imported before the CLI's imports became
lazy (graphctx.api and graphctx.service: pydantic, numpy, the code indexer). Each command runs
--runs times, interleaved, in fresh processes; medians and ratios to the interpreter.

    python bench/cli_startup.py --runs 21 --write
    python bench/cli_startup.py --venv .venv --venv /tmp/pkg/venv-none --write   # editable beside a wheel
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

from _report import header, median, write_section


def commands(venv: Path | None) -> dict[str, list[str]]:
    """The commands timed for one install: `venv` (a venv with graphctx installed) or this one."""
    py = str(venv / "bin" / "python") if venv else sys.executable
    script = str(venv / "bin" / "graphctx") if venv else shutil.which("graphctx") or ""
    found = {
        "python -c pass (the floor)": [py, "-c", "pass"],
        "python -m graphctx.cli --version": [py, "-m", "graphctx.cli", "--version"],
        "python -m graphctx.cli --help": [py, "-m", "graphctx.cli", "--help"],
        "import graphctx.api, graphctx.service (what --help imported before)": [
            py, "-c", "import graphctx.api, graphctx.service",
        ],
    }  # fmt: skip
    if script and Path(script).exists():
        found["graphctx --version (console script)"] = [script, "--version"]
        found["graphctx --help (console script)"] = [script, "--help"]
    return found


def run(runs: int, cmds: dict[str, list[str]]) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {name: [] for name in cmds}
    for _ in range(runs):
        for name, argv in cmds.items():  # interleaved: a busy moment hits every command alike
            started = time.perf_counter()
            subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
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
    parser.add_argument("--write", action="store_true", help="write the section into docs/results.md")
    args = parser.parse_args()
    tables = []
    for venv in args.venv or [None]:
        times = run(args.runs, commands(venv))
        floor = median(next(iter(times.values())))
        rows = [
            f"| {name} | {median(t) * 1000:.0f} | {min(t) * 1000:.0f} | {median(t) / floor:.1f} |"
            for name, t in times.items()
        ]
        where = f"`{venv}`" if venv else f"`{sys.prefix}` (this interpreter's)"
        tables.append(
            f"#### Installed in {where}\n\n| command | median ms | fastest ms | x the interpreter |\n"
            "|---|---:|---:|---:|\n" + "\n".join(rows)
        )
    command = (
        "python bench/cli_startup.py --runs " + str(args.runs) + "".join(f" --venv {v}" for v in args.venv)
    )
    body = (
        "### CLI start-up\n\n"
        + header(command, f"{args.runs} runs of each, interleaved")
        + "\n"
        + "\n\n".join(tables)
        + "\n\nThe target is `--help` and `--version` under 150 ms on an idle machine. This machine is "
        "shared with other work, so the medians carry its load; the ratio to `python -c pass` in the "
        "same run is the steadier figure. An editable install (`pip install -e`) adds its import hook "
        "to every start; a wheel install (`.ci/package` builds one) does not.\n"
    )
    print(body)
    if args.write:
        write_section("cli_startup", body)


if __name__ == "__main__":
    main()
