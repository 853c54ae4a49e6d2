"""Shared code graphs: one copy, stored under the reserved tenant, read by every tenant authorised for
its graph id; memory stays per tenant; nothing a tenant writes lands in the shared copy."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from graphctx import api
from graphctx.auth import Principal
from graphctx.cli import app
from graphctx.envelope import dumps
from graphctx.errors import ScopeError
from graphctx.scope import SHARED_NAMESPACE, SHARED_TENANT, Scope, shared_scope
from graphctx.service import ContextService
from graphctx.settings import Settings
from tests.code.ops_graph import ENTITIES, RUN, load_code

SHOP = shared_scope("shop")
A = Principal("agent-a", "tenant-a", graph_ids=("shop",))
B = Principal("agent-b", "tenant-b", graph_ids=("shop", "other"))
C = Principal("agent-c", "tenant-c", graph_ids=("other",))
runner = CliRunner()


@pytest.fixture
def shared(service):
    load_code(service, SHOP)  # the operator indexes once, into the shared scope
    return service


def comparable(envelope):
    return dumps({k: v for k, v in envelope.items() if k not in ("timings_ms", "as_of")})


def stats(service: ContextService, scope: Scope):
    return service.status(scope)["graph"]


def test_two_tenants_read_the_one_shared_copy(shared):
    for op, args in [
        ("symbol", {"name": "shop.cart.Cart.total"}),
        ("callers", {"name": "shop.tax.rate", "depth": 2}),
        ("search", {"query": "Cart.total"}),
        ("impact", {"files": ["shop/cart.py"]}),
        ("explain", {"name": "shop/cart.py::Cart.total"}),
    ]:
        seen_by_a = api.execute(shared, A, op, {**args, "graph_id": "shop"})
        seen_by_b = api.execute(shared, B, op, {**args, "graph_id": "shop"})
        assert comparable(seen_by_a) == comparable(seen_by_b)
        assert seen_by_a["scope"] == {
            "tenant_id": SHARED_TENANT,
            "namespace": SHARED_NAMESPACE,
            "graph_id": "shop",
        }
    # one copy: the tenants' own scopes hold nothing of it
    assert stats(shared, SHOP)["entities"] == len(ENTITIES)
    for tenant in ("tenant-a", "tenant-b"):
        assert stats(shared, Scope(tenant))["entities"] == 0


def test_memory_stays_per_tenant(shared):
    api.execute(
        shared, A, "remember", {"entities": [{"id": "note-a", "name": "secret-a", "summary": "MARKER-A"}]}
    )
    api.execute(
        shared, B, "remember", {"entities": [{"id": "note-b", "name": "secret-b", "summary": "MARKER-B"}]}
    )
    assert api.execute(shared, A, "recall", {"query": "secret-a"})["items"][0]["name"] == "secret-a"
    for who, other in ((A, "MARKER-B"), (B, "MARKER-A")):
        for op, args in [
            ("recall", {"query": "secret-a secret-b"}),
            ("search", {"query": "secret-a secret-b"}),
        ]:
            assert other not in dumps(api.execute(shared, who, op, args))
            assert other not in dumps(api.execute(shared, who, op, {**args, "graph_id": "shop"}))
    shared_view = api.execute(shared, B, "recall", {"query": "secret-a secret-b", "graph_id": "shop"})
    assert "MARKER" not in dumps(shared_view)  # and tenant memory never shows in the shared graph
    # the shared graph is not part of a tenant's own scope either
    assert api.execute(shared, A, "search", {"query": "shop.cart.Cart.total"})["items"] == []


@pytest.mark.parametrize("op", ["symbol", "search", "status", "recall", "remember", "impact"])
def test_an_unauthorised_tenant_is_refused_alike_whether_or_not_the_graph_exists(shared, op):
    args = {
        "symbol": {"name": "shop.cart.Cart.total"}, "search": {"query": "Cart"}, "status": {},
        "recall": {"query": "Cart"}, "remember": {"entities": []}, "impact": {"files": ["shop/cart.py"]},
    }[op]  # fmt: skip
    refusals = []
    for graph in ("shop", "no-such-graph"):
        with pytest.raises(ScopeError) as raised:
            api.execute(shared, C, op, {**args, "graph_id": graph})
        refusals.append(raised.value.to_dict())
    assert refusals[0] == refusals[1]
    assert refusals[0]["message"] == "that graph is not accessible with these credentials"


def test_writes_never_land_in_the_shared_graph(shared):
    before = comparable(shared.symbol(SHOP, "shop.cart.Cart.total"))
    counts = stats(shared, SHOP)
    colliding = {"id": RUN, "name": "total", "summary": "tenant A's own note with the same id"}
    # credentials may read a shared graph but not write it, whatever the operation
    for op, args in [
        ("remember", {"entities": [colliding]}),
        ("forget", {"entity_ids": [RUN]}),
        ("reconcile", {}),
    ]:
        with pytest.raises(ScopeError) as raised:
            api.execute(shared, A, op, {**args, "graph_id": "shop"})
        assert "read-only" in raised.value.message
    # a record naming the shared graph is refused in the tenant's own scope
    with pytest.raises(ScopeError):
        api.execute(shared, A, "remember", {"entities": [{**colliding, "graph_id": "shop"}]})
    with pytest.raises(ScopeError):
        api.execute(shared, A, "remember", {"entities": [{**colliding, "tenant_id": SHARED_TENANT}]})
    # the same id written and forgotten in tenant memory stays in tenant memory
    api.execute(shared, A, "remember", {"entities": [colliding]})
    assert api.execute(shared, A, "explain", {"name": RUN})["subject"]["summary"].startswith("tenant A's")
    api.execute(shared, A, "forget", {"entity_ids": [RUN]})
    assert stats(shared, SHOP) == counts
    assert comparable(shared.symbol(SHOP, "shop.cart.Cart.total")) == before


def test_the_reserved_tenant_cannot_be_anyones_own():
    with pytest.raises(ScopeError):
        Principal("intruder", SHARED_TENANT)
    for namespace, graph in (("default", ""), (SHARED_NAMESPACE, ""), ("default", "shop")):
        with pytest.raises(ScopeError):
            Scope(SHARED_TENANT, namespace, graph)
    with pytest.raises(ScopeError):
        shared_scope("")
    with pytest.raises(ScopeError):
        Principal("p", "tenant-a", graph_ids=("bad graph id",))


@pytest.fixture
def cli_env(tmp_path, monkeypatch):
    monkeypatch.setenv("GRAPHCTX_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("GRAPHCTX_EMBEDDER", "hashing")
    monkeypatch.setenv("GRAPHCTX_TENANT_ID", "cli-tenant")
    return tmp_path


def test_the_cli_refuses_the_reserved_tenant(cli_env):
    created = runner.invoke(app, ["keys", "create", "--name", "x", "--tenant", SHARED_TENANT, "--json"])
    assert created.exit_code == ScopeError.exit_status
    assert json.loads(created.stdout)["error"]["code"] == "scope_denied"
    assert json.loads(runner.invoke(app, ["keys", "list", "--json"]).stdout) == []
    own = runner.invoke(app, ["--tenant", SHARED_TENANT, "recall", "x", "--json"])
    assert own.exit_code == ScopeError.exit_status


def test_the_cli_reads_a_shared_graph_with_graph(cli_env):
    with ContextService.open(Settings()) as service:
        load_code(service, SHOP)
        expected = service.symbol(SHOP, "shop.cart.Cart.total")
    got = runner.invoke(app, ["symbol", "shop.cart.Cart.total", "--graph", "shop", "--json"])
    assert got.exit_code == 0, got.output
    assert comparable(json.loads(got.stdout)) == comparable(json.loads(dumps(expected)))
    mine = runner.invoke(app, ["symbol", "shop.cart.Cart.total", "--json"])  # the tenant's own scope
    assert mine.exit_code == 3 and json.loads(mine.stdout)["error"]["code"] == "not_found"


def test_mcp_stdio_local_operator_reads_only_the_shared_graphs_settings_name(tmp_path) -> None:
    from graphctx.transports.mcp_stdio import local_principal

    allowed = local_principal(Settings(data_dir=tmp_path, graph_ids=["repo-1"]))
    assert allowed.scope(graph_id="repo-1") == shared_scope("repo-1")
    with pytest.raises(ScopeError):
        allowed.scope(graph_id="repo-2")
    with pytest.raises(ScopeError):
        local_principal(Settings(data_dir=tmp_path)).scope(graph_id="repo-1")
