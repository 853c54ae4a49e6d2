"""How long an agent waits for graphctx's MCP server over stdio: from spawning the server process to
the end of `initialize`, then one `tools/list`, on the demo memory; with the output schemas in the
listing and without (GRAPHCTX_MCP_OUTPUT_SCHEMAS=off), beside the interpreter's own start
(`python -c pass`). The client is the official SDK's (`mcp.Client` over stdio), as an agent's would
be. Each variant runs --runs times, interleaved, each in a fresh process; medians. Prints; writes
docs/results.md only with --write.

    python bench/mcp_connect.py --runs 15 --write
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import anyio
from _report import header, median, write_section
from mcp import Client, StdioServerParameters

from graphctx.envelope import dumps


def variants(data_dir: Path) -> dict[str, dict[str, str]]:
    base = {"GRAPHCTX_DATA_DIR": str(data_dir), "GRAPHCTX_TENANT_ID": "demo", "PATH": os.environ["PATH"]}
    return {
        "output schemas on (the default)": base,
        "output schemas off": {**base, "GRAPHCTX_MCP_OUTPUT_SCHEMAS": "off"},
    }


async def connect_once(command: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """Seconds to a finished initialize, seconds of tools/list after it, bytes of the listing."""
    params = StdioServerParameters(command=command[0], args=command[1:], env=env)
    started = time.perf_counter()
    with anyio.fail_after(120):
        async with Client(params, mode="auto") as client:
            ready = time.perf_counter()
            listed = await client.list_tools()
            done = time.perf_counter()
    size = len(dumps(listed.model_dump(by_alias=True, exclude_none=True, mode="json")).encode())
    return ready - started, done - ready, size


def floor_once() -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--write", action="store_true", help="write the section into docs/results.md")
    args = parser.parse_args()
    script = Path(sys.executable).parent / "graphctx"
    command = [str(script), "mcp"] if script.exists() else [sys.executable, "-m", "graphctx.cli", "mcp"]
    work = Path(tempfile.mkdtemp(prefix="graphctx-mcp-connect-"))
    try:
        data = work / "demo"
        subprocess.run(
            [sys.executable, "-m", "graphctx.cli", "demo", "--data-dir", str(data)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        envs = variants(data)
        times: dict[str, list[tuple[float, float, int]]] = {name: [] for name in envs}
        floor: list[float] = []
        for _ in range(args.runs):  # interleaved: a busy moment hits every variant alike
            floor.append(floor_once())
            for name, env in envs.items():
                times[name].append(anyio.run(connect_once, command, env))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    base = median(floor)
    rows = []
    for name, runs in times.items():
        init = [r[0] for r in runs]
        listing = [r[1] for r in runs]
        both = [r[0] + r[1] for r in runs]
        rows.append(
            f"| {name} | {median(init) * 1000:.0f} | {median(listing) * 1000:.0f} | "
            f"{median(both) * 1000:.0f} | {min(both) * 1000:.0f} | {median(both) / base:.1f} | "
            f"{runs[0][2]:,} |"
        )
    shown = " ".join(Path(c).name if i == 0 else c for i, c in enumerate(command))
    body = (
        "### MCP over stdio: connect time\n\n"
        + header(
            f"python bench/mcp_connect.py --runs {args.runs}",
            f"the demo memory; server started as `{shown}` by the SDK's stdio client; {args.runs} runs "
            "of each, interleaved",
        )
        + f"\n`python -c pass` (the floor): median {base * 1000:.0f} ms.\n\n"
        "| variant | spawn to initialized, median ms | tools/list, median ms | both, median ms "
        "| both, fastest ms | x the interpreter | tools/list bytes |\n"
        "|---|---:|---:|---:|---:|---:|---:|\n"
        + "\n".join(rows)
        + "\n\nSpawn to initialized includes the interpreter's start, the imports of the MCP server and "
        "the service, and opening the embedded stores (the embedder loads when the first query needs "
        "it). The machine is shared (1-minute load average "
        f"{os.getloadavg()[0]:.1f} at the end of the run), so the medians carry its load.\n"
    )
    print(body)
    if args.write:
        write_section("mcp_connect", body)


if __name__ == "__main__":
    main()
