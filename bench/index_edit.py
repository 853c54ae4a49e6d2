"""Re-indexing after one edit, side by side in one run: `graphctx index` of a tree, then edits to one
widely imported module, each followed by `graphctx index` (the CLI, in a fresh process, as a user runs
it): a body-only edit (a statement added inside a function, and removed again) and an interface edit
(a new top-level function, and removed again), then a no-op re-run. Each system starts from its own
fresh data directory; `--baseline` runs another checkout (its code put first on PYTHONPATH) on the
same tree, so the figures sit beside each other. At the end, the graph each system holds is compared
with a fresh index of the same tree (entities with their content hashes and file shas, every edge).
Prints; writes docs/results.md only with --write.

    python bench/index_edit.py --runs 3 --write        # the non-test standard library, os.py edited
    python bench/index_edit.py --tree /tmp/sqlalchemy-2.0.36 --module lib/sqlalchemy/engine/url.py \\
        --baseline /tmp/ab-base --runs 3
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _code_data import copy_tree
from _report import header, layout, median, write_section
from token_reduction import DEFAULT_ROOT

DEFAULT_MODULE = "os.py"
BASE_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def index(tree: Path, data: Path, pythonpath: str | None) -> tuple[float, dict[str, Any]]:
    env = {**BASE_ENV, "GRAPHCTX_DATA_DIR": str(data)}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "graphctx.cli", "-q", "index", "--json", str(tree)],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    seconds = time.perf_counter() - started
    answer = json.loads(done.stdout)
    return seconds, answer.get("report", answer)


def body_edit(text: str) -> str:
    """A statement added as the first of the first top-level function's body (after a docstring)."""
    tree = ast.parse(text)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            at = first.end_lineno if _is_docstring(first) else first.lineno - 1
            lines = text.splitlines(keepends=True)
            indent = " " * (node.body[-1].col_offset)
            lines.insert(at or 0, f"{indent}_graphctx_edit = 1\n")
            return "".join(lines)
    raise SystemExit("the module has no top-level function to edit")


def _is_docstring(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def interface_edit(text: str) -> str:
    return text + "\n\ndef graphctx_added_function(value):\n    return value\n"


def snapshot(data: Path) -> tuple[dict[str, tuple], dict[str, tuple]]:
    """Entities (content hash, file sha, lines) and edges of the embedded graph store."""
    with sqlite3.connect(data / "graph.sqlite") as db:
        entities = {
            r[0]: (r[1], r[2].partition("+")[0], r[3], r[4])
            for r in db.execute("SELECT id, content_hash, source, line_start, line_end FROM entities")
        }
        facts = {
            r[0]: r[1:] for r in db.execute("SELECT id, subject_id, predicate, object_id, value FROM facts")
        }
    return entities, facts


def run_system(tree: Path, module: Path, data: Path, pythonpath: str | None, runs: int) -> dict[str, Any]:
    original = module.read_text()
    full_s, full = index(tree, data, pythonpath)
    kinds: dict[str, list[tuple[float, dict[str, Any]]]] = {"body": [], "interface": []}
    try:
        for _ in range(runs):
            for kind, edit in (("body", body_edit), ("interface", interface_edit)):
                module.write_text(edit(original))
                kinds[kind].append(index(tree, data, pythonpath))
                module.write_text(original)
                kinds[kind].append(index(tree, data, pythonpath))
    finally:
        module.write_text(original)
    noop_s, _ = index(tree, data, pythonpath)
    out: dict[str, Any] = {"full_s": full_s, "noop_s": noop_s, "files": full.get("files_seen", 0)}
    for kind, done in kinds.items():
        out[f"{kind}_s"] = median([s for s, _ in done])
        out[f"{kind}_parsed"] = median([r.get("files_parsed", 0) for _, r in done])
        out[f"{kind}_reresolved"] = median([r.get("files_reresolved", 0) for _, r in done])
    return out


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tree", type=Path, default=None, help="default: the non-test standard library")
    parser.add_argument(
        "--module", default=None, help=f"the file edited, relative to the tree ({DEFAULT_MODULE})"
    )
    parser.add_argument("--baseline", type=Path, default=None, help="another checkout of graphctx")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="graphctx-edit-") as tmp:
        work = Path(tmp)
        tree = work / "tree"
        if args.tree is None:
            files, _ = copy_tree(DEFAULT_ROOT, tree, with_tests=False)
            what = f"CPython {sys.version.split()[0]} standard library, non-test: {files} files"
        else:
            shutil.copytree(args.tree, tree, ignore=shutil.ignore_patterns("__pycache__", ".git"))
            what = str(args.tree)
        rel = args.module or DEFAULT_MODULE
        module = tree / rel
        systems = [("this checkout", None)]
        if args.baseline is not None:
            systems.append((f"baseline {args.baseline}", str(layout(args.baseline))))
        results = {}
        for name, pythonpath in systems:
            data = work / f"data-{len(results)}"
            results[name] = run_system(tree, module, data, pythonpath, args.runs)
            print(name, results[name], file=sys.stderr)
        fresh = work / "fresh"
        index(tree, fresh, None)
        expected = snapshot(fresh)
        for n, name in enumerate(results):
            results[name]["same_as_fresh"] = snapshot(work / f"data-{n}") == expected
    command = "python bench/index_edit.py " + " ".join(sys.argv[1:])
    files = next(iter(results.values()))["files"]
    size = f"{what} ({files} files seen); `{rel}` edited; {args.runs} runs of each edit and its undo"
    lines = [
        "## Re-indexing after one edit",
        "",
        header(command.strip(), size),
        "| system | full index s | body edit s (files parsed / re-resolved) | interface edit s (parsed / "
        "re-resolved) | no-op s | body edit ÷ full | graph = a fresh index |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, r in results.items():
        same = "yes" if r["same_as_fresh"] else "**no**"
        lines.append(
            f"| {name} | {r['full_s']:.1f} "
            f"| {r['body_s']:.2f} ({r['body_parsed']:.0f} / {r['body_reresolved']:.0f}) "
            f"| {r['interface_s']:.2f} ({r['interface_parsed']:.0f} / {r['interface_reresolved']:.0f}) "
            f"| {r['noop_s']:.2f} | {r['body_s'] / r['full_s']:.2f}x | {same} |"
        )
    lines += [
        "",
        "Each figure is the wall time of one `graphctx index` process (start-up included), the median "
        "over the edits and their undos; a body edit adds a statement inside the module's first "
        "top-level function, an interface edit a new top-level function. The last column compares "
        "each system's graph after all its runs with a fresh index of the tree (ids, content hashes, "
        "file shas, line ranges, every edge). One shared 2-core machine: read the ratios.",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    if args.write:
        write_section("index_edit", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
