"""Run pytest in a subprocess and read its JUnit report: how the contract suite's own tests see
what the suite does to an adapter (broken adapters, the guard, the worked example)."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Outcome:
    cls: str
    name: str  # with parameters, e.g. test_search_k_is_clamped[7-7]
    status: str  # passed | failed | skipped (skipped includes xfailed)
    message: str  # a failure's message and full text (a long message is cut short); a skip's reason

    @property
    def base(self) -> str:
        return self.name.split("[", 1)[0]


@dataclass(frozen=True)
class PytestRun:
    code: int
    outcomes: list[Outcome]
    console: str
    """The console tail, for failure messages."""


def run_pytest(args: list[str], *, cwd: Path, junit: Path, timeout_s: float) -> PytestRun:
    """`python -m pytest ARGS` in `cwd` without the cache provider or the caller's xdist settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_ADDOPTS", "PYTEST_XDIST"))}
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", f"--junitxml={junit}", *args]
    proc = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout_s, check=False
    )
    console = proc.stdout[-6000:] + proc.stderr[-2000:]
    assert junit.is_file(), f"pytest wrote no report (exit {proc.returncode}):\n{console}"
    outcomes = []
    for case in ET.parse(junit).getroot().iter("testcase"):
        status, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error"):
                status, message = "failed", f"{child.get('message', '')}\n{child.text or ''}"
            elif child.tag == "skipped":
                status, message = "skipped", child.get("message", "")
        cls = case.get("classname", "").rsplit(".", 1)[-1]
        outcomes.append(Outcome(cls, case.get("name", ""), status, message))
    return PytestRun(proc.returncode, outcomes, console)
