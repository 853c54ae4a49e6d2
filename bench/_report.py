"""Shared benchmark plumbing: percentiles, machine description, and writing a marked section of
docs/results.md so each benchmark owns its part of the file."""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import tempfile
from datetime import UTC, datetime
from pathlib import Path

RESULTS = Path(__file__).resolve().parent.parent / "docs" / "results.md"


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    lo, hi = int(k), min(int(k) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def summary(values: list[float]) -> str:
    return f"{percentile(values, 0.5):.2f} / {percentile(values, 0.95):.2f} / {percentile(values, 0.99):.2f}"


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def machine() -> str:
    cpu = "unknown cpu"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split()[1])
        mem = f", {kb / 1024 / 1024:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    return f"{os.cpu_count()} cores ({cpu}){mem}, Python {platform.python_version()}, {platform.system()}"


def commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
            cwd=RESULTS.parent,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def header(command: str, size: str) -> str:
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return (
        f"- date: {now}\n- machine: {machine()}\n- data: {size}\n"
        f"- command: `{command}`\n- commit: {commit()}\n"
    )


def write_section(name: str, body: str) -> None:
    """Replace (or append) the section between `<!-- bench:name -->` markers in docs/results.md."""
    start, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
    text = RESULTS.read_text(encoding="utf-8") if RESULTS.exists() else "# Measured results\n"
    block = f"{start}\n{body.rstrip()}\n{end}"
    if start in text and end in text:
        before, rest = text.split(start, 1)
        text = before + block + rest.split(end, 1)[1]
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(text, encoding="utf-8")


def layout(tree: Path) -> Path:
    """A directory to put on PYTHONPATH so that `import graphctx` is `tree`'s code (core/ with
    adapters/ and contracts/ inside, out of symlinks, as .ci/layout builds it)."""
    root = Path(tempfile.mkdtemp(prefix="graphctx-baseline-layout-"))
    package = root / "graphctx"
    package.mkdir()
    for entry in (tree / "core").iterdir():
        (package / entry.name).symlink_to(entry.resolve())
    for name in ("adapters", "contracts"):
        (package / name).symlink_to((tree / name).resolve())
    return root
