"""Property-based fuzzing of every operation's request, over HTTP and MCP (streamable HTTP), on every
graph backend: no answer is a 5xx or an internal error, every error has the documented shape and
reveals nothing of the machine, and the server keeps serving afterwards."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from graphctx import api
from tests.fuzz.conftest import Served, examples
from tests.fuzz.strategies import KNOWN, payloads

OPERATIONS = sorted(api.OPERATIONS)
LEAKS = ("Traceback", "ws://", "http://", 'File "', "/tmp/", "sqlite3.", "gremlin_python", "pydantic.dev")
FUZZ = settings(
    max_examples=examples(10),
    deadline=None,
    derandomize=True,  # the same examples every run: a CI failure reproduces locally
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _encode(payload: Any) -> bytes:
    # ensure_ascii: a lone surrogate travels as its \\ud800 escape, as a hostile client sends it
    return json.dumps(payload, allow_nan=True).encode("ascii")


def no_leak(text: str, served: Served) -> None:
    for leak in (*LEAKS, str(served.service.settings.data_dir)):
        assert leak not in text, f"{leak!r} in {text[:400]}"


def check_http(served: Served, response: Any) -> None:
    assert response.status_code < 500, response.text[:600]
    body = response.json()
    assert isinstance(body, dict)
    if response.status_code >= 400:
        assert set(body) == {"error", "request_id"}, body
        assert isinstance(body["error"]["code"], str) and body["error"]["code"] != "internal_error"
        assert isinstance(body["error"]["message"], str) and body["error"]["message"]
        assert set(body["error"]) <= {"code", "message", "details"}
        assert body["request_id"] == response.headers["x-request-id"]
    no_leak(response.text, served)


@pytest.mark.parametrize("operation", OPERATIONS)
def test_http_requests_never_fail_the_server(served: Served, operation: str) -> None:
    @FUZZ
    @given(payload=payloads(operation))
    def run(payload: Any) -> None:
        headers = {**served.headers, "Content-Type": "application/json"}
        response = served.client.post(f"/v1/{operation}", content=_encode(payload), headers=headers)
        check_http(served, response)

    for payload in KNOWN.get(operation, []):
        run.hypothesis.inner_test(payload)  # type: ignore[attr-defined]
    run()
    still_serving(served)


MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.mark.parametrize("operation", OPERATIONS)
def test_mcp_tool_calls_never_fail_the_server(served: Served, operation: str) -> None:
    @FUZZ
    @given(arguments=payloads(operation))
    def run(arguments: Any) -> None:
        message = {
            "jsonrpc": "2.0",
            "id": 7,
            "method": "tools/call",
            "params": {"name": operation, "arguments": arguments},
        }
        response = served.client.post(
            "/mcp", content=_encode(message), headers={**served.headers, **MCP_HEADERS}
        )
        assert response.status_code < 500, response.text[:600]
        body = response.json()
        no_leak(response.text, served)
        if "error" in body:  # a JSON-RPC error: the arguments were not an object, or not parseable
            assert set(body["error"]) <= {"code", "message", "data"}
            assert "validation error" not in body["error"]["message"].lower()
            return
        result = body["result"]
        if result.get("isError"):
            error = result["structuredContent"]["error"]
            assert error["code"] != "internal_error", error
            assert set(error) <= {"code", "message", "details"} and error["message"]

    for arguments in KNOWN.get(operation, []):
        run.hypothesis.inner_test(arguments)  # type: ignore[attr-defined]
    run()
    still_serving(served)


@pytest.mark.parametrize(
    "body",
    [
        b'[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]',
        b'"x"',
        b"\xff\xfe{}",
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"recall","arguments":[1]}}',
        b"[" * 5000 + b"]" * 5000,
        b'{"jsonrpc":"2.0","id":1}',
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"recall","arguments":{"query":"\\ud800"}}}',
    ],
    ids=["batch", "bare-string", "not-utf8", "arguments-array", "deep", "no-method", "lone-surrogate"],
)
def test_mcp_malformed_messages_are_json_rpc_errors_without_a_dump(served: Served, body: bytes) -> None:
    response = served.client.post("/mcp", content=body, headers={**served.headers, **MCP_HEADERS})
    assert 400 <= response.status_code < 500 or response.status_code == 200, response.text
    error = response.json()["error"]
    assert "validation error" not in error["message"].lower() and "pydantic" not in error["message"]
    still_serving(served)


@pytest.mark.parametrize(
    "body",
    [b"[" * 100_000 + b"]" * 100_000, b'{"query": ' + b"9" * 5000 + b"}", b"\xc0\xaf", b"\xed\xa0\x80"],
    ids=["deep", "huge-int", "overlong-utf8", "cesu-surrogate"],
)
def test_http_undecodable_bodies_are_4xx(served: Served, body: bytes) -> None:
    headers = {**served.headers, "Content-Type": "application/json"}
    response = served.client.post("/v1/recall", content=body, headers=headers)
    check_http(served, response)
    assert response.status_code >= 400


def still_serving(served: Served) -> None:
    response = served.client.post("/v1/recall", json={"query": "checkout-api"}, headers=served.headers)
    assert response.status_code == 200, response.text[:400]
    assert response.json()["items"][0]["name"] == "checkout-api"
