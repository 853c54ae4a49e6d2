"""`graphctx keys create/list/revoke` and `graphctx serve` as an operator runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import httpx
import pytest
from typer.testing import CliRunner

from graphctx import registry
from graphctx.auth import AuthError
from graphctx.cli import app
from graphctx.settings import Settings
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


@pytest.mark.slow
def test_serve_starts_answers_and_stops(env):
    created = json.loads(
        runner.invoke(app, ["keys", "create", "--name", "srv", "--tenant", "acme", "--json"]).stdout
    )
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "graphctx.cli", "serve", "--port", str(port), "--log-level", "warning"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ},
    )
    try:
        health = _wait_healthy(url, proc)
        assert health.status_code == 200 and health.json() == {"status": "ok"}
        assert httpx.get(url + "/readyz", timeout=10.0).json()["status"] == "ready"
        headers = {"Authorization": f"Bearer {created['token']}"}
        r = httpx.post(url + "/v1/status", json={}, headers=headers, timeout=10.0)
        assert r.status_code == 200 and r.json()["scope"]["tenant_id"] == "acme"
        assert httpx.post(url + "/v1/status", json={}, timeout=10.0).status_code == 401
    finally:
        proc.terminate()
        try:
            proc.wait(SERVE_STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(SERVE_STOP_TIMEOUT_S)
            raise AssertionError(f"`graphctx serve` did not stop within {SERVE_STOP_TIMEOUT_S} s") from None
    assert proc.returncode == 0, proc.stderr.read() if proc.stderr else b""
