"""The core's isolation re-check covers everything an operation returns, whatever the store underneath.

Every read operation of the service (recall at depth 1 and 2, explain, neighbourhood, path, search,
symbol, callers, callees, impact) runs over stores that leak (tests/service/leaky.py): a scope-blind
graph, a graph that binds the scope on the first hop only, scope-blind indexes, indexes that stamp
the caller's scope on other scopes' hits, and all of them at once. Four adversary scopes -- tenants
that sort before and after the caller's, a sibling namespace and a shared code graph id -- hold the
same ids, names and code plus extra edges between ids the caller also has, at the first and the
second hop, and a shortcut path.

What must hold: no node, edge, fact, marker, tenant, namespace or graph id of another scope in any
answer, through the Python API and over HTTP; with a store or index that only *adds* foreign data, the
answer is exactly the honest one (every count included) but for `isolation.rejected`; a path through
a foreign node or edge is not reported; and each double did leak (else the test proves nothing).
"""

from __future__ import annotations

import copy
import difflib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from graphctx import api, registry
from graphctx.auth import Principal
from graphctx.envelope import dumps
from graphctx.kernel.stores import Stores, open_stores
from graphctx.scope import Scope
from graphctx.service import ContextService
from graphctx.settings import Settings
from graphctx.transports.http import create_app
from tests.code import ops_graph
from tests.conftest import fixed_clock, make_settings
from tests.service import memory_data
from tests.service.leaky import (
    RelabellingIndex,
    ScopeBlindGraph,
    ScopeBlindIndex,
    SecondHopBlindGraph,
)
from tests.transports.live import LiveServer

OWN = Scope("tenant-m", "default")
ADVERSARIES = (
    Scope("tenant-a", "default"),  # sorts before the caller's tenant
    Scope("tenant-z", "default"),  # ... and after it
    Scope("tenant-m", "sibling"),  # same tenant, another namespace
    Scope("tenant-m", "default", "g1"),  # same tenant and namespace, a shared code graph id
)
OWN_MARK = "MARK-OWN-7f3"
RATE = "py:shop:shop/tax.py::rate"
HELPER_A = ops_graph.HELPER_A


def foreign_mark(scope: Scope) -> str:
    return f"MARK-FOREIGN-{scope.tenant_id}-{scope.namespace}-{scope.graph_id or 'none'}"


