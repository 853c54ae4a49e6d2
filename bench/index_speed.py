"""Indexing speed per embedder, side by side in one run: `graphctx index` of one tree into a fresh store
per embedder (wall and process CPU seconds), and the embedder alone over exactly the texts the indexer
embeds for that tree (texts per CPU-second), so a slow model's cost can be told from the machine's load.

Usage (from the repository root):

    python bench/index_speed.py [TREE] [--embedders wordllama,minilm-onnx,hashing] [--sample N] [--write]

    python bench/index_speed.py --go --embedders wordllama --workers 2,1 --graphify [--write]

`--go` indexes the machine's Go standard library ($(go env GOROOT)/src, tests included, as the
issue-17 study does). `--workers 2,1` runs `graphctx index` once per parse-worker count (the
GRAPHCTX_INDEX_WORKERS setting; 1 = the serial path) with the first embedder, and `--graphify`
times `graphify extract --code-only --no-cluster` on the same tree in the same run (bench/_code_graphify.py,
its pinned virtualenv under --data-dir), so the figures are side by side.

TREE defaults to the non-test CPython standard library (copied as bench/token_reduction.py does: about
20,000 symbols, the size named by issue 11's speed bar). `--sample N` embeds only N of the tree's texts
(spread evenly) for the embed-only figure and skips the full index for embedders slower than
`--full-max-s` estimated seconds, reporting the estimate instead (an estimate, labelled as one).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _code_data import copy_tree
from _report import header, write_section
from token_reduction import DEFAULT_ROOT

from graphctx.indexing import embedding_text
from graphctx.kernel.reads import stored_hashes
from graphctx.kernel.templates import ENTITY_GET, EntityGetParams
from graphctx.registry import factory
from graphctx.scope import Scope
from graphctx.service import ContextService
from graphctx.settings import Settings

SCOPE = Scope("bench", "speed")


def index_once(tree: Path, embedder: str, data_dir: Path, workers: str = "") -> dict[str, Any]:
    load = os.getloadavg()[0]
    chosen = {"index_workers": int(workers)} if workers else {}
    with ContextService.open(Settings(data_dir=data_dir, embedder=embedder, **chosen)) as service:
        wall, cpu = time.perf_counter(), time.process_time()
        report = service.index_repository(SCOPE, tree).as_dict()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        noop = time.perf_counter()
        service.index_repository(SCOPE, tree)
        noop = time.perf_counter() - noop
    return {"wall_s": wall, "cpu_s": cpu, "noop_s": noop, "load_before": load, "report": report}


def side_by_side(args: argparse.Namespace, tree: Path, tmp: Path, what: str) -> str:
    """graphify extract and graphctx index (per worker count) of one tree, in one run."""
    from _code_graphify import build, ensure_venv

    rows = []
    if args.graphify:
        exe = ensure_venv(args.data_dir.expanduser())
        g = build(exe, tree, tmp / "graphify-out", tmp / "graphify-home")
        rows.append(
            ("graphify extract --code-only --no-cluster", g.seconds, None, g.noop_seconds, g.load_before)
        )
        print("graphify", g, file=sys.stderr)
    embedder = args.embedders.split(",")[0]
    report: dict[str, Any] = {}
    for w in args.workers.split(","):
        run = index_once(tree, embedder, tmp / f"store-w{w}", w)
        report = run["report"]
        print("graphctx", w, {k: v for k, v in run.items() if k != "report"}, file=sys.stderr)
        workers = (
            f"{w} parse worker(s)"
            if w
            else "index_workers unset (Python parsed ahead by 2 worker processes, Go here)"
        )
        rows.append(
            (
                f"graphctx index, {embedder}, {workers}",
                run["wall_s"],
                run["cpu_s"],
                run["noop_s"],
                run["load_before"],
            )
        )
    go = report.get("languages", {}).get("go", {})
    size = (
        f"{go.get('files', 0):,} Go files, {go.get('packages', 0):,} packages, "
        f"{go.get('symbols', 0):,} symbols"
        if go
        else f"{report.get('modules', 0):,} modules, {report.get('symbols', 0):,} symbols"
    )
    command = "python bench/index_speed.py " + " ".join(sys.argv[1:])
    lines = ["## Indexing time beside graphify", "", header(command.strip(), f"{what}; {size}")]
    lines += [
        "| system | wall s | process CPU s | no-op re-run s | load avg before | ÷ graphify |",
        "|---|---|---|---|---|---|",
    ]
    base = rows[0][1] if args.graphify else None
    for name, wall, cpu, noop, load in rows:
        ratio = f"{wall / base:.2f}x" if base else "—"
        cpu_s = f"{cpu:.1f}" if cpu is not None else "— (subprocess)"
        lines.append(f"| {name} | {wall:.1f} | {cpu_s} | {noop:.1f} | {load:.1f} | {ratio} |")
    lines.append("")
    lines.append(
        "process CPU is this process's only (the parse workers and, from OFFLOAD_FILES files on, the "
        "lexical index's writer are child processes and not counted, nor is graphify's); "
        "one run each on a shared 2-core machine: read the ratio, not the seconds."
    )
    lines.append("")
    return "\n".join(lines)


def texts_of(data_dir: Path, embedder: str) -> list[str]:
    with ContextService.open(Settings(data_dir=data_dir, embedder=embedder)) as service:
        ids = [h.id for h in stored_hashes(service.stores.graph, SCOPE)]
        texts: list[str] = []
        for i in range(0, len(ids), 1000):
            got = service.stores.graph.run(ENTITY_GET, SCOPE, EntityGetParams(ids=tuple(ids[i : i + 1000])))
            texts += [embedding_text(e) for e in got.entities]
    return texts


def embed_rate(embedder: str, texts: list[str]) -> dict[str, float]:
    model = factory("embedder", embedder)(Settings())
    if hasattr(model, "load"):
        model.load()
    model.embed(texts[:8])
    wall, cpu = time.perf_counter(), time.process_time()
    for i in range(0, len(texts), 256):
        model.embed(texts[i : i + 256])
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {"texts": len(texts), "per_cpu_s": len(texts) / cpu, "per_wall_s": len(texts) / wall}


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("tree", nargs="?", type=Path, default=None)
    parser.add_argument("--embedders", default="hashing,wordllama,minilm-onnx")
    parser.add_argument("--sample", type=int, default=2000)
    parser.add_argument("--full-max-s", type=float, default=300.0)
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--go", action="store_true", help="index $(go env GOROOT)/src")
    parser.add_argument("--workers", default="", help="comma-separated parse-worker counts (side by side)")
    parser.add_argument("--graphify", action="store_true", help="time graphify extract on the same tree")
    parser.add_argument("--data-dir", type=Path, default=Path.home() / ".cache" / "graphctx-bench")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="graphctx-speed-") as tmp:
        if args.go:
            goroot = subprocess.run(["go", "env", "GOROOT"], capture_output=True, text=True, check=True)
            version = subprocess.run(["go", "env", "GOVERSION"], capture_output=True, text=True, check=True)
            tree = Path(goroot.stdout.strip()) / "src"
            what = f"Go {version.stdout.strip()} standard library ({tree}, tests included)"
        elif args.tree is None:
            tree = Path(tmp) / "stdlib"
            files, size = copy_tree(DEFAULT_ROOT, tree, with_tests=False)
            version = sys.version.split()[0]
            what = f"CPython {version} standard library, non-test: {files} files, {size / 1e6:.1f} MB"
        else:
            tree = args.tree
            what = f"{tree}"
        if args.workers or args.graphify:
            text = side_by_side(args, tree, Path(tmp), what)
            print(text)
            if args.write:
                write_section("index_side_by_side_go" if args.go else "index_side_by_side", text)
            return 0
        names = args.embedders.split(",")
        first = index_once(tree, names[0], Path(tmp) / f"store-{names[0]}")
        texts = texts_of(Path(tmp) / f"store-{names[0]}", names[0])
        step = max(1, len(texts) // max(1, args.sample))
        sample = texts[::step][: args.sample]
        rows = []
        for name in names:
            rate = embed_rate(name, sample)
            estimate = len(texts) / rate["per_cpu_s"] / 2  # two cores, perfectly parallel: a lower bound
            if name == names[0]:
                run: dict[str, Any] | None = first
            elif estimate <= args.full_max_s:
                run = index_once(tree, name, Path(tmp) / f"store-{name}")
            else:
                run = None
            rows.append((name, rate, run, estimate))
            print(name, rate, run and {k: v for k, v in run.items() if k != "report"}, file=sys.stderr)
    report = first["report"]
    symbols = report.get("symbols", 0)
    lines = ["## Indexing speed per embedder", ""]
    command = "python bench/index_speed.py " + " ".join(sys.argv[1:])
    lines.append(
        header(
            command.strip(),
            f"{what}; {report.get('modules', 0):,} modules, {symbols:,} symbols, "
            f"{len(texts):,} entities embedded; embed-only figures over {len(sample):,} of them",
        )
    )
    lines += [
        "| embedder | graphctx index wall s | index CPU s | load avg before | embed-only texts / CPU-s | "
        "embed-only texts / wall-s | embedding all entities, CPU s (÷ 2 cores) |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, rate, run, estimate in rows:
        wall = f"{run['wall_s']:.1f}" if run else f"not run (≥ {estimate:.0f} s estimated)"
        cpu = f"{run['cpu_s']:.1f}" if run else "—"
        load = f"{run['load_before']:.1f}" if run else "—"
        lines.append(
            f"| {name} | {wall} | {cpu} | {load} | {rate['per_cpu_s']:,.0f} | {rate['per_wall_s']:,.0f} | "
            f"{len(texts) / rate['per_cpu_s']:,.0f} ({estimate:,.0f}) |"
        )
    lines.append("")
    text = "\n".join(lines)
    print(text)
    if args.write:
        write_section("index_speed", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
