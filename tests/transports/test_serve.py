"""`graphctx keys create/list/revoke` and `graphctx serve` as an operator runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from graphctx import registry
from graphctx.auth import AuthError
from graphctx.cli import app
from graphctx.settings import Settings
from tests.transports import raw
from tests.transports.live import free_port

runner = CliRunner()
SERVE_START_TIMEOUT_S = 60.0
SERVE_STOP_TIMEOUT_S = 20.0


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("GRAPHCTX_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("GRAPHCTX_EMBEDDER", "hashing")
    return tmp_path


def _verify(token: str):
    settings = Settings()
    store = registry.factory("keys", settings.key_store_backend)(settings)
    try:
        return store.verify(token)
    finally:
        store.close()


def test_keys_create_list_and_revoke(env):
    r = runner.invoke(
        app,
        ["keys", "create", "--name", "agent one", "--tenant", "acme", "--namespace", "ops",
         "--namespace", "dev", "--graph", "repo-1", "--json"],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    created = json.loads(r.stdout)
    assert created["token"].startswith("gctx_") and created["key_id"] in created["token"]
    assert (created["tenant_id"], created["namespaces"], created["graph_ids"]) == (
        "acme",
        ["ops", "dev"],
        ["repo-1"],
    )
    principal = _verify(created["token"])
    assert (principal.tenant_id, principal.namespaces, principal.graph_ids) == (
        "acme",
        ("ops", "dev"),
        ("repo-1",),
    )

    human = runner.invoke(app, ["keys", "create", "--name", "agent two", "--tenant", "acme"])
    assert human.exit_code == 0, human.output
    token = human.stdout.strip().splitlines()[-1]
    assert token.startswith("gctx_") and _verify(token).namespaces == ("default",)

    listed = runner.invoke(app, ["keys", "list", "--json"])
    assert listed.exit_code == 0
    rows = json.loads(listed.stdout)
    assert {r["name"] for r in rows} == {"agent one", "agent two"}
    assert created["token"] not in listed.stdout and "token" not in rows[0]
    assert "agent one" in runner.invoke(app, ["keys", "list"]).stdout

    revoked = runner.invoke(app, ["keys", "revoke", created["key_id"], "--json"])
    assert revoked.exit_code == 0 and json.loads(revoked.stdout) == {
        "key_id": created["key_id"],
        "revoked": True,
    }
    with pytest.raises(AuthError):
        _verify(created["token"])
    assert [r["name"] for r in json.loads(runner.invoke(app, ["keys", "list", "--json"]).stdout)] == [
        "agent two"
    ]
    again = runner.invoke(app, ["keys", "revoke", created["key_id"]])
    assert again.exit_code == 3 and "no active key" in again.stderr


def test_keys_create_refuses_bad_selectors(env):
    r = runner.invoke(app, ["keys", "create", "--name", "x", "--tenant", "bad tenant!", "--json"])
    assert r.exit_code == 77
    assert json.loads(r.stdout)["error"]["code"] == "scope_denied"
    r = runner.invoke(app, ["keys", "create", "--name", " ", "--tenant", "acme"])
    assert r.exit_code == 64 and "--name" in r.stderr


def _wait_healthy(url: str, proc: subprocess.Popen[bytes]) -> httpx.Response:
    deadline = time.monotonic() + SERVE_START_TIMEOUT_S
    while True:
        if proc.poll() is not None:
            raise AssertionError(f"`graphctx serve` exited with {proc.returncode}: {proc.stderr.read()!r}")
        try:
            return httpx.get(url + "/healthz", timeout=2.0)
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"`graphctx serve` did not answer /healthz within {SERVE_START_TIMEOUT_S} s"
                ) from None
            time.sleep(0.1)


@contextmanager
def serving(**env: str) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`graphctx serve` in a subprocess on a free port, with extra environment; stopped with SIGTERM,
    which must end it cleanly."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "graphctx.cli", "serve", "--port", str(port), "--log-level", "warning"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, **env},
    )
    try:
        health = _wait_healthy(url, proc)
        assert health.status_code == 200 and health.json() == {"status": "ok"}
        yield url, proc
    finally:
        proc.terminate()
        try:
            proc.wait(SERVE_STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(SERVE_STOP_TIMEOUT_S)
            raise AssertionError(f"`graphctx serve` did not stop within {SERVE_STOP_TIMEOUT_S} s") from None
    assert proc.returncode == 0, proc.stderr.read() if proc.stderr else b""


def _create_key(tenant: str = "acme") -> str:
    r = runner.invoke(app, ["keys", "create", "--name", "srv", "--tenant", tenant, "--json"])
    assert r.exit_code == 0, r.output
    return str(json.loads(r.stdout)["token"])


@pytest.mark.slow
def test_serve_starts_answers_and_stops(env):
    token = _create_key()
    with serving() as (url, _proc):
        assert httpx.get(url + "/readyz", timeout=10.0).json()["status"] == "ready"
        headers = {"Authorization": f"Bearer {token}"}
        r = httpx.post(url + "/v1/status", json={}, headers=headers, timeout=10.0)
        assert r.status_code == 200 and r.json()["scope"]["tenant_id"] == "acme"
        assert httpx.post(url + "/v1/status", json={}, timeout=10.0).status_code == 401


# -- the served process under attack (issue 19): its own memory, descriptors and threads -------------


def _proc_status(pid: int) -> dict[str, int]:
    """VmHWM (peak resident memory, KiB), Threads, and the open descriptors of a process."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmHWM", "Threads"):
            fields[name] = int(value.split()[0])
    fields["fds"] = len(os.listdir(f"/proc/{pid}/fd"))
    return fields