def code_data(mark: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """ops_graph's code graph without its fan-out module (no limit cuts), `mark` in every summary."""
    entities = [
        {**e, "summary": f"{e['summary']} {mark}".strip()}
        for e in ops_graph.ENTITIES
        if not e["id"].startswith("py:shop:shop/many.py")
    ]
    facts = [
        {**f, "source": mark}
        for f in ops_graph.FACTS
        if not f["subject_id"].startswith("py:shop:shop/many.py")
    ]
    return entities, facts


def foreign_extras(mark: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """What only the adversaries hold: a secret entity, edges between ids the caller also has (one
    first hop from `checkout-api`, one second hop, one first hop out of the code), and shortcuts."""
    secret = {"id": "zz-secret", "name": "zanzibar vault", "type": "datastore", "summary": f"vault {mark}"}

    def fact(s: str, p: str, o: str) -> dict[str, Any]:
        return {"subject_id": s, "predicate": p, "object_id": o, "source": mark}

    facts = [
        fact("svc-pay", "owned_by", "zz-secret"),
        fact("team-com", "relates_to", RATE),  # second hop from checkout-api onto the code graph
        fact("svc-checkout", "relates_to", "py:shop:shop/cart.py"),  # first hop
        fact("db-redis", "relates_to", "team-pay"),  # a one-hop shortcut for `path`
        fact("inc-1", "relates_to", "team-pay"),  # a shortcut at the second hop
        ops_graph.calls(HELPER_A, ops_graph.RUN, "5") | {"source": mark},  # a caller at the second hop
        ops_graph.calls(RATE, "py:shop:tests/test_cart.py::test_total", "12") | {"source": mark},
    ]
    return [secret], facts


def load(service: ContextService) -> None:
    for scope in (*ADVERSARIES, OWN):
        mark = OWN_MARK if scope == OWN else foreign_mark(scope)
        entities, facts = code_data(mark)
        report = service.remember(scope, memory_data.entities(mark), memory_data.facts(mark))
        assert not report["index_errors"], report
        if scope != OWN:
            extra_entities, extra_facts = foreign_extras(mark)
            entities, facts = entities + extra_entities, facts + extra_facts
        report = service.remember(scope, entities, facts)
        assert not report["index_errors"], report


CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    "recall checkout d1": ("recall", {"query": "checkout-api", "include_ids": True}),
    "recall checkout d2": ("recall", {"query": "checkout-api", "depth": 2, "include_ids": True}),
    "recall who owns d2": ("recall", {"query": "who owns checkout", "depth": 2, "include_ids": True}),
    "recall secret": ("recall", {"query": "zanzibar vault", "include_ids": True}),
    "recall alias": ("recall", {"query": "PAY-502-UPSTREAM", "depth": 2}),
    "explain checkout": ("explain", {"name": "checkout-api", "include_ids": True}),
    "explain svc-pay": ("explain", {"name": "svc-pay", "include_ids": True}),
    "explain team": ("explain", {"name": "Payments Team"}),
    "neighbourhood d1": ("neighbourhood", {"name": "checkout-api", "include_ids": True}),
    "neighbourhood d2": ("neighbourhood", {"name": "checkout-api", "depth": 2, "include_ids": True}),
    "neighbourhood svc-pay d2": ("neighbourhood", {"name": "svc-pay", "depth": 2}),
    "neighbourhood code d2": ("neighbourhood", {"name": "shop.cart.Cart.total", "depth": 2}),
    "path redis team": ("path", {"source": "redis-sessions", "target": "Payments Team", "include_ids": True}),
    "path commerce pay": ("path", {"source": "Commerce Platform", "target": "payment-gateway"}),
    "search tax": ("search", {"query": "tax rate region", "include_ids": True}),
    "search helper": ("search", {"query": "shop.cart.helper"}),
    "symbol total": ("symbol", {"name": "shop.cart.Cart.total", "include_ids": True}),
    "symbol rate": ("symbol", {"name": "shop.tax.rate"}),
    "callers rate d2": ("callers", {"name": "shop.tax.rate", "depth": 2, "include_ids": True}),
    "callers total d2": ("callers", {"name": "shop.cart.Cart.total", "depth": 2}),
    "callees total d2": ("callees", {"name": "shop.cart.Cart.total", "depth": 2}),
    "impact tax d2": ("impact", {"files": ["shop/tax.py"], "depth": 2, "include_ids": True}),
    "impact cart": ("impact", {"files": ["shop/cart.py"]}),
}
INDEX_OPS = ("recall", "search")
"""The operations that read the lexical and vector indexes."""


def beyond_first_hop(name: str) -> bool:
    """Calls that walk two hops (or a path): where a store that binds the first hop only leaks."""
    op, body = CALLS[name]
    return op == "path" or body.get("depth", 1) >= 2


@dataclass
class Doubles:
    wrap: Callable[[Stores], Stores]
    leaks_on: Callable[[str], bool]
    """The calls on which this double must have leaked something (else the test proves nothing)."""
    additive: bool = True
    """Adds foreign data and drops nothing of the scope's own: the answer must equal the honest one."""


def _graph(kind: type) -> Callable[[Stores], Stores]:
    def wrap(s: Stores) -> Stores:
        return Stores(kind(s.graph, ADVERSARIES), s.lexical, s.journal, s.vector, s.embedder)

    return wrap


def _indexes(kind: type) -> Callable[[Stores], Stores]:
    def wrap(s: Stores) -> Stores:
        lexical, vector = kind(s.lexical, ADVERSARIES), kind(s.vector, ADVERSARIES)
        return Stores(s.graph, lexical, s.journal, vector, s.embedder)

    return wrap


def _everything(s: Stores) -> Stores:
    graph = ScopeBlindGraph(SecondHopBlindGraph(s.graph, ADVERSARIES), ADVERSARIES)
    lexical, vector = ScopeBlindIndex(s.lexical, ADVERSARIES), ScopeBlindIndex(s.vector, ADVERSARIES)
    return Stores(graph, lexical, s.journal, vector, s.embedder)


def _always(name: str) -> bool:
    return True


def _reads_indexes(name: str) -> bool:
    return CALLS[name][0] in ("recall", "search")


DOUBLES = {
    "scope-blind graph": Doubles(_graph(ScopeBlindGraph), _always),
    "second-hop-blind graph": Doubles(_graph(SecondHopBlindGraph), beyond_first_hop),
    "scope-blind indexes": Doubles(_indexes(ScopeBlindIndex), _reads_indexes),
    "relabelling indexes": Doubles(_indexes(RelabellingIndex), _reads_indexes, additive=False),
    "everything leaks": Doubles(_everything, _always),
}


@dataclass
class World:
    settings: Settings
    stores: Stores
    honest: ContextService
    principal: Principal

    def call(self, service: ContextService, name: str) -> dict[str, Any]:
        op, body = CALLS[name]
        return api.execute(service, self.principal, op, body)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    settings = make_settings(tmp_path_factory.mktemp("leaky") / "data")
    stores = open_stores(settings)
    honest = ContextService(stores, settings, clock=fixed_clock)
    load(honest)
    # on disk before any answer is compared: until its index flush a new document's BM25 score comes
    # from the in-memory overlay's statistics, and the baseline would depend on when it was taken
    honest.flush()
    try:
        yield World(settings, stores, honest, Principal("agent-m", OWN.tenant_id, (OWN.namespace,)))
    finally:
        honest.close()


@pytest.fixture(scope="module")
def baseline(world: World) -> dict[str, dict[str, Any]]:
    return {name: world.call(world.honest, name) for name in CALLS}


def stable(envelope: dict[str, Any], *, keep_isolation: bool = True) -> str:
    """The envelope as indented JSON (a failure shows a readable diff), without the fields allowed to
    differ between equal answers."""
    env = copy.deepcopy(envelope)
    for key in ("timings_ms", "as_of") if keep_isolation else ("timings_ms", "as_of", "isolation"):
        env.pop(key, None)
    return json.dumps(env, indent=1, ensure_ascii=False)


def assert_same(got: str, want: str, what: str) -> None:
    diff = "\n".join(
        difflib.unified_diff(want.splitlines(), got.splitlines(), "honest", "leaky", lineterm="")
    )
    assert got == want, f"{what}:\n{diff}"


def assert_nothing_foreign(envelope: dict[str, Any], what: str) -> None:
    text = dumps(envelope)
    assert envelope["scope"] == OWN.as_dict(), what
    for scope in ADVERSARIES:
        assert foreign_mark(scope) not in text, f"{what}: {scope} leaked into the answer"
        if scope.tenant_id != OWN.tenant_id:
            assert scope.tenant_id not in text, f"{what}: tenant {scope.tenant_id} named"
        if scope.namespace != OWN.namespace:
            assert f'"{scope.namespace}"' not in text, f"{what}: namespace {scope.namespace} named"
        if scope.graph_id:
            assert f'"{scope.graph_id}"' not in text, f"{what}: graph id {scope.graph_id} named"
    for secret in ("zz-secret", "zanzibar vault"):
        assert secret not in text, f"{what}: {secret!r} is only in other scopes"


@pytest.fixture(scope="module", params=sorted(DOUBLES))
def leaky(request: pytest.FixtureRequest, world: World) -> Iterator[tuple[str, ContextService, Stores]]:
    """A second service over the same stores, with the double in between (closed without closing them)."""
    doubles = DOUBLES[request.param]
    stores = doubles.wrap(world.stores)
    service = ContextService(stores, world.settings, clock=fixed_clock, owns_stores=False)
    try:
        yield request.param, service, stores
    finally:
        service.close()  # its threads; the stores belong to `world`


def leaked(stores: Stores) -> int:
    return sum(getattr(s, "leaked", 0) + getattr(getattr(s, "inner", None), "leaked", 0)
               for s in (stores.graph, stores.lexical, stores.vector))  # fmt: skip


@pytest.mark.parametrize("name", sorted(CALLS))
def test_no_operation_returns_anything_of_another_scope(
    leaky: tuple[str, ContextService, Stores], world: World, baseline: dict[str, dict[str, Any]], name: str
) -> None:
    double, service, stores = leaky
    before = leaked(stores)
    envelope = world.call(service, name)
    op = CALLS[name][0]
    assert_nothing_foreign(envelope, f"{double}, {name}")
    honest = baseline[name]
    assert honest["isolation"] == {"rejected": 0}, f"the honest stores leaked on {name}"
    if DOUBLES[double].leaks_on(name):
        assert leaked(stores) > before, f"{double} leaked nothing on {name}: the test proves nothing"
    if op == "path" and envelope.get("found") != honest.get("found"):
        assert envelope["found"] is False  # a path through a foreign node or edge is not reported
        assert (envelope.get("nodes"), envelope.get("edges")) in ((None, None), ([], []))
    elif DOUBLES[double].additive:
        assert_same(
            stable(envelope, keep_isolation=False),
            stable(honest, keep_isolation=False),
            f"{double} changed the answer to {name}",
        )
    else:
        assert envelope.get("items") == honest.get("items"), f"{double} changed the items of {name}"


def test_the_isolation_counter_shows_the_leaks(world: World) -> None:
    """Over all the calls, each double's foreign records are counted as rejected somewhere (except
    the relabelling indexes', which carry the caller's scope and are dropped by hydration instead)."""
    for double, spec in DOUBLES.items():
        wrapped = spec.wrap(world.stores)
        with ContextService(wrapped, world.settings, clock=fixed_clock, owns_stores=False) as with_double:
            rejected = sum(world.call(with_double, name)["isolation"]["rejected"] for name in CALLS)
        assert (rejected > 0) == spec.additive, (double, rejected)


def test_over_http_nothing_of_another_scope(world: World, baseline: dict[str, dict[str, Any]]) -> None:
    """The same calls over HTTP, with every store leaking: the answers are the Python API's."""
    stores = _everything(world.stores)
    service = ContextService(stores, world.settings, clock=fixed_clock, owns_stores=False)
    keys = registry.factory("keys", world.settings.key_store_backend)(world.settings)
    try:
        token = keys.create(world.principal).token
        with LiveServer(create_app(service, keys, world.settings)) as server:
            headers = {"Authorization": f"Bearer {token}"}
            with httpx.Client(base_url=server.url, headers=headers, timeout=30.0) as client:
                for name, (op, body) in CALLS.items():
                    response = client.post(f"/v1/{op}", json=body)
                    assert response.status_code == 200, (name, response.text)
                    envelope = response.json()
                    assert_nothing_foreign(envelope, f"HTTP {name}")
                    assert stable(envelope) == stable(world.call(service, name)), name
                    if op != "path":
                        assert stable(envelope, keep_isolation=False) == stable(
                            baseline[name], keep_isolation=False
                        ), name
    finally:
        keys.close()
        service.close()
