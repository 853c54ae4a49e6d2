"""A whole-identifier query returns its exact match first on every transport (Python API, HTTP, MCP in
memory and over streamable HTTP, CLI): a qualified name, a `file::name`, an alias and an id, each
against decoys built so that BM25 and dense would rank them above the match (their text repeats the
identifier's every part; the match's own text shares almost none)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from fastapi import FastAPI
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from typer.testing import CliRunner

from graphctx import registry
from graphctx.auth import Principal
from graphctx.cli import app as cli_app
from graphctx.scope import Scope, shared_scope
from graphctx.service import ContextService
from graphctx.transports.http import create_app
from graphctx.transports.mcp import build_mcp, fixed_authenticator, mount_mcp
from tests.code.ops_graph import load_code, symbol
from tests.conftest import fixed_clock, make_settings
from tests.transports.live import LiveServer

MEMORY = Scope("tenant-exact", "default")
CODE = shared_scope("code-exact")
PRINCIPAL = Principal("agent-exact", "tenant-exact", ("default",), ("code-exact",))
TIMEOUT_S = 60.0

TARGET = {
    "id": "svc-pay",
    "name": "payment-gateway",
    "type": "service",
    "aliases": ["PAY-502-UPSTREAM"],
    "summary": "Talks to the card processor.",
}
MEMORY_DECOYS = [
    {
        "id": f"decoy-{i}",
        "name": f"pay upstream note {i}",
        "type": "note",
        "summary": "PAY 502 upstream svc pay " * 6 + f"payment gateway errors, variant {i}",
    }
    for i in range(12)
]
CODE_DECOYS = [
    symbol(
        f"shop/decoy_{i}.py",
        f"cart_total_{i}",
        "function",
        1,
        5,
        f"def cart_total_{i}()",
        "shop cart py Cart total " * 6 + "the shop cart Cart total of a decoy",
    )
    for i in range(12)
]

# (transport-neutral) operation, query, expected entity, the exact field that matched
CASES: list[tuple[str, str, str, str]] = [
    ("search", "shop.cart.Cart.total", "shop.cart.Cart.total", "qualified_name"),
    ("search", "shop/cart.py::Cart.total", "shop.cart.Cart.total", "alias"),
    ("search", "py:shop:shop/cart.py::Cart.total", "shop.cart.Cart.total", "id"),
    ("recall", "PAY-502-UPSTREAM", "payment-gateway", "alias"),
    ("recall", "svc-pay", "payment-gateway", "id"),
]
IDS = [f"{op}:{query}" for op, query, _, _ in CASES]


def identity(item: dict[str, Any]) -> str:
    return str(item.get("qualified_name") or item["name"])


def check(env: dict[str, Any], expected: str, field: str) -> None:
    first = env["items"][0]
    assert identity(first) == expected
    assert first["match"]["exact"] == field
    # the decoys were found too, so the exact match really outranked approximate candidates
    assert len(env["items"]) > 1
    assert all("exact" not in item["match"] for item in env["items"][1:])


def seed(service: ContextService) -> None:
    service.remember(MEMORY, [TARGET, *MEMORY_DECOYS])
    load_code(service, CODE)
    service.remember(CODE, CODE_DECOYS)


@dataclass
class World:
    service: ContextService
    http_url: str
    token: str


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    data_dir = tmp_path_factory.mktemp("exact") / "data"
    settings = make_settings(data_dir)
    with ContextService.open(settings, clock=fixed_clock) as service:
        seed(service)
        keys = registry.factory("keys", settings.key_store_backend)(settings)
        token = keys.create(PRINCIPAL).token
        app: FastAPI = create_app(service, keys, settings)
        mount_mcp(app, service, keys)
        try:
            with LiveServer(app) as server:
                yield World(service, server.url, token)
        finally:
            keys.close()


def scope_of(op: str) -> Scope:
    return CODE if op == "search" else MEMORY


def arguments(op: str, query: str) -> dict[str, Any]:
    return {"query": query, **({"graph_id": CODE.graph_id} if op == "search" else {})}


@pytest.mark.parametrize(("op", "query", "expected", "field"), CASES, ids=IDS)
def test_python_api(world, op, query, expected, field):
    check(getattr(world.service, op)(scope_of(op), query), expected, field)


@pytest.mark.parametrize(("op", "query", "expected", "field"), CASES, ids=IDS)
def test_http(world, op, query, expected, field):
    headers = {"Authorization": f"Bearer {world.token}"}
    with httpx.Client(base_url=world.http_url, headers=headers, timeout=TIMEOUT_S) as client:
        response = client.post(f"/v1/{op}", json=arguments(op, query))
    assert response.status_code == 200, response.text
    check(response.json(), expected, field)


@asynccontextmanager
async def mcp_client(world: World, how: str):
    if how == "memory":
        async with Client(build_mcp(world.service, fixed_authenticator(PRINCIPAL))) as client:
            yield client
        return
    async with (
        httpx2.AsyncClient(headers={"X-API-Key": world.token}, timeout=TIMEOUT_S) as http,
        Client(streamable_http_client(f"{world.http_url}/mcp", http_client=http)) as client,
    ):
        yield client


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
@pytest.mark.parametrize("how", ["memory", "streamable-http"])
async def test_mcp(world, how):
    async with mcp_client(world, how) as client:
        for op, query, expected, field in CASES:
            with anyio.fail_after(TIMEOUT_S):
                result = await client.call_tool(op, arguments(op, query))
            assert not result.is_error, result.structured_content
            assert isinstance(result.structured_content, dict)
            check(result.structured_content, expected, field)


@pytest.fixture(scope="module")
def cli_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same data in a store of its own, closed (the CLI opens it as the local operator)."""
    data_dir = tmp_path_factory.mktemp("exact-cli") / "data"
    with ContextService.open(make_settings(data_dir), clock=fixed_clock) as service:
        seed(service)
    return data_dir


@pytest.mark.parametrize(("op", "query", "expected", "field"), CASES, ids=IDS)
def test_cli(cli_data, monkeypatch, op, query, expected, field):
    monkeypatch.setenv("GRAPHCTX_DATA_DIR", str(cli_data))
    monkeypatch.setenv("GRAPHCTX_EMBEDDER", "hashing")
    monkeypatch.setenv("GRAPHCTX_TENANT_ID", MEMORY.tenant_id)
    monkeypatch.setenv("GRAPHCTX_GRAPH_IDS", json.dumps([CODE.graph_id]))
    args = [op, query, "--json"] + (["--graph", CODE.graph_id] if op == "search" else [])
    result = CliRunner().invoke(cli_app, args)
    assert result.exit_code == 0, result.output
    check(json.loads(result.stdout), expected, field)
