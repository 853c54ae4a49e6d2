"""Every code operation on a Go module (tests/code/fixtures/goshop), through the service, the CLI,
HTTP and MCP: search, symbol, callers, callees, impact from a Go diff, explain and path, under the
same budgets and ambiguity rules as Python."""

from __future__ import annotations

import json

import httpx
import pytest
from typer.testing import CliRunner

from graphctx import registry
from graphctx.auth import Principal
from graphctx.cli import app
from graphctx.envelope import dumps
from graphctx.errors import AmbiguousName
from graphctx.scope import Scope
from graphctx.service import ContextService
from graphctx.settings import Settings
from graphctx.transports.http import create_app
from tests.code.go_fixture import MOD, copy_goshop
from tests.transports.live import LiveServer

runner = CliRunner()
MINE = Scope("go-cli")
CART, STORE = f"{MOD}/cart", f"{MOD}/store"
PUT_DIFF = """diff --git a/store/store.go b/store/store.go
--- a/store/store.go
+++ b/store/store.go
@@ -40,3 +40,3 @@
 func (s *Store) Put(it Item) {
-\ts.items[it.Name] = it
+\ts.items[it.Name] = Item{Name: it.Name, Price: it.Price}
 \ts.note("put")
"""


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    base = tmp_path_factory.mktemp("goops")
    settings = Settings(data_dir=base / "data", embedder="hashing", tenant_id="go-cli")
    with ContextService.open(settings) as service:
        report = service.index_repository(MINE, copy_goshop(base))
        assert report.languages["go"]["files"] == 9
    return settings


@pytest.fixture
def service(data):
    with ContextService.open(data) as opened:
        yield opened


@pytest.fixture
def cli(data, monkeypatch):
    monkeypatch.setenv("GRAPHCTX_DATA_DIR", str(data.data_dir))
    monkeypatch.setenv("GRAPHCTX_EMBEDDER", "hashing")
    monkeypatch.setenv("GRAPHCTX_TENANT_ID", "go-cli")


def names(entries):
    return [e["name"] for e in entries]


def test_search_finds_go_code_by_its_doc_comments_and_names(service):
    hits = service.search(MINE, "shopping cart over a store")["items"]
    assert hits[0]["qualified_name"] == f"{CART}.Cart"
    exact = service.search(MINE, f"{STORE}.(*Store).Put")["items"]
    assert exact[0]["qualified_name"] == f"{STORE}.(*Store).Put"  # a whole qualified name matches first


def test_callers_and_callees_one_and_two_hops(service):
    deep = {c["name"]: c for c in service.callers(MINE, f"{STORE}.(*Store).Put", depth=2)["callers"]}
    assert deep[f"{CART}.(*Cart).Add"]["depth"] == 1
    assert deep[f"{MOD}/cmd/shop.main"]["via"] == [f"{CART}.(*Cart).Add"]
    assert deep[f"{CART}.TestAdd"]["test"] is True
    out = service.callees(MINE, f"{MOD}/cmd/shop.main")["callees"]
    assert names(out) == [
        f"{CART}.NewCart",
        f"{CART}.(*Cart).Add",
        f"{CART}.(*Cart).Sum",
        f"{STORE}.Platform",
    ]


def test_impact_of_a_go_diff_names_the_callers_and_the_go_test_commands(service):
    env = service.impact(MINE, diff=PUT_DIFF)
    assert names(env["affected"]) == [f"{STORE}.(*Store).Put"]
    assert names(env["callers"]) == [f"{CART}.(*Cart).Add"]
    assert [(t["name"], t["run"]) for t in env["tests"]] == [
        (f"{CART}.TestAdd", "go test -run '^TestAdd$' ./cart"),
        (f"{STORE}.TestPutGet", "go test -run '^TestPutGet$' ./store"),
    ]
    whole = service.impact(MINE, ["store/platform_linux.go"])
    # a whole file: its symbols, their callers, and the files importing its package
    assert set(names(whole["callers"])) == {f"{STORE}.Platform", "cart.go", "main.go"}
    bench = service.impact(MINE, ["cart/cart.go"])
    assert (f"{CART}.BenchmarkSum", "go test -run '^$' -bench '^BenchmarkSum$' ./cart") in [
        (t["name"], t["run"]) for t in bench["tests"]
    ]


def test_explain_and_path(service):
    env = service.explain(MINE, f"{CART}.(*Cart).Add")
    assert env["subject"]["qualified_name"] == f"{CART}.(*Cart).Add"
    for tail in ("Cart.Add", "cart.Cart.Add", "(*Cart).Add", "cart.(*Cart).Add"):  # as people write them
        assert service.explain(MINE, tail)["subject"]["qualified_name"] == f"{CART}.(*Cart).Add", tail
    route = service.path(MINE, f"{MOD}/cmd/shop.main", f"{STORE}.(*Store).note")
    assert route["found"] is True
    assert [(e["subject"], e["object"], e["value"]) for e in route["edges"]] == [
        (f"{MOD}/cmd/shop.main", f"{CART}.(*Cart).Add", "13"),
        (f"{CART}.(*Cart).Add", f"{STORE}.(*Store).Put", "21"),
        (f"{STORE}.(*Store).Put", f"{STORE}.(*Store).note", "41"),
    ]


