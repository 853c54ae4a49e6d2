"""The inputs the operator's fault run turned into 500s (issue 18), each as a fixed example on every
graph backend, over the Python API, HTTP and MCP: a long prose question, a fact `source` past its
bound or holding NUL or a lone surrogate, a key that is not Unicode, a body nested too deep."""

from __future__ import annotations

import json
from typing import Any

import pytest

from graphctx import api, bounds
from graphctx.errors import BoundExceeded, InputError
from graphctx.retrieval.exact import exact_candidates
from tests.fuzz.conftest import Served
from tests.fuzz.test_requests import MCP_HEADERS, check_http, still_serving

QUESTION = "why does the checkout service keep failing under load when the nightly batch runs "


def prose(size: int) -> str:
    """An ordinary long question of about `size` UTF-8 bytes (never over), with no identifier in it."""
    text = (QUESTION * (size // len(QUESTION) + 1))[:size].strip()
    assert size - 100 < len(text.encode()) <= size
    return text


SIZES = [1024, 2048, 3000, bounds.QUERY_BYTES]


def _mcp(served: Served, operation: str, arguments: Any, *, rpc_error_ok: bool = False) -> dict[str, Any]:
    """The tool call's result, or (`rpc_error_ok`) {"rpc_error": error} for a message refused whole."""
    message = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": operation, "arguments": arguments},
    }
    response = served.client.post(
        "/mcp", content=json.dumps(message).encode("ascii"), headers={**served.headers, **MCP_HEADERS}
    )
    if rpc_error_ok and response.status_code == 400:
        return {"rpc_error": response.json()["error"]}
    assert response.status_code == 200, response.text[:400]
    result: dict[str, Any] = response.json()["result"]
    return result


def test_a_long_question_has_no_identifier_to_look_up() -> None:
    assert exact_candidates(prose(bounds.QUERY_BYTES)) == []  # the case that built an empty lookup


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("operation", ["recall", "search"])
def test_a_long_prose_question_is_answered_on_every_transport(
    served: Served, operation: str, size: int
) -> None:
    query = prose(size)
    answer = getattr(served.service, operation)(served.scope, query)
    names = [item["name"] for item in answer["items"]]
    if operation == "recall":  # search is code search: this tenant has no code, so it answers empty
        assert "checkout-api" in names, names  # found by the lexical legs: "checkout" is its alias

    response = served.client.post(f"/v1/{operation}", json={"query": query}, headers=served.headers)
    check_http(served, response)
    assert response.status_code == 200
    assert [item["name"] for item in response.json()["items"]] == names

    result = _mcp(served, operation, {"query": query})
    assert not result.get("isError"), result
    assert [item["name"] for item in result["structuredContent"]["items"]] == names


def test_a_long_question_naming_an_identifier_still_finds_it_exactly(served: Served) -> None:
    query = prose(3000) + " and is checkout-api to blame"
    answer = served.service.recall(served.scope, query)
    assert answer["items"][0]["name"] == "checkout-api"


FACT = {"subject_id": "svc-1", "predicate": "note", "value": "checked by the known-failure tests"}
BAD_SOURCES = [
    pytest.param("w" * (bounds.SELECTOR_BYTES + 1), "bound_exceeded", id="over-4-KiB"),
    pytest.param("wiki\x00page", "invalid_input", id="nul"),
    pytest.param("wiki\ud800", "invalid_input", id="lone-surrogate"),
]


def _refused(error: dict[str, Any], code: str) -> None:
    """A record's problem: the batch is refused (invalid_input) naming `source`, the record's own
    entry carries `code`."""
    assert error["code"] in ("invalid_input", code) and "source" in error["message"], error
    for problem in error.get("details", {}).get("errors", []):
        assert problem["code"] == code, problem


@pytest.mark.parametrize(("source", "code"), BAD_SOURCES)
def test_a_bad_source_is_refused_naming_it_and_nothing_is_written(
    served: Served, source: str, code: str
) -> None:
    for record in ({**FACT, "source": source}, {"id": "src-x", "name": "src-x", "source": source}):
        kind = "facts" if "predicate" in record else "entities"
        with pytest.raises(InputError) as info:
            served.service.remember(served.scope, **{kind: [record]})
        _refused(info.value.to_dict(), code)
        # ensure_ascii: a lone surrogate travels as its \ud800 escape, as a hostile client sends it
        body = json.dumps({kind: [record]}).encode("ascii")
        headers = {**served.headers, "Content-Type": "application/json"}
        response = served.client.post("/v1/remember", content=body, headers=headers)
        check_http(served, response)
        assert response.status_code in (413, 422)
        _refused(response.json()["error"], code)
        result = _mcp(served, "remember", {kind: [record]}, rpc_error_ok=True)
        if "rpc_error" in result:  # refused as a message, before the tool, naming the field
            assert "facts[0].source" in result["rpc_error"]["message"] or "entities[0].source" in str(result)
        else:
            assert result["isError"]
            _refused(result["structuredContent"]["error"], code)
    stored = served.client.post("/v1/explain", json={"name": "src-x"}, headers=served.headers)
    assert stored.status_code == 404, stored.text[:300]
    still_serving(served)


def test_a_source_at_its_bound_is_kept_whole(served: Served) -> None:
    source = "s" * bounds.SELECTOR_BYTES
    report = served.service.remember(served.scope, facts=[{**FACT, "source": source}])
    assert report["facts"]["created"] + report["facts"]["updated"] == 1, report
    facts = served.service.explain(served.scope, "checkout-api", include_ids=True)["facts"]
    assert source in [f.get("source") for f in facts]


def _nested(depth: int) -> Any:
    value: Any = "a"
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize(
    "body",
    [
        pytest.param({"query": "checkout", "\ud800": 1}, id="surrogate-key"),
        pytest.param({"query": "checkout", "edge_types": _nested(bounds.MAX_DEPTH)}, id="deep"),
    ],
)
def test_bodies_no_model_can_hold_are_4xx_before_any_work(served: Served, body: dict[str, Any]) -> None:
    with pytest.raises((InputError, BoundExceeded)):
        api.parse_request(api.OPERATIONS["recall"].request, body)
    headers = {**served.headers, "Content-Type": "application/json"}
    response = served.client.post("/v1/recall", content=json.dumps(body).encode("ascii"), headers=headers)
    check_http(served, response)
    assert response.status_code in (413, 422)
    result = _mcp(served, "recall", body, rpc_error_ok=True)
    if "rpc_error" in result:  # refused as a message, before the tool
        assert result["rpc_error"]["code"] == -32600 and "validation" not in str(result), result
        return
    assert result["isError"] and result["structuredContent"]["error"]["code"] in (
        "invalid_input",
        "bound_exceeded",
    )
