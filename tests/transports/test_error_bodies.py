"""What a failing backend tells a remote caller (issue 18): the error's code, which store and backend
failed and when to retry, never its URL, a server path or the driver's words; the server log keeps
those, under the request id. The CLI's --json, for the local operator, keeps the whole story."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from graphctx import registry
from graphctx.auth import Principal
from graphctx.errors import (
    BackendError,
    BackendUnavailable,
    ConfigError,
    DataDirLocked,
    GraphctxError,
    WriteIncomplete,
)
from graphctx.kernel.templates import CATALOG
from graphctx.scope import Scope
from graphctx.service import ContextService
from graphctx.transports.http import create_app
from graphctx.transports.mcp import mount_mcp
from tests.conftest import make_settings

URL = "ws://10.1.2.3:8182/gremlin"
SECRET_PATH = "/srv/graphctx/data/lexical/meta.json"
DRIVER = "ClientConnectorError: Cannot connect to host 10.1.2.3:8182 ssl:default [Errno 111]"
MACHINE = (URL, "10.1.2.3", SECRET_PATH, "/srv/", "ClientConnectorError", "Errno", "Traceback")
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _reveals_nothing(text: str) -> None:
    for secret in MACHINE:
        assert secret not in text, f"{secret!r} in {text[:400]}"


@pytest.mark.parametrize(
    "error",
    [
        BackendUnavailable(f"gremlin server at {URL} is unavailable: {DRIVER}", url=URL),
        BackendError(
            f"HugeGraph at {URL} answered 500: java.lang.IllegalStateException", url=URL, status=500
        ),
        WriteIncomplete(f"the graph failed during the write ({DRIVER})", cause="backend_unavailable"),
        ConfigError(f"the lexical index at {SECRET_PATH} has another layout", path=SECRET_PATH),
        DataDirLocked(f"{SECRET_PATH} is locked by pid 4242", pid=4242, path=SECRET_PATH),
    ],
    ids=lambda e: e.code,
)
def test_an_error_about_the_machine_shows_its_public_form_only(error: GraphctxError) -> None:
    public = error.to_dict()
    _reveals_nothing(json.dumps(public))
    assert public["code"] == error.code and public["message"]
    full = error.to_dict(full=True)
    assert full["message"] == error.message and full.get("details", {}) == error.details


def test_a_backend_error_names_the_store_and_backend_and_keeps_the_retry_hint() -> None:
    error = BackendUnavailable(f"down at {URL}", url=URL, store="graph", backend="gremlin", retry_after_s=2)
    public = error.to_dict()
    assert "the graph store (gremlin)" in public["message"] and "retry" in public["message"]
    assert public["details"] == {"store": "graph", "backend": "gremlin", "retry_after_s": 2}


class Stack:
    def __init__(self, service: ContextService, client: TestClient, token: str) -> None:
        self.service, self.client, self.token = service, client, token
        self.headers = {"Authorization": f"Bearer {token}"}


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[Stack]:
    settings = make_settings(tmp_path / "data")
    with ContextService.open(settings) as service:
        keys = registry.factory("keys", settings.key_store_backend)(settings)
        token = keys.create(Principal("agent", "tenant-e")).token
        service.remember(Scope("tenant-e"), [{"id": "svc-1", "name": "checkout-api"}])
        app = create_app(service, keys, settings)
        mount_mcp(app, service, keys)
        with TestClient(app, raise_server_exceptions=False) as client:
            yield Stack(service, client, token)
        keys.close()


def _graph_fails(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every graph template fails as a driver does when the server is gone: through the adapter's
    own dispatch, so the store and backend are named the way they are in production."""

    def down(*_: Any) -> Any:
        raise BackendUnavailable(f"gremlin server at {URL} is unavailable: {DRIVER}", url=URL)

    monkeypatch.setattr(stack.service.stores.graph, "handlers", lambda: dict.fromkeys(CATALOG, down))


def test_a_graph_outage_is_a_503_naming_the_store_without_its_url(
    stack: Stack, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    _graph_fails(stack, monkeypatch)
    with caplog.at_level(logging.WARNING):
        response = stack.client.post("/v1/recall", json={"query": "checkout-api"}, headers=stack.headers)
    assert response.status_code == 503, response.text
    _reveals_nothing(response.text)
    error = response.json()["error"]
    assert error["code"] == "backend_unavailable"
    assert "the graph store (sqlite)" in error["message"]
    assert error["details"] == {"store": "graph", "backend": "sqlite"}
    request_id = response.json()["request_id"]
    logged = [r.getMessage() for r in caplog.records if request_id in r.getMessage()]
    assert logged and URL in logged[0]  # the operator still has the whole story


def test_a_graph_outage_over_mcp_reveals_nothing(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> None:
    _graph_fails(stack, monkeypatch)
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "recall", "arguments": {"query": "checkout-api"}},
    }
    response = stack.client.post("/mcp", json=call, headers={**stack.headers, **MCP_HEADERS})
    assert response.status_code == 200, response.text
    _reveals_nothing(response.text)
    result = response.json()["result"]
    assert result["isError"]
    assert result["structuredContent"]["error"]["code"] == "backend_unavailable"


def test_a_failed_write_and_a_failed_index_update_reveal_nothing(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    def index_down(*_: Any) -> None:
        raise BackendError(f"tantivy index at {SECRET_PATH} failed: OSError [Errno 28] No space left")

    monkeypatch.setattr(stack.service.stores.lexical, "upsert", index_down)
    body = {"entities": [{"id": "svc-2", "name": "payments-api"}]}
    response = stack.client.post("/v1/remember", json=body, headers=stack.headers)
    assert response.status_code == 200, response.text  # the graph committed: the write is done
    _reveals_nothing(response.text)
    assert response.json()["index_errors"], response.json()
    monkeypatch.undo()

    _graph_fails(stack, monkeypatch)
    response = stack.client.post(
        "/v1/remember", json={"entities": [{"id": "x", "name": "x"}]}, headers=stack.headers
    )
    assert response.status_code >= 500 and response.status_code != 500, response.text
    _reveals_nothing(response.text)
    assert response.json()["error"]["code"] in ("write_incomplete", "backend_unavailable")


def test_a_configuration_error_is_a_typed_503_not_a_500(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    def unconfigured(*_: Any) -> Any:
        raise ConfigError(f"the lexical index at {SECRET_PATH} has another layout", path=SECRET_PATH)

    monkeypatch.setattr(stack.service.stores.graph, "handlers", lambda: dict.fromkeys(CATALOG, unconfigured))
    response = stack.client.post("/v1/explain", json={"name": "checkout-api"}, headers=stack.headers)
    assert response.status_code == 503, response.text
    assert response.json()["error"]["code"] == "config_error"
    _reveals_nothing(response.text)
