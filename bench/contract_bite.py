"""Does the contract suite bite? Every deliberately broken adapter of tests/contracts/broken against its
port's WHOLE contract class, the controls, the bypass attempts, and what certifying each of our
embedded adapters costs.

    python bench/contract_bite.py            # writes its section of docs/results.md
    python bench/contract_bite.py --no-write # prints only

1. Defects: one pytest run over every broken file, only the `TestBroken*` classes (each subclasses its
   port's full bundle: GraphStoreContract, LexicalIndexContract or VectorIndexContract, never
   congruence). A defect is caught when its class has at least one failed test.
2. Controls: the same contracts on the unbroken adapters (must pass).
3. Bypasses: tests/contracts/test_bypasses.py (the plugin) and the bypass tests of
   tests/contracts/test_certify.py (certify); each passing test is a bypass refused.
4. Cost: `graphctx certify` on each embedded adapter, wall time and CPU seconds (the machine is shared:
   CPU seconds are the figure to compare).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

from _report import header, write_section

REPO = Path(__file__).resolve().parent.parent
BROKEN = REPO / "tests" / "contracts" / "broken"
CONTROLS = {
    "TestControlSqlite": "broken_graph_tenant_blind.py",
    "TestControlSqliteOnDisk": "broken_graph_reopen_revives_aliases.py",
    "TestControlTantivy": "broken_lexical_ignores_k.py",
    "TestControlTantivyOnDisk": "broken_lexical_analyser_only_at_creation.py",
    "TestControlQdrantEdge": "broken_vector_tenant_blind.py",
    "TestControlHookedTraversal": "broken_graph_cut_by_far_id.py",
}
CERTIFY = {
    "sqlite": ["sqlite"],
    "tantivy": ["tantivy"],
    "qdrant-edge": ["qdrant-edge"],
    "qdrant-local": ["qdrant-local"],
}


def pytest_junit(args: list[str], cwd: Path) -> dict[str, dict[str, str]]:
    """{class: {test: passed|failed|skipped}} of one pytest run."""
    with tempfile.TemporaryDirectory() as tmp:
        junit = Path(tmp) / "report.xml"
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
        subprocess.run(
            [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", f"--junitxml={junit}", *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        out: dict[str, dict[str, str]] = defaultdict(dict)
        for case in ET.parse(junit).getroot().iter("testcase"):
            status = "passed"
            for child in case:
                if child.tag in ("failure", "error"):
                    status = "failed"
                elif child.tag == "skipped":
                    status = "skipped"
            out[case.get("classname", "").rsplit(".", 1)[-1]][case.get("name", "")] = status
        return out


def defects(workers: str) -> tuple[list[tuple[str, str, int, int]], int]:
    files = sorted(p.name for p in BROKEN.glob("broken_*.py"))
    names = [m for f in files for m in re.findall(r"^class (TestBroken\w+)", (BROKEN / f).read_text(), re.M)]
    if twice := sorted({n for n in names if names.count(n) > 1}):  # the junit report keys runs by class
        raise SystemExit(f"broken adapter classes named twice (rename one): {', '.join(twice)}")
    run = pytest_junit([*files, "-k", "TestBroken", "-n", workers], BROKEN)
    rows = []
    for cls, tests in sorted(run.items()):
        if not cls.startswith("TestBroken"):
            continue
        failed = sum(1 for s in tests.values() if s == "failed")
        rows.append((cls, next(f for f in files if cls in (BROKEN / f).read_text()), failed, len(tests)))
    return rows, len(files)


def controls(workers: str) -> dict[str, tuple[int, int]]:
    nodes = [f"{file}::{cls}" for cls, file in CONTROLS.items()]
    run = pytest_junit([*nodes, "-n", workers], BROKEN)
    return {cls: (sum(1 for s in run[cls].values() if s == "failed"), len(run[cls])) for cls in CONTROLS}


def bypasses(workers: str) -> tuple[int, int, list[str]]:
    run = pytest_junit(
        ["tests/contracts/test_bypasses.py", "tests/contracts/test_certify.py", "-n", workers], REPO
    )
    tests = [(cls, name, status) for cls, t in run.items() for name, status in t.items()]
    refused = [name for _, name, status in tests if status == "passed"]
    failed = [name for _, name, status in tests if status != "passed"]
    return len(refused), len(tests), failed


def certify_cost() -> dict[str, tuple[float, float, str]]:
    out = {}
    for name, args in CERTIFY.items():
        with tempfile.TemporaryDirectory() as tmp:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.monotonic()
            proc = subprocess.run(
                [sys.executable, "-m", "graphctx.cli", "certify", *args, "--out", tmp],
                cwd=REPO,
                capture_output=True,
                text=True,
                check=False,
            )
            wall = time.monotonic() - started
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            verdict = (
                proc.stdout.split(":", 2)[1].split()[0]
                if proc.stdout.startswith("graphctx certify:")
                else "?"
            )
            out[name] = (wall, cpu, verdict)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/results.md alone")
    parser.add_argument("--skip-cost", action="store_true", help="skip the certify timing runs")
    parser.add_argument("--workers", default="2", help="pytest-xdist workers for the suite runs")
    args = parser.parse_args()

    rows, files = defects(args.workers)
    caught = [r for r in rows if r[2] > 0]
    ctl = controls(args.workers)
    refused, tried, not_refused = bypasses(args.workers)
    cost = {} if args.skip_cost else certify_cost()
    by_port = ", ".join(
        f"{port} {sum(1 for r in caught if f'_{port}_' in r[1])}" for port in ("graph", "lexical", "vector")
    )

    lines = [
        "## Contract suite: broken adapters caught, bypasses refused, certification cost",
        "",
        header("python bench/contract_bite.py", f"{files} broken adapter files; contract of this commit"),
        f"**Defects caught: {len(caught)} / {len(rows)}** broken adapters fail their own port's whole "
        f"contract class ({by_port}).",
        "",
        "| broken adapter | file | failed tests / tests run |",
        "|---|---|---|",
        *(f"| {cls} | `{file}` | {failed} / {total} |" for cls, file, failed, total in rows),
        "",
        "Controls (the unbroken adapters, same contracts): "
        + ", ".join(f"{cls} {failed} failed of {total}" for cls, (failed, total) in ctl.items())
        + ".",
        "",
        f"**Bypasses refused: {refused} / {tried}** (tests/contracts/test_bypasses.py against the plugin, "
        "tests/contracts/test_certify.py against certify; a passing test is a refused bypass)"
        + (f"; not refused: {', '.join(not_refused)}" if not_refused else "")
        + ".",
    ]
    if cost:
        lines += [
            "",
            "Cost of `graphctx certify` per embedded adapter (the whole suite of its port plus the "
            "retrieval contract; one pytest process, no xdist):",
            "",
            "| adapter | verdict | wall s | CPU s |",
            "|---|---|---|---|",
            *(f"| {n} | {v} | {w:.0f} | {c:.0f} |" for n, (w, c, v) in cost.items()),
        ]
    body = "\n".join(lines) + "\n"
    print(body)
    if not args.no_write:
        write_section("contract-bite", body)


if __name__ == "__main__":
    main()