def _served(url: str, token: str) -> None:
    r = httpx.post(url + "/v1/status", json={}, headers={"Authorization": f"Bearer {token}"}, timeout=30.0)
    assert r.status_code == 200, r.text


def _upload_unauthenticated(port: int, path: str, size: int, ends: list[bool]) -> None:
    """Send a body of `size` bytes without a key, all but its last byte, then hold the connection
    until the server closes it; record whether it did (within raw.WAIT_S)."""
    sock = raw.connect(port)
    try:
        sock.sendall(raw.head("POST", path, {"Accept": "application/json, text/event-stream"}, length=size))
        chunk = b"x" * (256 * 1024)
        sent = 0
        while sent < size - 1:
            sent += sock.send(chunk[: size - 1 - sent])
    except OSError:
        pass  # the server answered and closed while the body was on its way
    try:
        ends.append(raw.closed_by_server(sock))
    finally:
        sock.close()


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the server's /proc status")
def test_unauthenticated_slow_bodies_do_not_grow_the_servers_memory(env):
    """The issue's attack: 60 connections without a key, each sending a 5 MiB body but its last byte.
    Before, the server buffered every body before it checked the key (+375 MiB). Now each is refused
    from its headers and nothing of the body is kept: the server's peak memory grows by less than
    1 MiB per connection (a buffered body is 5 MiB), while a legitimate client is served throughout."""
    token = _create_key()
    connections, size = 60, 5 * 1024 * 1024
    with serving() as (url, proc):
        port = int(url.rsplit(":", 1)[1])
        for _ in range(3):  # warm up: the first requests import and allocate what every request uses
            _served(url, token)
            assert httpx.post(url + "/v1/status", content=b"{}", timeout=30.0).status_code == 401
        before = _proc_status(proc.pid)
        closed: list[bool] = []
        attackers = [
            threading.Thread(target=_upload_unauthenticated, args=(port, path, size, closed))
            for path in ("/v1/remember", "/mcp")
            for _ in range(connections // 2)
        ]
        for thread in attackers:
            thread.start()
        for _ in range(5):
            _served(url, token)
        for thread in attackers:
            thread.join(raw.WAIT_S * 2)
        assert not any(t.is_alive() for t in attackers), "an upload was still held"
        _served(url, token)
        after = _proc_status(proc.pid)
    assert closed == [True] * connections, "the server kept refused uploads open"
    grown_mib = (after["VmHWM"] - before["VmHWM"]) / 1024
    assert grown_mib < connections, f"peak memory grew by {grown_mib:.0f} MiB ({before} -> {after})"


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the server's /proc status")
def test_stalled_connections_and_mcp_streams_hold_nothing_for_long(env):
    """The issue's other attacks on the real process: 600 connections that never finish their headers
    (before: all held after 22 s) and 300 GET /mcp event streams (before: 318 descriptors and 57
    threads held). The server holds at most its connection cap, closes the rest at the header
    timeout, answers every GET at once, and serves a legitimate client throughout."""
    token = _create_key()
    cap = 64
    limits = {"GRAPHCTX_HTTP_MAX_CONNECTIONS": str(cap), "GRAPHCTX_HTTP_HEADER_TIMEOUT_S": "2"}
    with serving(**limits) as (url, proc), ExitStack() as stack:
        port = int(url.rsplit(":", 1)[1])
        _served(url, token)
        before = _proc_status(proc.pid)
        stalled = []
        for i in range(600):
            sock = stack.enter_context(raw.connect(port))
            sock.sendall(b"POST /v1/recall HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            stalled.append(sock)
            if i % 100 == 0:
                _served(url, token)
        _served(url, token)  # answered after every stalled connection was accepted
        during = _proc_status(proc.pid)
        assert during["fds"] <= before["fds"] + cap, (before, during)
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30.0) as c:
            for _ in range(300):
                r = c.get("/mcp", headers={"Accept": "text/event-stream"})
                assert r.status_code == 405
            streams = _proc_status(proc.pid)
        assert streams["Threads"] <= before["Threads"] + 2, (before, streams)
        assert all(raw.closed_by_server(sock) for sock in stalled)  # the header timeout closed the rest
        _served(url, token)
        after = _proc_status(proc.pid)
    assert after["fds"] <= before["fds"] + 2, (before, after)
