"""The CLI as a user drives it: human output, --json, exit codes, progress-free bulk loads."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from graphctx.cli import app

runner = CliRunner()


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("GRAPHCTX_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("GRAPHCTX_EMBEDDER", "hashing")
    monkeypatch.setenv("GRAPHCTX_TENANT_ID", "cli-tenant")
    return tmp_path


def _jsonl(path: Path, records) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    return path


RECORDS = [
    {"kind": "entity", "id": "a1", "name": "api", "type": "service", "summary": "public api"},
    {
        "kind": "entity",
        "id": "a2",
        "name": "api",
        "type": "service",
        "summary": "internal api",
        "path": "x/y.py",
    },
    {"kind": "entity", "id": "t1", "name": "Platform Team", "type": "team"},
    {"kind": "fact", "subject_id": "a1", "predicate": "owned_by", "object_id": "t1"},
]


def test_remember_recall_and_explain_round_trip(env):
    result = runner.invoke(app, ["remember", "--file", str(_jsonl(env / "m.jsonl", RECORDS)), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["entities"]["created"] == 3
    result = runner.invoke(app, ["recall", "Platform Team", "--json"])
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert answer["items"][0]["name"] == "Platform Team"
    human = runner.invoke(app, ["recall", "Platform Team"])
    assert human.exit_code == 0 and "Platform Team" in human.stdout and "budget:" in human.stdout


def test_ambiguous_name_exits_2_with_candidates(env):
    runner.invoke(app, ["remember", "--file", str(_jsonl(env / "m.jsonl", RECORDS))])
    result = runner.invoke(app, ["explain", "api"])
    assert result.exit_code == 4
    assert "a1" in result.output and "x/y.py::api" in result.output
    result = runner.invoke(app, ["explain", "api", "--json"])
    assert result.exit_code == 4
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "ambiguous_name"
    assert {c["identity"] for c in error["details"]["candidates"]} == {"a1", "x/y.py::api"}
    assert runner.invoke(app, ["explain", "x/y.py::api", "--json"]).exit_code == 0


def test_bad_input_gets_a_typed_error_and_writes_nothing(env):
    bad = env / "bad.jsonl"
    bad.write_text('{"kind": "entity", "id": "ok", "name": "fine"}\nnot json\n', encoding="utf-8")
    result = runner.invoke(app, ["remember", "--file", str(bad)])
    assert result.exit_code == 64
    assert "line 2" in result.output
    status = json.loads(runner.invoke(app, ["status", "--json"]).stdout)
    assert status["graph"]["entities"] == 0
    too_long = runner.invoke(app, ["recall", "q" * 5000, "--json"])
    assert too_long.exit_code == 64
    assert json.loads(too_long.stdout)["error"]["details"]["bound"] == "query"


def test_forget_reconcile_and_status(env):
    runner.invoke(app, ["remember", "--file", str(_jsonl(env / "m.jsonl", RECORDS))])
    assert runner.invoke(app, ["forget", "--entity", "a2", "--json"]).exit_code == 0
    result = runner.invoke(app, ["reconcile", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["graph_entities"] == 2
    status = json.loads(runner.invoke(app, ["status", "--json"]).stdout)
    assert status["scope"]["tenant_id"] == "cli-tenant" and status["pending_index_work"] == 0


def test_demo_runs_end_to_end_in_a_fresh_directory(tmp_path):
    """The README's first command, as a subprocess with the default embedder."""
    target = tmp_path / "demo"
    environ = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHCTX_")}
    proc = subprocess.run(
        [sys.executable, "-m", "graphctx.cli", "demo", "--data-dir", str(target), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        env=environ,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    first = out["recalls"][0]["answer"]
    assert first["items"][0]["name"] == "checkout-api"
    assert any(f.get("object") == "Commerce Platform" for f in first["items"][0]["facts"])
    again = subprocess.run(
        [sys.executable, "-m", "graphctx.cli", "demo", "--data-dir", str(target)],
        capture_output=True,
        text=True,
        timeout=300,
        env=environ,
    )
    assert again.returncode == 64 and "not empty" in again.stderr


def test_cli_json_is_the_python_api_envelope(env):
    """The same query gives the same envelope over the Python API and `--json` (timings and as_of aside)."""
    from graphctx.scope import Scope
    from graphctx.service import ContextService
    from graphctx.settings import Settings

    runner.invoke(app, ["remember", "--file", str(_jsonl(env / "m.jsonl", RECORDS))])
    with ContextService.open(Settings()) as service:
        expected = service.recall(Scope("cli-tenant"), "Platform Team api", depth=2)
    result = runner.invoke(app, ["recall", "Platform Team api", "--depth", "2", "--json"])
    got = json.loads(result.stdout)
    for answer in (expected, got):
        answer.pop("timings_ms")
        answer.pop("as_of")
    assert got == expected
