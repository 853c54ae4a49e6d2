"""The Go module fixture (tests/code/fixtures/goshop) copied to a fresh directory for a test."""

from __future__ import annotations

import shutil
from pathlib import Path

FIXTURE = Path(__file__).parent / "fixtures" / "goshop"
MOD = "example.com/shop"


def copy_goshop(into: Path) -> Path:
    root = into / "goshop"
    shutil.copytree(FIXTURE, root)
    return root
