"""One data directory, several processes: reads beside `graphctx serve`, a typed error for a second
writer, reads that never create a directory, a read-only directory; and the CLI refusing what HTTP
and MCP refuse, with documented exit statuses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from graphctx.cli import app
from tests.transports.live import free_port
from tests.transports.test_serve import SERVE_STOP_TIMEOUT_S, _wait_healthy

runner = CliRunner()
MEMORY = [
    {"kind": "entity", "id": "checkout", "name": "checkout-api", "type": "service",
     "summary": "Turns carts into orders and charges cards."},
    {"kind": "entity", "id": "payments", "name": "Payments Team", "type": "team"},
    {"kind": "fact", "subject_id": "checkout", "predicate": "owned_by", "object_id": "payments"},
]  # fmt: skip


def cli(data: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`graphctx` in its own process, as a user runs it."""
    env = {**os.environ, "GRAPHCTX_DATA_DIR": str(data), "GRAPHCTX_EMBEDDER": "hashing"}
    return subprocess.run(
        [sys.executable, "-m", "graphctx.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def load(data: Path, tmp: Path) -> None:
    path = tmp / "memory.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in MEMORY), encoding="utf-8")
    done = cli(data, "remember", "--file", str(path), "--json")
    assert done.returncode == 0, done.stderr


@pytest.fixture
def serving(tmp_path: Path) -> Iterator[tuple[Path, subprocess.Popen[bytes]]]:
    data = tmp_path / "data"
    load(data, tmp_path)
    port = free_port()
    env = {**os.environ, "GRAPHCTX_DATA_DIR": str(data), "GRAPHCTX_EMBEDDER": "hashing"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "graphctx.cli", "serve", "--port", str(port), "--log-level", "warning"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        _wait_healthy(f"http://127.0.0.1:{port}", proc)
        yield data, proc
    finally:
        proc.terminate()
        try:
            proc.wait(SERVE_STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(SERVE_STOP_TIMEOUT_S)


@pytest.mark.slow
def test_reads_work_while_serve_holds_the_directory_and_a_second_writer_is_refused(serving):
    data, proc = serving
    recall = cli(data, "recall", "checkout-api", "--json")
    assert recall.returncode == 0, recall.stderr
    env = json.loads(recall.stdout)
    assert env["items"][0]["name"] == "checkout-api"
    assert env["legs"]["bm25"]["status"] == "ok"
    assert env["legs"]["dense"]["status"] == "ok"  # the flat index reads beside its writer
    explain = cli(data, "explain", "checkout-api", "--json")
    assert explain.returncode == 0 and json.loads(explain.stdout)["facts"][0]["object"] == "Payments Team"
    status = json.loads(cli(data, "status", "--json").stdout)
    assert status["mode"] == "read" and status["writer_pid"] == proc.pid

    write = cli(data, "remember", "--entity", '{"id": "x", "name": "x"}', "--json")
    assert write.returncode == 75
    error = json.loads(write.stdout)["error"]
    assert error["code"] == "data_dir_locked" and error["details"]["pid"] == proc.pid
    assert f"another graphctx process is writing to {data} (pid {proc.pid})" in error["message"]
    human = cli(data, "forget", "--entity", "checkout")
    assert human.returncode == 75 and "is writing to" in human.stderr and "Traceback" not in human.stderr


def test_a_read_never_creates_a_data_directory(tmp_path: Path) -> None:
    missing = tmp_path / "typo" / "data"
    for command in (["recall", "anything"], ["status"], ["search", "x"], ["explain", "x"]):
        r = cli(missing, *command, "--json")
        assert r.returncode == 78, (command, r.stderr)
        error = json.loads(r.stdout)["error"]
        assert error["code"] == "data_dir_missing"
        assert str(missing) in error["message"] and "GRAPHCTX_DATA_DIR" in error["message"]
    assert not missing.exists() and not missing.parent.exists()
    flag = runner.invoke(app, ["--data-dir", str(missing), "recall", "x"])
    assert flag.exit_code == 78 and "does not exist" in flag.stderr
    assert not missing.exists()


@pytest.fixture
def read_only_dir(tmp_path: Path) -> Iterator[Path]:
    """A data directory on a read-only bind mount (as root, permission bits would not stop us)."""
    data = tmp_path / "data"
    load(data, tmp_path)
    mount = tmp_path / "ro"
    mount.mkdir()
    steps = [["mount", "--bind", str(data), str(mount)], ["mount", "-o", "remount,ro,bind", str(mount)]]
    for step in steps:
        if subprocess.run(step, capture_output=True).returncode != 0:
            subprocess.run(["umount", str(mount)], capture_output=True)
            pytest.skip("cannot make a read-only bind mount here (needs root and mount rights)")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def test_a_read_only_directory_serves_reads_and_refuses_writes(read_only_dir: Path) -> None:
    recall = cli(read_only_dir, "recall", "checkout-api", "--json")
    assert recall.returncode == 0, recall.stderr
    assert json.loads(recall.stdout)["items"][0]["name"] == "checkout-api"
    write = cli(read_only_dir, "remember", "--entity", '{"id": "x", "name": "x"}')
    assert write.returncode == 73 and "read-only" in write.stderr


@pytest.fixture
def loaded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    data = tmp_path / "data"
    load(data, tmp_path)
    monkeypatch.setenv("GRAPHCTX_DATA_DIR", str(data))
    monkeypatch.setenv("GRAPHCTX_EMBEDDER", "hashing")
    return data


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["recall", "checkout", "--depth", "9"], "depth"),
        (["recall", "checkout", "--depth", "0"], "depth"),
        (["neighbourhood", "checkout-api", "--limit", "0"], "limit"),
        (["neighbourhood", "checkout-api", "--depth", "3"], "depth"),
        (["path", "checkout-api", "Payments Team", "--max-depth", "5"], "max_depth"),
        (["callers", "checkout-api", "--limit", "51"], "limit"),
    ],
)
def test_out_of_range_options_are_refused_like_http_and_mcp(
    loaded: Path, args: list[str], field: str
) -> None:
    r = runner.invoke(app, [*args, "--json"])
    assert r.exit_code == 64, r.output
    error = json.loads(r.stdout)["error"]
    assert error["code"] == "invalid_input" and error["details"]["field"] == field


def test_exit_statuses_are_distinct(loaded: Path) -> None:
    assert runner.invoke(app, ["recall", "--no-such-option"]).exit_code == 2  # usage (click)
    runner.invoke(app, ["remember", "--entity", '{"id": "checkout-2", "name": "checkout-api"}'])
    assert runner.invoke(app, ["explain", "checkout-api"]).exit_code == 4  # ambiguous name
    assert runner.invoke(app, ["explain", "nothing-like-it"]).exit_code == 3  # not found
    assert runner.invoke(app, ["remember", "--entity", '{"id": "x"}']).exit_code == 64  # bad input


def test_ids_show_in_human_output(loaded: Path) -> None:
    plain = runner.invoke(app, ["explain", "checkout"])
    with_ids = runner.invoke(app, ["explain", "checkout", "--ids"])
    assert plain.exit_code == with_ids.exit_code == 0
    assert "id=checkout" not in plain.stdout
    assert "id=checkout" in with_ids.stdout and "id=f_" in with_ids.stdout
    recall = runner.invoke(app, ["recall", "checkout-api", "--ids"])
    assert "id=checkout" in recall.stdout