def test_ambiguous_names_list_the_go_identities(service):
    # the two build variants of platform share a qualified name: each is named by its id
    with pytest.raises(AmbiguousName) as raised:
        service.symbol(MINE, f"{STORE}.platform")
    identities = {c["identity"]: c["path"] for c in raised.value.candidates}
    assert set(identities.values()) == {"store/platform_linux.go", "store/platform_other.go"}
    for identity, path in identities.items():
        assert service.symbol(MINE, identity)["subject"]["at"] == f"{path}:5-5"
    assert service.symbol(MINE, "store/platform_other.go::platform")["subject"]["at"] == (
        "store/platform_other.go:5-5"
    )


def test_a_tiny_budget_names_what_it_cut(service):
    env = service.callers(MINE, f"{CART}.NewCart", max_tokens=256)
    assert env["budget"]["used_tokens"] <= 256


def comparable(envelope):
    return {k: v for k, v in envelope.items() if k not in ("timings_ms", "as_of")}


def run_json(*args: str):
    result = runner.invoke(app, [*args, "--json"])
    return result.exit_code, json.loads(result.stdout)


def test_the_cli_answers_as_the_service_does(data, cli, tmp_path):
    diff_file = tmp_path / "put.diff"
    diff_file.write_text(PUT_DIFF, encoding="utf-8")
    with ContextService.open(data) as service:
        expected = {
            "symbol": service.symbol(MINE, f"{CART}.NewCart"),
            "callers": service.callers(MINE, f"{STORE}.(*Store).Put", depth=2),
            "callees": service.callees(MINE, f"{CART}.Describe"),
            "search": service.search(MINE, "Platform"),
            "impact": service.impact(MINE, [], PUT_DIFF),
        }
    argv = {
        "symbol": ["symbol", f"{CART}.NewCart"],
        "callers": ["callers", f"{STORE}.(*Store).Put", "--depth", "2"],
        "callees": ["callees", f"{CART}.Describe"],
        "search": ["search", "Platform"],
        "impact": ["impact", "--diff", str(diff_file)],
    }
    for op, args in argv.items():
        code, got = run_json(*args)
        assert code == 0, got
        assert comparable(got) == comparable(json.loads(dumps(expected[op]))), op
    human = runner.invoke(app, ["symbol", "store/platform_linux.go::platform"]).stdout
    assert "store/platform_linux.go:5-5" in human and "//go:build linux" in human
    code, error = run_json("callers", f"{STORE}.platform")
    assert code == 4
    assert {c["path"] for c in error["error"]["details"]["candidates"]} == {
        "store/platform_linux.go",
        "store/platform_other.go",
    }


def test_the_http_api_answers_as_the_service_does(data):
    with ContextService.open(data) as service:
        keys = registry.factory("keys", data.key_store_backend)(data)
        try:
            token = keys.create(Principal("go-agent", "go-cli")).token
            expected = {
                "symbol": service.symbol(MINE, f"{CART}.(*Cart).Add"),
                "impact": service.impact(MINE, [], PUT_DIFF),
            }
            with LiveServer(create_app(service, keys, data)) as server:
                headers = {"Authorization": f"Bearer {token}"}
                with httpx.Client(base_url=server.url, headers=headers, timeout=30.0) as client:
                    got = {
                        "symbol": client.post("/v1/symbol", json={"name": f"{CART}.(*Cart).Add"}).json(),
                        "impact": client.post("/v1/impact", json={"diff": PUT_DIFF}).json(),
                    }
        finally:
            keys.close()
    for op, answer in expected.items():
        assert comparable(got[op]) == comparable(json.loads(dumps(answer))), op


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_the_mcp_tools_answer_as_the_service_does(data):
    from mcp import Client

    from graphctx.transports.mcp import build_mcp, fixed_authenticator

    reads = {
        "symbol": {"name": f"{CART}.(*Cart).Add"},
        "callers": {"name": f"{STORE}.(*Store).Put", "depth": 2},
        "callees": {"name": f"{MOD}/cmd/shop.main"},
        "search": {"query": "shopping cart over a store"},
        "impact": {"diff": PUT_DIFF},
    }
    with ContextService.open(data) as service:
        expected = {
            "symbol": service.symbol(MINE, f"{CART}.(*Cart).Add"),
            "callers": service.callers(MINE, f"{STORE}.(*Store).Put", depth=2),
            "callees": service.callees(MINE, f"{MOD}/cmd/shop.main"),
            "search": service.search(MINE, "shopping cart over a store"),
            "impact": service.impact(MINE, [], PUT_DIFF),
        }
        server = build_mcp(service, fixed_authenticator(Principal("go-agent", "go-cli")))
        async with Client(server) as client:
            for tool, args in reads.items():
                result = await client.call_tool(tool, args)
                assert not result.is_error, result.structured_content
                got = result.structured_content
                assert isinstance(got, dict)
                assert comparable(got) == comparable(json.loads(dumps(expected[tool]))), tool
