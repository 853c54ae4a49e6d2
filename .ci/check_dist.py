"""Check what `python -m build` made: the wheel holds every module and data file of the three
package trees (core -> graphctx, adapters -> graphctx.adapters, contracts -> graphctx.contracts) and
nothing else of the checkout; the sdist also holds the tests, docs, benchmarks and launchers.

    python .ci/check_dist.py DIST_DIR
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

TREES = {"core": "graphctx", "adapters": "graphctx/adapters", "contracts": "graphctx/contracts"}
SDIST_MUST_HOLD = ("README.md", "pyproject.toml", "tests/conftest.py", "docs/operations.md",
                   "compose/native/up", "compose/native/env.sh", "bench/_report.py", ".ci/run")  # fmt: skip
ROOT = Path(__file__).resolve().parent.parent


def tracked() -> set[str]:
    """The package files of the checkout as wheel paths."""
    listed = subprocess.run(
        ["git", "ls-files", *TREES], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    out = set()
    for path in listed:
        top, _, rest = path.partition("/")
        out.add(f"{TREES[top]}/{rest}")
    return out


def main(dist: Path) -> int:
    [wheel] = dist.glob("graphctx-*.whl")
    [sdist] = dist.glob("graphctx-*.tar.gz")
    with zipfile.ZipFile(wheel) as zf:
        names = {n for n in zf.namelist() if not n.startswith("graphctx-") or "dist-info" not in n}
        metadata = zf.read(next(n for n in zf.namelist() if n.endswith("dist-info/METADATA"))).decode()
        entry_points = zf.read(next(n for n in zf.namelist() if n.endswith("entry_points.txt"))).decode()
    package = {n for n in names if ".dist-info/" not in n}
    expected = tracked()
    problems = [f"wheel lacks {p}" for p in sorted(expected - package)]
    problems += [f"wheel holds {p}, not a package file of the checkout" for p in sorted(package - expected)]
    for extra in ("hugegraph", "gremlin", "qdrant-server", "contracts"):
        if f"Provides-Extra: {extra}" not in metadata:
            problems.append(f"the wheel's metadata lacks the extra {extra}")
    for needed in ("graphctx = graphctx.launch:main", "graphctx_contracts = graphctx.contracts.plugin"):
        if needed not in entry_points:
            problems.append(f"the wheel's entry points lack {needed!r}")
    with tarfile.open(sdist) as tf:
        held = {m.name.partition("/")[2] for m in tf.getmembers()}
    problems += [f"sdist lacks {p}" for p in SDIST_MUST_HOLD if p not in held]
    problems += [f"sdist holds {p}" for p in sorted(held) if "/.run/" in p or p.endswith(".pyc")]
    for line in problems:
        print(f"check_dist: {line}", file=sys.stderr)
    if not problems:
        print(f"check_dist: {wheel.name} holds the {len(expected)} package files; {sdist.name} "
              f"holds {len(held)} files")  # fmt: skip
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
