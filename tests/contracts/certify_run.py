"""Run `graphctx certify` as a user would (the CLI, in a subprocess) and read the certificate."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
TIMEOUT_S = 1800


@dataclass(frozen=True)
class Certified:
    code: int
    certificate: dict[str, Any] | None
    output: str
    out: Path

    @property
    def why(self) -> str:
        """What to print when an assertion fails: the verdict line, the reasons, the log tail."""
        log = (self.out / "pytest.log").read_text()[-4000:] if (self.out / "pytest.log").is_file() else ""
        reasons = "\n".join(self.certificate["reasons"]) if self.certificate else "no certificate"
        return f"{self.output}\n{reasons}\n{log}"

    def tests(self, outcome: str) -> list[str]:
        assert self.certificate is not None
        return [t["test"] for t in self.certificate["tests"] if t["outcome"] == outcome]

    def check(self, name: str) -> dict[str, Any]:
        assert self.certificate is not None
        return next(c for c in self.certificate["checks"] if c["check"] == name)


def certify(
    args: list[str],
    out: Path,
    *,
    cwd: Path = REPO,
    env: dict[str, str] | None = None,
    cli: bool = True,
    timeout_s: float = TIMEOUT_S,
    sigint_ignored: bool = False,
) -> Certified:
    """`graphctx certify ARGS --out OUT` (or `python -m graphctx.contracts certify`) from `cwd`;
    `sigint_ignored`: started as a shell starts a background job, with Ctrl-C ignored."""
    command = [sys.executable, "-m", "graphctx.cli"] if cli else [sys.executable, "-m", "graphctx.contracts"]
    base = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_XDIST")}
    proc = subprocess.run(
        [*command, "certify", *args, "--out", str(out)],
        cwd=cwd,
        env={**base, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
        preexec_fn=(lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if sigint_ignored else None,
    )
    path = out / "certificate.json"
    certificate = json.loads(path.read_text()) if path.is_file() else None
    return Certified(proc.returncode, certificate, proc.stdout + proc.stderr, out)
