"""`graphctx remember --file` on files that are not what they should be (issue 18): every one is a
typed refusal (exit 64) naming the line, never an internal error (exit 70), and nothing is written;
a UTF-8 byte order mark is accepted, from a file and from stdin alike."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from graphctx import bounds
from graphctx.cli import app
from graphctx.records import LINE_BYTES

runner = CliRunner()
GOOD = b'{"kind": "entity", "id": "a1", "name": "alpha"}\n'


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GRAPHCTX_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("GRAPHCTX_EMBEDDER", "hashing")
    monkeypatch.setenv("GRAPHCTX_TENANT_ID", "jsonl-tenant")
    return tmp_path


def _entities() -> int:
    status = runner.invoke(app, ["status", "--json"])
    assert status.exit_code == 0, status.output
    return int(json.loads(status.stdout)["graph"]["entities"])


def _entity(extra: bytes) -> bytes:
    return b'{"kind": "entity", "id": "b1", "name": "x"' + extra + b"}\n"


def _fact(extra: str) -> bytes:
    return b'{"kind": "fact", "subject_id": "a1", "predicate": "note", "value": "v"' + extra.encode() + b"}\n"


def _bad(second_line: bytes, says: str, name: str, line: int = 2) -> object:
    return pytest.param(GOOD + second_line, line, says, id=name)


LONG_SOURCE = ', "source": "' + "w" * (bounds.SELECTOR_BYTES + 1) + '"'
BAD_FILES = [
    _bad(_entity(b', "aliases": ["b\xff"]'), "not UTF-8", "invalid-utf8"),
    _bad(_entity(', "summary": "café"'.encode("latin-1")), "not UTF-8", "latin-1"),
    pytest.param(GOOD.decode().encode("utf-16"), 1, "UTF-16", id="utf-16"),
    _bad(b"\xc0\xaf\n", "not UTF-8", "overlong-form"),
    _bad(b"\xed\xa0\x80\n", "not UTF-8", "cesu-surrogate"),
    _bad(bytes(range(256)) * 4, "", "binary"),
    _bad(_entity(b', "aliases": ' + b"[" * 1200 + b"]" * 1200), "nesting", "deep-1200"),
    _bad(_entity(b', "aliases": ' + b"[" * 40 + b"]" * 40), "nesting", "deep-40"),
    _bad(_entity(b', "line_start": ' + b"9" * 5000), "5000 digits", "int-5000-digits"),
    _bad(_entity(b', "line_start": ' + b"9" * 30), "30 digits", "int-30-digits"),
    _bad(_fact(r', "source": "a\u0000b"'), "NUL", "nul-source"),
    _bad(_fact(r', "source": "\ud800"'), "surrogate", "surrogate-source"),
    _bad(_fact(LONG_SOURCE), "source", "source-over-bound"),
    _bad(b"x" * (LINE_BYTES * 3), "bound", "huge-line-no-newline"),
]


@pytest.mark.parametrize(("content", "line", "says"), BAD_FILES)
def test_a_bad_file_is_refused_naming_the_line_and_writes_nothing(
    env: Path, content: bytes, line: int, says: str
) -> None:
    path = env / "bad.jsonl"
    path.write_bytes(content)
    result = runner.invoke(app, ["remember", "--file", str(path), "--json"])
    assert result.exit_code == 64, result.output
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "invalid_input" and error["code"] != "internal_error"
    assert error["message"].startswith(f"line {line}:"), error["message"]
    assert says in error["message"], error["message"]
    assert error["details"]["errors"][0]["record"] == f"line {line}"
    assert _entities() == 0


def test_a_utf8_byte_order_mark_is_accepted_from_a_file_and_from_stdin(env: Path) -> None:
    path = env / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + GOOD + b'{"kind": "entity", "id": "a2", "name": "beta"}\n')
    result = runner.invoke(app, ["remember", "--file", str(path), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["entities"]["created"] == 2
    piped = runner.invoke(app, ["remember", "--file", "-", "--json"], input=b"\xef\xbb\xbf" + GOOD)
    assert piped.exit_code == 0, piped.output
    assert "error" not in json.loads(piped.stdout)  # the same record again: nothing new, no refusal
    assert _entities() == 2


def test_a_bad_line_on_stdin_is_refused_like_one_in_a_file(env: Path) -> None:
    piped = runner.invoke(app, ["remember", "--file", "-", "--json"], input=GOOD + b"\xff\xfe\x00\x01\n")
    assert piped.exit_code == 64, piped.output
    assert json.loads(piped.stdout)["error"]["message"].startswith("line 2:")


@pytest.mark.parametrize("size", [1024, 2048, bounds.QUERY_BYTES])
def test_a_long_prose_question_is_answered_by_the_cli(env: Path, size: int) -> None:
    path = env / "m.jsonl"
    path.write_bytes(
        GOOD + b'{"kind": "entity", "id": "c1", "name": "checkout-api", "aliases": ["checkout"]}\n'
    )
    assert runner.invoke(app, ["remember", "--file", str(path)]).exit_code == 0
    question = "why does the checkout service keep failing under load when the nightly batch runs "
    query = (question * (size // len(question) + 1))[:size].strip()
    result = runner.invoke(app, ["recall", query, "--json"])
    assert result.exit_code == 0, result.output  # was 70, an internal error
    assert "checkout-api" in [item["name"] for item in json.loads(result.stdout)["items"]]


def test_a_binary_file_in_a_real_process_exits_64_not_70(env: Path) -> None:
    """The same through the installed entry point, as an operator runs it."""
    path = env / "random.bin"
    path.write_bytes(bytes((i * 7919) % 256 for i in range(20_000)))
    done = subprocess.run(
        [sys.executable, "-m", "graphctx.cli", "remember", "--file", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 64, done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr
