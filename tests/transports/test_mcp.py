"""The MCP server driven by the SDK's own client, in-process, over streamable HTTP (a real uvicorn
server on loopback, API keys in headers) and over stdio (a spawned `python -m
graphctx.transports.mcp_stdio`), in both client modes: one tool per operation, every operation,
tenant isolation under colliding data, bad arguments, and parity with the Python API."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from fastapi import FastAPI
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from graphctx import api, registry
from graphctx.answers import ANSWERS, schema_of
from graphctx.auth import Principal
from graphctx.envelope import dumps, tokens_for
from graphctx.errors import AmbiguousName
from graphctx.kernel.ports import KeyStore
from graphctx.scope import Scope, shared_scope
from graphctx.service import ContextService
from graphctx.settings import Settings
from graphctx.transports.mcp import INSTRUCTIONS, build_mcp, fixed_authenticator, mount_mcp, tools
from tests.code.ops_graph import load_code
from tests.conftest import TENANT_A, TENANT_B, fixed_clock, make_settings
from tests.service.memory_data import load
from tests.transports.live import LiveServer
from tests.transports.schemas import check

pytestmark = pytest.mark.anyio

REPO = Path(__file__).resolve().parents[2]
MODES = ["auto", "legacy"]
CALL_TIMEOUT_S = 60.0
OPERATIONS = sorted(api.OPERATIONS)

A_SCRATCH = Scope("tenant-a", "scratch")
B_PRIVATE_NS = Scope("tenant-b", "b-private")
B_GRAPH = shared_scope("b-graph")  # the one shared copy b-key may read
CODE_A = shared_scope("code-a")  # a shared code graph a-key may read
B_SECRETS = ("MARKER-B", "tenant-b", "b-only-secret", "SECRET-OF-B", "b-private", "b-graph")
B_ONLY = [
    {"id": "b-only-secret", "name": "b-only-secret", "type": "service", "summary": "SECRET-OF-B MARKER-B"},
    {"id": "dup-b-1", "name": "api", "type": "service", "summary": "first MARKER-B"},
    {"id": "dup-b-2", "name": "api", "type": "service", "summary": "second MARKER-B"},
    {"id": "dup-b-3", "name": "api", "type": "service", "summary": "third MARKER-B"},
]
A_EXTRA = [
    {"id": "api-1", "name": "api", "type": "service", "summary": "public api MARKER-A"},
    {"id": "api-2", "name": "api", "type": "service", "summary": "internal api MARKER-A"},
]
A_ENTITIES = 6 + len(A_EXTRA)
PRINCIPAL_A = Principal("agent-a", "tenant-a", ("default", "scratch"), ("code-a",))
PRINCIPAL_B = Principal("agent-b", "tenant-b", ("default", "b-private"), ("b-graph",))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def seed(service: ContextService) -> None:
    load(service, TENANT_A, "MARKER-A")
    service.remember(TENANT_A, A_EXTRA)
    load(service, TENANT_B, "MARKER-B")
    service.remember(TENANT_B, B_ONLY)
    load(service, B_PRIVATE_NS, "MARKER-B")
    load(service, B_GRAPH, "MARKER-B")
    load_code(service, CODE_A)


@dataclass
class World:
    settings: Settings
    service: ContextService
    keys: KeyStore
    tokens: dict[str, str]
    url: str


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    """Two tenants with colliding ids, names and aliases; a key per tenant; the MCP endpoint mounted
    on a FastAPI app served by uvicorn on loopback."""
    settings = make_settings(tmp_path_factory.mktemp("mcp") / "data")
    with ContextService.open(settings, clock=fixed_clock) as service:
        seed(service)
        keys: KeyStore = registry.factory("keys", settings.key_store_backend)(settings)
        tokens = {"a": keys.create(PRINCIPAL_A).token, "b": keys.create(PRINCIPAL_B).token}
        gone = keys.create(Principal("agent-gone", "tenant-a"))
        keys.revoke(gone.key_id)
        tokens["revoked"] = gone.token
        app = FastAPI()
        mount_mcp(app, service, keys)
        try:
            with LiveServer(app) as server:
                yield World(settings, service, keys, tokens, f"{server.url}/mcp")
        finally:
            keys.close()


@asynccontextmanager
async def in_memory(world: World, mode: str, principal: Principal = PRINCIPAL_A) -> AsyncIterator[Client]:
    server = build_mcp(world.service, fixed_authenticator(principal))
    async with Client(server, mode=mode) as client:
        yield client


@asynccontextmanager
async def over_http(world: World, mode: str, headers: dict[str, str]) -> AsyncIterator[Client]:
    async with (
        httpx2.AsyncClient(headers=headers, timeout=CALL_TIMEOUT_S) as http,
        Client(streamable_http_client(world.url, http_client=http), mode=mode) as client,
    ):
        yield client


async def call(client: Client, tool: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    """Call a tool; check the text is the canonical JSON of the structured content and that the
    answer matches the tool's published output schema; return it with `_error` set on error results."""
    with anyio.fail_after(CALL_TIMEOUT_S):
        result = await client.call_tool(tool, arguments or {})
    assert len(result.content) == 1
    text = result.content[0].text  # type: ignore[union-attr]
    data = result.structured_content
    assert isinstance(data, dict)
    assert text == dumps(data), "the text content must be the canonical JSON of the structured content"
    if result.is_error:
        assert set(data) == {"error"}
        assert {"code", "message"} <= set(data["error"])
        return {"_error": data["error"]}
    check_against_schema(tool, data)  # the client checked it leniently; every field must be declared
    return data


def ok(data: dict[str, Any]) -> dict[str, Any]:
    assert "_error" not in data, data
    return data


def error(data: dict[str, Any], code: str) -> dict[str, Any]:
    assert "_error" in data, data
    assert data["_error"]["code"] == code, data
    return data["_error"]


def no_b(data: Any) -> None:
    text = dumps(data)
    for secret in B_SECRETS:
        assert secret not in text, f"{secret!r} leaked: {text[:500]}"


def comparable(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in ("timings_ms", "as_of")}


READS: list[tuple[str, dict[str, Any]]] = [
    ("recall", {"query": "who owns checkout", "depth": 2}),
    ("recall", {"query": "PAY-502-UPSTREAM", "include_ids": True}),
    ("explain", {"name": "checkout-api"}),
    ("explain", {"name": "svc-checkout", "include_history": False, "include_ids": True}),
    ("neighbourhood", {"name": "checkout-api", "depth": 2}),
    ("neighbourhood", {"name": "payment-gateway", "direction": "out", "edge_types": ["owned_by"]}),
    ("path", {"source": "redis-sessions", "target": "Payments Team"}),
    ("status", {}),
]


async def every_operation(client: Client, world: World) -> None:
    """All eight operations through one session of tenant A; writes go to A's scratch namespace."""
    for tool, args in READS:
        data = ok(await call(client, tool, args))
        no_b(data)
        assert data["scope"]["tenant_id"] == "tenant-a"
    recall = ok(await call(client, "recall", {"query": "checkout-api"}))
    assert recall["items"][0]["name"] == "checkout-api"
    assert recall["op"] == "recall"
    path = ok(await call(client, "path", {"source": "redis-sessions", "target": "Payments Team"}))
    assert path["found"] is True
    scratch = {"namespace": "scratch"}
    written = ok(
        await call(
            client,
            "remember",
            {
                **scratch,
                "entities": [
                    {"id": "mcp-e1", "name": "mcp-gateway", "type": "service", "summary": "MCP scratch"},
                    {"id": "mcp-e2", "name": "mcp-team", "type": "team"},
                ],
                "facts": [{"subject_id": "mcp-e1", "predicate": "owned_by", "object_id": "mcp-e2"}],
            },
        )
    )
    assert written["entities"]["created"] + written["entities"]["unchanged"] == 2
    explained = ok(await call(client, "explain", {**scratch, "name": "mcp-gateway", "include_ids": True}))
    fact_ids = [f["id"] for f in explained["facts"] if "id" in f]
    assert explained["facts"][0]["object"] == "mcp-team"
    assert fact_ids
    assert ok(await call(client, "forget", {**scratch, "fact_ids": fact_ids}))["facts_invalidated"] == 1
    assert ok(await call(client, "forget", {**scratch, "entity_ids": ["mcp-e1", "mcp-e2"]})) == {
        "entities_deleted": 2,
        "facts_removed": 1,
        "facts_invalidated": 0,
    }
    repaired = ok(await call(client, "reconcile", scratch))
    assert repaired["graph_entities"] == 0
    status = ok(await call(client, "status", scratch))
    assert status["scope"] == {"tenant_id": "tenant-a", "namespace": "scratch", "graph_id": ""}
    assert status["graph"]["entities"] == 0
    assert "data_dir" not in status


# -- the catalogue ---------------------------------------------------------------------------------


DESCRIPTION_TOKENS = 3_000
"""All tool descriptions together, in the envelope's estimate (bytes / 4): what an agent's context
pays for the catalogue before any call."""


@pytest.mark.parametrize("mode", MODES)
async def test_one_tool_per_operation_with_descriptions_and_schemas(world, mode):
    async with in_memory(world, mode) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
    assert sorted(listed) == OPERATIONS
    for name, tool in listed.items():
        op = api.OPERATIONS[name]
        assert tool.input_schema == schema_of(op.request, absent_not_null=False)
        assert set(tool.input_schema["properties"]) == set(op.request.model_fields)
        assert tool.input_schema["additionalProperties"] is False
        assert tool.description and tool.description.startswith(op.summary)
        assert "Use " in tool.description, f"{name}: say when to pick this tool"
        assert tool.output_schema == schema_of(ANSWERS[name])
        assert tool.output_schema["type"] == "object" and tool.output_schema["properties"]
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is (not op.mutating)
        if "max_tokens" in op.request.model_fields:
            assert "max_tokens" in tool.description  # its default
    assert listed["forget"].annotations.destructive_hint is True  # type: ignore[union-attr]
    assert "owned_by" in (listed["remember"].description or "")  # the predicate allowlist is spelled out


def test_tool_descriptions_fit_the_budget_and_say_shared_guidance_once():
    descriptions = [t.description or "" for t in tools()]
    assert sum(tokens_for(len(d.encode("utf-8"))) for d in descriptions) <= DESCRIPTION_TOKENS
    sentences = [s.strip() for d in descriptions for s in d.split(". ") if len(s.strip()) > 40]
    repeated = {s for s in sentences if sentences.count(s) > 1}
    assert not repeated, f"say it once, in the server instructions: {sorted(repeated)[:3]}"
    for shared in (
        "scope_denied",
        "ambiguous_name",
        "identity",
        "max_tokens x 4 bytes",
        "omissions",
        "truncated",
        "include_ids=true",
        "structuredContent is the same object",
        "follow_up",
    ):
        assert shared in INSTRUCTIONS, shared
        assert not any(shared in d for d in descriptions if shared not in ("omissions", "follow_up")), shared


async def test_the_server_sends_its_instructions(world):
    async with in_memory(world, "auto") as client:
        assert client.instructions == INSTRUCTIONS


def check_against_schema(tool: str, data: dict[str, Any]) -> None:
    check(schema_of(ANSWERS[tool]), data, tool)


def test_an_answer_field_the_models_do_not_declare_fails_the_schema_check(world):
    answer = json.loads(dumps(api.execute(world.service, PRINCIPAL_A, "recall", {"query": "checkout"})))
    check_against_schema("recall", answer)
    answer["items"][0]["surprise"] = 1
    with pytest.raises(AssertionError, match="surprise"):
        check_against_schema("recall", answer)
    del answer["items"][0]["surprise"]
    answer["legs"]["bm25"]["status"] = "sideways"
    with pytest.raises(AssertionError, match="sideways"):
        check_against_schema("recall", answer)


def test_tools_are_generated_from_the_catalogue():
    assert [t.name for t in tools()] == list(api.OPERATIONS)


# -- every operation, every transport, both client modes -----------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_every_operation_in_memory(world, mode):
    async with in_memory(world, mode) as client:
        await every_operation(client, world)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("header", ["bearer", "x-api-key"])
async def test_every_operation_over_streamable_http(world, mode, header):
    token = world.tokens["a"]
    headers = {"Authorization": f"Bearer {token}"} if header == "bearer" else {"X-API-Key": token}
    async with over_http(world, mode, headers) as client:
        await every_operation(client, world)


# -- parity with the Python API ------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_structured_content_equals_the_python_api(world, mode):
    async with over_http(world, mode, {"X-API-Key": world.tokens["a"]}) as client:
        for tool, args in READS:
            over_mcp = ok(await call(client, tool, args))
            direct = api.execute(world.service, PRINCIPAL_A, tool, args)
            assert comparable(over_mcp) == comparable(json.loads(dumps(direct)))
        # the Python facade itself, not only the shared catalogue
        envelope = world.service.recall(TENANT_A, "who owns checkout", depth=2)
        over_mcp = ok(await call(client, "recall", {"query": "who owns checkout", "depth": 2}))
        assert comparable(over_mcp) == comparable(json.loads(dumps(envelope)))


@pytest.mark.parametrize("mode", MODES)
async def test_the_text_an_agent_receives_stays_within_max_tokens(world, mode):
    async with in_memory(world, mode) as client:
        for tool, args in [
            ("recall", {"query": "checkout payments redis api team incident", "depth": 2}),
            ("explain", {"name": "checkout-api"}),
            ("neighbourhood", {"name": "checkout-api", "depth": 2}),
        ]:
            result = await client.call_tool(tool, {**args, "max_tokens": 256})
            text = result.content[0].text  # type: ignore[union-attr]
            assert not result.is_error, text
            assert len(text.encode("utf-8")) <= 256 * 4
            assert result.structured_content == json.loads(text)
            assert result.structured_content["budget"]["max_tokens"] == 256  # type: ignore[index]
        truncated = ok(await call(client, "recall", {"query": "checkout", "depth": 2, "max_tokens": 256}))
        assert truncated["truncated"] is True
        assert truncated["omissions"]
        clamped = ok(await call(client, "recall", {"query": "checkout", "max_tokens": 1}))
        assert clamped["budget"]["max_tokens"] == 256


CODE_READS: list[tuple[str, dict[str, Any]]] = [
    ("search", {"query": "Cart.total"}),
    ("symbol", {"name": "shop/cart.py::Cart.total", "limit": 1}),
    ("callers", {"name": "shop.tax.rate", "depth": 2, "max_tokens": 400}),
    ("callees", {"name": "shop.cart.Cart.add", "depth": 2}),
    (
        "impact",
        {"diff": "--- a/shop/cart.py\n+++ b/shop/cart.py\n@@ -30 +30 @@\n-x\n+y\n", "files": ["x.py"]},
    ),
]


@pytest.mark.parametrize("mode", MODES)
async def test_code_operations_equal_the_python_api(world, mode):
    s = world.service
    facade = {
        "search": lambda: s.search(CODE_A, "Cart.total"),
        "symbol": lambda: s.symbol(CODE_A, "shop/cart.py::Cart.total", limit=1),
        "callers": lambda: s.callers(CODE_A, "shop.tax.rate", depth=2, max_tokens=400),
        "callees": lambda: s.callees(CODE_A, "shop.cart.Cart.add", depth=2),
        "impact": lambda: s.impact(
            CODE_A, ["x.py"], "--- a/shop/cart.py\n+++ b/shop/cart.py\n@@ -30 +30 @@\n-x\n+y\n"
        ),
    }
    async with over_http(world, mode, {"X-API-Key": world.tokens["a"]}) as client:
        for tool, args in CODE_READS:
            over_mcp = ok(await call(client, tool, {**args, "graph_id": "code-a"}))
            assert comparable(over_mcp) == comparable(json.loads(dumps(facade[tool]()))), tool
            assert len(dumps(over_mcp).encode("utf-8")) <= over_mcp["budget"]["max_tokens"] * 4
        err = error(await call(client, "symbol", {"name": "helper", "graph_id": "code-a"}), "ambiguous_name")
        assert {c["identity"] for c in err["details"]["candidates"]} == {
            "shop.cart.helper",
            "shop.tax.helper",
        }
        # the shared graph is read-only through credentials
        denied = error(
            await call(client, "forget", {"entity_ids": ["x"], "graph_id": "code-a"}), "scope_denied"
        )
        assert "read-only" in denied["message"]
    with pytest.raises(AmbiguousName) as raised:
        s.symbol(CODE_A, "helper")
    assert raised.value.to_dict() == err


# -- ambiguity -------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
async def test_an_ambiguous_name_lists_own_candidates_with_the_identity_to_pass_back(world, mode):
    async with over_http(world, mode, {"X-API-Key": world.tokens["a"]}) as client:
        err = error(await call(client, "explain", {"name": "api"}), "ambiguous_name")
        candidates = err["details"]["candidates"]
        assert sorted(c["summary"] for c in candidates) == ["internal api MARKER-A", "public api MARKER-A"]
        no_b(err)
        for candidate in candidates:
            chosen = ok(await call(client, "explain", {"name": candidate["identity"]}))
            assert chosen["subject"]["summary"] == candidate["summary"]
    # the same error the Python API raises
    with pytest.raises(AmbiguousName) as raised:
        api.execute(world.service, PRINCIPAL_A, "explain", {"name": "api"})
    assert raised.value.to_dict() == err


# -- isolation -------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("field", "foreign", "nonexistent"),
    [
        ("tenant_id", "tenant-b", "tenant-zz"),
        ("namespace", "b-private", "no-such-ns"),
        ("graph_id", "b-graph", "no-such-graph"),
    ],
)
async def test_a_foreign_selector_is_refused_alike_whether_or_not_it_exists(
    world, mode, field, foreign, nonexistent
):
    async with over_http(world, mode, {"X-API-Key": world.tokens["a"]}) as client:
        for tool, args in [("recall", {"query": "checkout-api"}), ("explain", {"name": "checkout-api"}),
                           ("status", {}), ("remember", {"entities": A_EXTRA})]:  # fmt: skip
            seen = error(await call(client, tool, {**args, field: foreign}), "scope_denied")
            unseen = error(await call(client, tool, {**args, field: nonexistent}), "scope_denied")
            assert seen == unseen
            no_b(seen)
    assert world.service.status(B_PRIVATE_NS)["graph"]["entities"] == 6  # nothing was written there


@pytest.mark.parametrize("mode", MODES)
async def test_tenant_a_never_obtains_counts_or_learns_of_b(world, mode):
    async with over_http(world, mode, {"Authorization": f"Bearer {world.tokens['a']}"}) as client:
        for query in [
            "checkout-api",
            "who owns checkout",
            "PAY-502-UPSTREAM",
            "b-only-secret",
            "SECRET-OF-B",
        ]:
            envelope = ok(await call(client, "recall", {"query": query, "depth": 2, "include_ids": True}))
            no_b(envelope)
            assert envelope["isolation"]["rejected"] == 0
        # a name only B has is unknown to A, exactly like a name nobody has
        only_b = error(await call(client, "explain", {"name": "b-only-secret"}), "not_found")
        nobody = error(await call(client, "explain", {"name": "never-existed"}), "not_found")
        assert only_b["message"].replace("b-only-secret", "X") == nobody["message"].replace(
            "never-existed", "X"
        )
        for tool, args in [
            ("neighbourhood", {"name": "b-only-secret"}),
            ("path", {"source": "b-only-secret", "target": "checkout-api"}),
        ]:
            error(await call(client, tool, args), "not_found")
        # B has three entities named "api", A two: A's ambiguity lists only its own
        assert len(error(await call(client, "explain", {"name": "api"}), "ambiguous_name")["details"]
                   ["candidates"]) == 2  # fmt: skip
        status = ok(await call(client, "status"))
        no_b(status)
        assert status["graph"]["entities"] == A_ENTITIES
        assert status["lexical_docs"] == A_ENTITIES
        assert status["vectors"] == A_ENTITIES
        # writes and deletes cannot reach B
        error(
            await call(client, "remember", {"entities": [{"id": "x", "name": "x", "tenant_id": "tenant-b"}]}),
            "scope_denied",
        )
        gone = ok(await call(client, "forget", {"entity_ids": ["b-only-secret"], "fact_ids": ["f_x"]}))
        assert gone == {"entities_deleted": 0, "facts_removed": 0, "facts_invalidated": 0}
    assert world.service.explain(TENANT_B, "b-only-secret")["subject"]["name"] == "b-only-secret"
    assert world.service.status(TENANT_B)["graph"]["entities"] == 6 + len(B_ONLY)


@pytest.mark.parametrize("mode", MODES)
async def test_b_sees_its_own_selectors_and_never_a(world, mode):
    async with over_http(world, mode, {"X-API-Key": world.tokens["b"]}) as client:
        private = ok(await call(client, "status", {"namespace": "b-private"}))
        assert private["scope"] == {"tenant_id": "tenant-b", "namespace": "b-private", "graph_id": ""}
        graph = ok(await call(client, "recall", {"query": "checkout-api", "graph_id": "b-graph"}))
        assert graph["scope"]["graph_id"] == "b-graph"
        for data in (private, graph, ok(await call(client, "explain", {"name": "checkout-api"}))):
            assert "MARKER-A" not in dumps(data) and "tenant-a" not in dumps(data)
        error(await call(client, "status", {"namespace": "scratch"}), "scope_denied")


async def test_headers_never_choose_the_scope(world):
    crafted = {"X-API-Key": world.tokens["a"], "X-Tenant-Id": "tenant-b", "X-Graphctx-Namespace": "b-private"}
    async with over_http(world, "auto", crafted) as client:
        status = ok(await call(client, "status"))
    assert status["scope"]["tenant_id"] == "tenant-a"
    no_b(status)


# -- authentication over HTTP ----------------------------------------------------------------------

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
ACCEPT = {"Accept": "application/json, text/event-stream"}


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"X-API-Key": "gctx_000000000000_" + "x" * 43},
        {"Authorization": "Basic Zm9vOmJhcg=="},
        {"Authorization": "Bearer not-a-key"},
        "revoked",
        "two-keys",
    ],
    ids=["none", "unknown", "basic", "malformed", "revoked", "two-keys"],
)
async def test_the_endpoint_refuses_requests_without_one_valid_key(world, headers):
    if headers == "revoked":
        headers = {"X-API-Key": world.tokens["revoked"]}
    elif headers == "two-keys":
        headers = {"X-API-Key": world.tokens["b"], "Authorization": f"Bearer {world.tokens['a']}"}
    async with httpx2.AsyncClient(timeout=CALL_TIMEOUT_S) as http:
        for method in ("POST", "GET", "DELETE"):
            body = json.dumps(INITIALIZE) if method == "POST" else None
            response = await http.request(
                method,
                world.url,
                content=body,
                headers={**ACCEPT, "Content-Type": "application/json", **headers},
            )
            assert response.status_code == 401, response.text
            assert response.headers["www-authenticate"] == "Bearer"
            assert response.json()["error"]["code"] == "unauthenticated"
            no_b(response.text)


async def test_a_client_with_a_bad_key_fails_to_connect(world):
    with pytest.raises(Exception) as info, anyio.fail_after(CALL_TIMEOUT_S):
        async with over_http(world, "legacy", {"X-API-Key": world.tokens["revoked"]}) as client:
            await client.call_tool("status", {})
    # the SDK's client reports the 401 as an MCPError ("Server returned an error response")
    assert isinstance(info.value, MCPError) or info.group_contains(MCPError)


async def test_a_valid_key_is_served(world):
    async with httpx2.AsyncClient(timeout=CALL_TIMEOUT_S) as http:
        response = await http.post(
            world.url, json=INITIALIZE, headers={**ACCEPT, "X-API-Key": world.tokens["a"]}
        )
    assert response.status_code == 200, response.text
    assert response.json()["result"]["serverInfo"]["name"] == "graphctx"


# -- bad arguments ---------------------------------------------------------------------------------

BAD_ARGUMENTS: list[tuple[str, dict[str, Any], str, str]] = [
    ("recall", {"query": 3}, "invalid_input", "query"),
    ("recall", {"query": ["checkout"]}, "invalid_input", "query"),
    ("recall", {"query": "x", "depth": "2"}, "invalid_input", "depth"),
    ("recall", {"query": "x", "depth": 3}, "invalid_input", "depth"),
    ("recall", {"query": "x", "max_tokens": "many"}, "invalid_input", "max_tokens"),
    ("recall", {"query": "x", "include_ids": "yes"}, "invalid_input", "include_ids"),
    ("recall", {"query": "q" * 5 * 1024}, "bound_exceeded", "4096"),
    ("recall", {"query": "x", "bogus": 1}, "invalid_input", "bogus"),
    ("recall", {}, "invalid_input", "query"),
    ("recall", {"query": ""}, "invalid_input", "query"),
    ("recall", {"query": "nul\x00byte"}, "invalid_input", "NUL"),
    ("explain", {"name": "n" * 5 * 1024}, "bound_exceeded", "name"),
    ("explain", {"name": None}, "invalid_input", "name"),
    ("neighbourhood", {"name": "checkout-api", "direction": "sideways"}, "invalid_input", "direction"),
    ("neighbourhood", {"name": "checkout-api", "edge_types": "calls"}, "invalid_input", "edge_types"),
    ("neighbourhood", {"name": "checkout-api", "limit": 10_000}, "invalid_input", "limit"),
    ("path", {"source": "checkout-api"}, "invalid_input", "target"),
    ("path", {"source": "a", "target": "b", "max_depth": 99}, "invalid_input", "max_depth"),
    ("remember", {"entities": "not a list"}, "invalid_input", "entities"),
    ("remember", {"entities": [{"id": "x"}]}, "invalid_input", "name"),
    ("remember", {"facts": [{"subject_id": "a", "predicate": "hacks", "object_id": "b"}]}, "invalid_input",
     "allowlist"),
    ("forget", {"entity_ids": "svc-checkout"}, "invalid_input", "entity_ids"),
    ("forget", {"entity_ids": ["x"] * 1001}, "invalid_input", "entity_ids"),
    ("status", {"verbose": True}, "invalid_input", "verbose"),
    ("status", {"namespace": 7}, "invalid_input", "namespace"),
    ("no-such-tool", {}, "not_found", "no-such-tool"),
]  # fmt: skip


@pytest.mark.parametrize("mode", MODES)
async def test_bad_arguments_are_errors_naming_the_problem_and_the_server_keeps_serving(world, mode):
    async with over_http(world, mode, {"X-API-Key": world.tokens["a"]}) as client:
        for tool, args, code, named in BAD_ARGUMENTS:
            err = error(await call(client, tool, args), code)
            assert named in err["message"] or named in dumps(err.get("details", {})), (tool, args, err)
            assert "Traceback" not in err["message"]
        assert ok(await call(client, "status"))["graph"]["entities"] == A_ENTITIES
    assert world.service.status(A_SCRATCH)["graph"]["entities"] == 0  # no bad write landed


@pytest.mark.parametrize("mode", MODES)
async def test_an_unexpected_failure_reveals_nothing_and_the_server_keeps_serving(world, mode, monkeypatch):
    def explode(*_: object, **__: object) -> None:
        raise RuntimeError("secret internals at /srv/graphctx/data")

    async with in_memory(world, mode) as client:
        monkeypatch.setattr(world.service, "neighbourhood", explode)
        err = error(await call(client, "neighbourhood", {"name": "checkout-api"}), "internal_error")
        assert "secret" not in dumps(err) and "/srv" not in dumps(err)
        monkeypatch.undo()
        ok(await call(client, "neighbourhood", {"name": "checkout-api"}))


# -- stdio -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def stdio_data(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Settings, str]]:
    """Seeded data on disk, closed again so the spawned server can open it; a key for tenant B."""
    settings = make_settings(tmp_path_factory.mktemp("mcp-stdio") / "data")
    with ContextService.open(settings) as service:
        seed(service)
    keys: KeyStore = registry.factory("keys", settings.key_store_backend)(settings)
    try:
        yield settings, keys.create(PRINCIPAL_B).token
    finally:
        keys.close()


def stdio_env(settings: Settings, **extra: str) -> dict[str, str]:
    return {
        "GRAPHCTX_DATA_DIR": str(settings.data_dir),
        "GRAPHCTX_EMBEDDER": "hashing",
        "GRAPHCTX_TENANT_ID": "tenant-a",
        **extra,
    }


def stdio_params(env: dict[str, str]) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "graphctx.transports.mcp_stdio"], env=env, cwd=str(REPO)
    )


@pytest.mark.parametrize("mode", MODES)
async def test_stdio_serves_every_operation_as_the_local_principal(stdio_data, mode):
    settings, _ = stdio_data
    with anyio.fail_after(120):
        async with Client(stdio_params(stdio_env(settings)), mode=mode) as client:
            assert sorted(t.name for t in (await client.list_tools()).tools) == OPERATIONS
            for tool, args in READS:
                data = ok(await call(client, tool, args))
                no_b(data)
                assert data["scope"]["tenant_id"] == "tenant-a"
            error(await call(client, "status", {"tenant_id": "tenant-b"}), "scope_denied")
            error(await call(client, "explain", {"name": "b-only-secret"}), "not_found")
            error(await call(client, "recall", {"query": 5}), "invalid_input")
            ok(await call(client, "remember", {"entities": [{"id": "st-1", "name": "stdio-e"}]}))
            assert ok(await call(client, "explain", {"name": "stdio-e"}))["subject"]["name"] == "stdio-e"
            assert ok(await call(client, "forget", {"entity_ids": ["st-1"]}))["entities_deleted"] == 1
            assert ok(await call(client, "reconcile"))["graph_entities"] == A_ENTITIES
            assert ok(await call(client, "status"))["graph"]["entities"] == A_ENTITIES


async def test_stdio_with_an_api_key_runs_as_the_keys_principal(stdio_data):
    settings, token_b = stdio_data
    env = stdio_env(settings, GRAPHCTX_API_KEY=token_b)  # the key wins over GRAPHCTX_TENANT_ID
    with anyio.fail_after(120):
        async with Client(stdio_params(env), mode="auto") as client:
            status = ok(await call(client, "status", {"namespace": "b-private"}))
            assert status["scope"]["tenant_id"] == "tenant-b"
            assert "MARKER-A" not in dumps(ok(await call(client, "recall", {"query": "checkout-api"})))


async def test_output_schemas_can_be_left_out_of_tools_list_and_answers_stay_the_same(stdio_data):
    settings, _ = stdio_data
    env = stdio_env(settings, GRAPHCTX_MCP_OUTPUT_SCHEMAS="off")
    with anyio.fail_after(120):
        async with Client(stdio_params(env), mode="auto") as lean:
            listed = (await lean.list_tools()).tools
            lean_answer = ok(await call(lean, "recall", {"query": "checkout-api"}))
        async with Client(stdio_params(stdio_env(settings)), mode="auto") as full:
            schemas = {t.name: t.output_schema for t in (await full.list_tools()).tools}
            full_answer = ok(await call(full, "recall", {"query": "checkout-api"}))
    assert sorted(t.name for t in listed) == OPERATIONS
    assert [t.name for t in listed if t.output_schema is not None] == []
    assert all(
        t.input_schema == schema_of(api.OPERATIONS[t.name].request, absent_not_null=False) for t in listed
    )
    assert schemas == {name: schema_of(ANSWERS[name]) for name in OPERATIONS}
    varies = ("timings_ms", "as_of")  # per call
    assert {k: v for k, v in lean_answer.items() if k not in varies} == {
        k: v for k, v in full_answer.items() if k not in varies
    }


def test_an_invalid_output_schemas_setting_is_a_config_error(stdio_data):
    settings, _ = stdio_data
    env = {**os.environ, **stdio_env(settings, GRAPHCTX_MCP_OUTPUT_SCHEMAS="sometimes")}
    done = subprocess.run(
        [sys.executable, "-m", "graphctx.transports.mcp_stdio"],
        env=env, cwd=REPO, input="", capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 78
    assert "GRAPHCTX_MCP_OUTPUT_SCHEMAS" in done.stderr


def test_stdio_refuses_to_start_with_a_bad_key(stdio_data):
    settings, _ = stdio_data
    env = {**os.environ, **stdio_env(settings, GRAPHCTX_API_KEY="gctx_000000000000_" + "x" * 43)}
    done = subprocess.run(
        [sys.executable, "-m", "graphctx.transports.mcp_stdio"],
        env=env, cwd=REPO, input="", capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 77
    assert done.stdout == ""
    assert "unauthenticated" in done.stderr


async def test_mount_keeps_the_parent_lifespan_and_can_check_the_host(world):
    events: list[str] = []

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        events.append("up")
        yield
        events.append("down")

    app = FastAPI(lifespan=lifespan)
    mount_mcp(app, world.service, world.keys, "/agents/mcp", allowed_hosts=["127.0.0.1:*"])
    headers = {**ACCEPT, "X-API-Key": world.tokens["a"]}
    with LiveServer(app) as server:
        url = f"{server.url}/agents/mcp"
        async with httpx2.AsyncClient(timeout=CALL_TIMEOUT_S) as http:
            served = await http.post(url, json=INITIALIZE, headers=headers)
            rebound = await http.post(url, json=INITIALIZE, headers={**headers, "Host": "evil.example"})
        async with over_http(World(world.settings, world.service, world.keys, world.tokens, url), "auto",
                             {"X-API-Key": world.tokens["a"]}) as client:  # fmt: skip
            assert ok(await call(client, "status"))["scope"]["tenant_id"] == "tenant-a"
    assert served.status_code == 200
    assert rebound.status_code >= 400
    assert events == ["up", "down"]
