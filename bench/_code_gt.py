"""The ../shared/eval ground truth pointed at a repository with its import roots.

build_gt.py names a module by its path below the tree it is given. A repository whose packages sit
under import roots (`src/`, several projects of a monorepo) is therefore laid out flat first: every
file under a root is copied to its path below that root, every other file to its own path — which
is also "the same tree laid out flat" the src-layout comparison indexes. build_gt.py and
make_questions.py then run on the flat tree as subprocesses (never imported), and every file path of
their output is mapped back to the repository's own paths. The roots given here are declared by hand
per repository in the benchmark (an instrument independent of graphctx's layout discovery)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from _code_data import EVAL_DIR, load_defs

SKIPPED_DIRS = {".git", "__pycache__", ".tox", ".venv", "venv", "node_modules"}


@dataclass(frozen=True)
class GtRoot:
    """A directory whose contents are importable; `names`: only these top-level packages/modules."""

    directory: str
    names: tuple[str, ...] = ()

    def owns(self, rel: str) -> str | None:
        """The file's path below this root, or None when it is not part of it."""
        if self.directory and not rel.startswith(self.directory + "/"):
            return None
        rest = rel[len(self.directory) + 1 :] if self.directory else rel
        head = rest.split("/", 1)[0].removesuffix(".py")
        if self.names and head not in self.names:
            return None
        return rest


@dataclass
class FlatView:
    tree: Path  # the flat copy
    to_repo: dict[str, str]  # flat path -> repository path
    collisions: list[str]  # repository paths left out: another file already had their flat path

    def repo_path(self, flat: str) -> str:
        return self.to_repo.get(flat, flat)


def py_files(repo: Path) -> list[str]:
    out = []
    for path in sorted(repo.rglob("*.py")):
        rel = path.relative_to(repo)
        if SKIPPED_DIRS & set(rel.parts) or path.is_symlink():
            continue
        out.append(rel.as_posix())
    return out


def flat_view(repo: Path, roots: list[GtRoot], dest: Path) -> FlatView:
    """Copy the repository's .py files flat (rooted files first, deepest root first)."""
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    ordered = sorted(roots, key=lambda r: -len(r.directory))
    placed: dict[str, str] = {}
    collisions: list[str] = []
    files = py_files(repo)
    plan: list[tuple[int, str, str]] = []
    for rel in files:
        flat = next((below for r in ordered if (below := r.owns(rel)) is not None), None)
        plan.append((0, flat, rel) if flat is not None else (1, rel, rel))
    for _, flat, rel in sorted(plan):
        if flat in placed:
            collisions.append(rel)
            continue
        placed[flat] = rel
        target = dest / flat
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(repo / rel, target)
    return FlatView(dest, placed, collisions)


@dataclass
class GroundTruth:
    defs: dict[str, dict]  # qualified name -> def, files as repository paths
    edges: list[dict]  # caller, callee (qualified names), file (repository path), line
    stats: dict
    gt_dir: Path


def build(view: FlatView, gt_dir: Path) -> GroundTruth:
    """build_gt.py on the flat tree; its output with repository paths (rewritten next to it)."""
    gt_dir.mkdir(parents=True, exist_ok=True)
    raw = gt_dir / "flat"
    raw.mkdir(exist_ok=True)
    subprocess.run(
        [sys.executable, str(EVAL_DIR / "build_gt.py"), str(view.tree), str(raw)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    defs = load_defs(raw)
    for d in defs.values():
        d["file"] = view.repo_path(d["file"])
    edges = [json.loads(line) for line in (raw / "edges.jsonl").read_text().splitlines() if line]
    for e in edges:
        e["file"] = view.repo_path(e["file"])
    stats = json.loads((raw / "stats.json").read_text())
    return GroundTruth(defs, edges, stats, raw)


def questions(view: FlatView, gt: GroundTruth, n: int, seed: int) -> tuple[list[dict], str]:
    """make_questions.py on the flat tree (its baseline reads the same bytes), paths mapped back;
    n is lowered to the pool size when the pool is smaller."""

    def run(count: int) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [
                sys.executable,
                str(EVAL_DIR / "make_questions.py"),
                str(view.tree),
                str(gt.gt_dir),
                str(count),
                str(seed),
            ],
            check=False,
            capture_output=True,
            text=True,
        )

    for count in dict.fromkeys((n, n * 3 // 4, n // 2, n // 4)):
        done = run(count)
        if done.returncode == 0 or "larger than population" not in done.stderr:
            break
    if done.returncode != 0:
        raise RuntimeError(f"make_questions.py failed: {done.stderr[-1000:]}")
    rows = json.loads((gt.gt_dir / f"questions_seed{seed}.json").read_text())
    for r in rows:
        flat, _, line = r["defined_at"].rpartition(":")
        r["defined_at"] = f"{view.repo_path(flat)}:{line}"
    return rows, done.stdout.splitlines()[0]
