"""Data for the code benchmarks: copies of the standard-library tree (so graphctx and graphify read the
same files), the ground truth of ../shared/eval built by running its scripts as subprocesses (never
imported), and the scoring of an answer against a question."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _eval_dir() -> Path:
    """../shared/eval beside the checkout, or above it (a git worktree lives deeper), or
    $GRAPHCTX_EVAL_DIR."""
    explicit = os.environ.get("GRAPHCTX_EVAL_DIR")
    if explicit:
        return Path(explicit)
    for parent in REPO.parents:
        candidate = parent / "shared" / "eval"
        if candidate.is_dir():
            return candidate
    return REPO.parent / "shared" / "eval"


EVAL_DIR = _eval_dir()
# Directories of the tree that are never part of the standard library proper.
NOISE_DIRS = {"site-packages", "__pycache__"}


def is_test(rel: str) -> bool:
    """The test-file rule of make_questions.py (copied, not imported: the eval code is an instrument)."""
    prefixes = ("test/", "idlelib/idle_test/", "lib2to3/tests/", "tkinter/test/", "unittest/test/")
    return rel.startswith(prefixes) or "/tests/" in rel


def copy_tree(root: Path, dest: Path, *, with_tests: bool) -> tuple[int, int]:
    """Copy the *.py files of `root` (no site-packages, no caches) to `dest`; returns (files, bytes).
    Reuses `dest` when it already holds a complete copy (a marker file with the counts)."""
    marker = dest.with_name(dest.name + ".copied.json")  # beside the tree: no tool may index it
    if marker.exists():
        info = json.loads(marker.read_text())
        if info.get("root") == str(root):
            return info["files"], info["bytes"]
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    files = size = 0
    for src in sorted(root.rglob("*.py")):
        rel = src.relative_to(root)
        if NOISE_DIRS & set(rel.parts) or (not with_tests and is_test(rel.as_posix())):
            continue
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target)
        files += 1
        size += target.stat().st_size
    marker.write_text(json.dumps({"root": str(root), "files": files, "bytes": size}))
    return files, size


def tree_digest(tree: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(tree.rglob("*.py")):
        h.update(p.relative_to(tree).as_posix().encode() + b"\0" + p.read_bytes())
    return h.hexdigest()[:16]


def build_questions(tree: Path, gt_dir: Path, n: int, seed: int) -> tuple[list[dict], str]:
    """Run build_gt.py (once per tree) and make_questions.py; return the questions and the summary line."""
    gt_dir.mkdir(parents=True, exist_ok=True)
    if not (gt_dir / "stats.json").exists():
        subprocess.run(
            [sys.executable, str(EVAL_DIR / "build_gt.py"), str(tree), str(gt_dir)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    out = subprocess.run(
        [sys.executable, str(EVAL_DIR / "make_questions.py"), str(tree), str(gt_dir), str(n), str(seed)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    questions = json.loads((gt_dir / f"questions_seed{seed}.json").read_text())
    return questions, out.splitlines()[0]


def load_defs(gt_dir: Path) -> dict[str, dict]:
    with open(gt_dir / "defs.jsonl") as f:
        return {d["q"]: d for d in map(json.loads, f)}


@dataclass
class Answer:
    """What a system said about one symbol, reduced to comparable facts."""

    tokens: int
    file: str | None = None
    start: int | None = None
    end: int | None = None  # None when the system does not give an end line
    callers: set[str] = field(default_factory=set)
    callees: set[str] = field(default_factory=set)
    omitted_callers: int = 0  # what the system says it left out for the budget
    omitted_callees: int = 0
    error: str = ""
    sites: dict[str, list[str]] = field(default_factory=dict)  # item -> "relation file:line" as shown


@dataclass
class Score:
    def_exact: bool
    start_exact: bool
    callers_found: int
    callers_gt: int
    callers_returned: int
    callees_found: int
    callees_gt: int
    callees_returned: int
    missed_callers: list[str]
    missed_callees: list[str]
    extra_callers: list[str]
    extra_callees: list[str]

    @property
    def evidence(self) -> int:
        """Correct evidence items: the definition (file + range) and every true caller and callee."""
        return int(self.def_exact) + self.callers_found + self.callees_found


def score(question: dict, defs: dict[str, dict], answer: Answer) -> Score:
    d = defs[question["symbol"]]
    gt_callers, gt_callees = set(question["gt_callers"]), set(question["gt_callees"])
    start_ok = answer.file == d["file"] and answer.start == d["start"]
    return Score(
        def_exact=start_ok and answer.end == d["end"],
        start_exact=start_ok,
        callers_found=len(gt_callers & answer.callers),
        callers_gt=len(gt_callers),
        callers_returned=len(answer.callers),
        callees_found=len(gt_callees & answer.callees),
        callees_gt=len(gt_callees),
        callees_returned=len(answer.callees),
        missed_callers=sorted(gt_callers - answer.callers),
        missed_callees=sorted(gt_callees - answer.callees),
        extra_callers=sorted(answer.callers - gt_callers),
        extra_callees=sorted(answer.callees - gt_callees),
    )
