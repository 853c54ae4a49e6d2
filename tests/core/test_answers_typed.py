"""`graphctx.answers.parse` is typed per operation: a type checker (mypy, as CI runs it) sees
`parse("recall", ...)` as a RecallAnswer, so a Python API user gets the model's fields checked."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

PROBE = """\
from typing import assert_type

from graphctx.answers import RecallAnswer, Shape, StatusReport, SymbolAnswer, parse

assert_type(parse("recall", {}), RecallAnswer)
assert_type(parse("symbol", {}), SymbolAnswer)
assert_type(parse("status", {}), StatusReport)
op: str = "status"
assert_type(parse(op, {}), Shape)
name: str = parse("recall", {}).items[0].name
"""


@pytest.mark.slow
def test_parse_is_typed_per_operation_and_a_wrong_field_is_a_type_error(tmp_path):
    pytest.importorskip("mypy", reason="mypy is in the dev extra")
    package = tmp_path / "path" / "graphctx"
    package.parent.mkdir()
    package.symlink_to(REPO / "core")  # mypy reads core as the package graphctx, as .ci/run does
    good, bad = tmp_path / "good.py", tmp_path / "bad.py"
    good.write_text(PROBE, encoding="utf-8")
    bad.write_text(PROBE + "wrong: int = parse('recall', {}).items[0].name\n", encoding="utf-8")

    def mypy(path: Path) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "MYPYPATH": str(tmp_path / "path")}
        return subprocess.run(
            [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(path)],
            capture_output=True, text=True, env=env, cwd=REPO, timeout=600,
        )  # fmt: skip

    checked = mypy(good)
    assert checked.returncode == 0, checked.stdout
    wrong = mypy(bad)
    assert wrong.returncode == 1 and 'incompatible types in assignment (expression has type "str"' in (
        wrong.stdout.lower()
    ), wrong.stdout


def test_an_unknown_operation_is_a_key_error_naming_it():
    from graphctx.answers import parse

    with pytest.raises(KeyError, match="no operation named 'recal'"):
        parse("recal", {})
