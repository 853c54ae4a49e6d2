"""How long the CLI takes to start: `graphctx --help` and `--version` beside the interpreter's own
start (`python -c pass`) and beside importing what `--help` imported before the CLI's imports became
lazy (graphctx.api and graphctx.service: pydantic, numpy, the code indexer). Each command runs
--runs times, interleaved, in fresh processes; medians and ratios to the interpreter.

    python bench/cli_startup.py --runs 21 --write
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time

from _report import header, median, write_section

PY = sys.executable


def commands() -> dict[str, list[str]]:
    script = shutil.which("graphctx") or ""
    found = {
        "python -c pass (the floor)": [PY, "-c", "pass"],
        "python -m graphctx.cli --version": [PY, "-m", "graphctx.cli", "--version"],
        "python -m graphctx.cli --help": [PY, "-m", "graphctx.cli", "--help"],
        "import graphctx.api, graphctx.service (what --help imported before)": [
            PY, "-c", "import graphctx.api, graphctx.service",
        ],
    }  # fmt: skip
    if script:
        found["graphctx --version (console script)"] = [script, "--version"]
        found["graphctx --help (console script)"] = [script, "--help"]
    return found


def run(runs: int) -> dict[str, list[float]]:
    cmds = commands()
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
    parser.add_argument("--write", action="store_true", help="write the section into docs/results.md")
    args = parser.parse_args()
    times = run(args.runs)
    floor = median(next(iter(times.values())))
    rows = [
        f"| {name} | {median(t) * 1000:.0f} | {min(t) * 1000:.0f} | {median(t) / floor:.1f} |"
        for name, t in times.items()
    ]
    body = (
        "### CLI start-up\n\n"
        + header(f"python bench/cli_startup.py --runs {args.runs}", f"{args.runs} runs of each, interleaved")
        + "\n| command | median ms | fastest ms | x the interpreter |\n|---|---:|---:|---:|\n"
        + "\n".join(rows)
        + "\n\nThe target is `--help` and `--version` under 150 ms on an idle machine. This machine is "
        "shared with other work, so the medians carry its load; the ratio to `python -c pass` in the "
        "same run is the steadier figure. An editable install (`pip install -e`) adds its import hook "
        "to every start.\n"
    )
    print(body)
    if args.write:
        write_section("cli_startup", body)


if __name__ == "__main__":
    main()
