"""Two tenants with identical ids, names, aliases and vectors: nothing of one reaches the other, even
when an index ignores its scope filter."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from graphctx.envelope import dumps
from graphctx.kernel.ports import LexicalHit, VectorHit
from graphctx.kernel.stores import open_stores
from graphctx.scope import Scope
from graphctx.service import ContextService
from tests.conftest import TENANT_A, TENANT_B, fixed_clock
from tests.service.memory_data import load

QUERIES = [
    "checkout-api",
    "who owns checkout",
    "payments team",
    "redis evictions",
    "PAY-502-UPSTREAM",
    "co-api",
]


@pytest.fixture
def two_tenants(service):
    load(service, TENANT_A, "MARKER-A")
    load(service, TENANT_B, "MARKER-B")
    return service


@pytest.mark.parametrize("query", QUERIES)
def test_recall_never_returns_the_other_tenant(two_tenants, query):
    for scope, _mine, theirs in ((TENANT_A, "MARKER-A", "MARKER-B"), (TENANT_B, "MARKER-B", "MARKER-A")):
        text = dumps(two_tenants.recall(scope, query, depth=2, include_ids=True))
        assert theirs not in text
        assert scope.tenant_id in text


def test_every_operation_stays_in_scope(two_tenants):
    s = two_tenants
    outputs = [
        s.explain(TENANT_A, "checkout-api"),
        s.explain(TENANT_A, "svc-checkout", include_ids=True),
        s.neighbourhood(TENANT_A, "checkout-api", depth=2),
        s.path(TENANT_A, "redis-sessions", "Payments Team"),
        s.status(TENANT_A),
    ]
    for out in outputs:
        assert "MARKER-B" not in dumps(out)
        assert "tenant-b" not in dumps(out)
    assert s.status(TENANT_A)["graph"]["entities"] == 6


def test_a_namespace_is_a_boundary_too(service):
    load(service, Scope("tenant-a", "ns1"), "NS-ONE")
    load(service, Scope("tenant-a", "ns2"), "NS-TWO")
    assert "NS-TWO" not in dumps(service.recall(Scope("tenant-a", "ns1"), "checkout-api", depth=2))


def test_forget_in_one_tenant_leaves_the_other_intact(two_tenants):
    two_tenants.forget(TENANT_B, entity_ids=["svc-checkout"])
    env = two_tenants.recall(TENANT_A, "checkout-api")
    assert env["items"][0]["name"] == "checkout-api"
    assert all(i["name"] != "checkout-api" for i in two_tenants.recall(TENANT_B, "checkout-api")["items"])


class _LeakyLexical:
    """A lexical index that ignores its scope filter: it searches every tenant it was given."""

    def __init__(self, inner, scopes: Sequence[Scope]) -> None:
        self.inner, self.scopes, self.name = inner, scopes, "leaky-lexical"

    def __getattr__(self, item):
        return getattr(self.inner, item)

    def search(self, scope, text, k) -> list[LexicalHit]:
        hits = [h for s in self.scopes for h in self.inner.search(s, text, k)]
        return sorted(hits, key=lambda h: (h.tenant_id == scope.tenant_id, -h.score))[:k]


class _LeakyVector(_LeakyLexical):
    def search(self, scope, vector, k) -> list[VectorHit]:
        hits = [h for s in self.scopes for h in self.inner.search(s, vector, k)]
        return sorted(hits, key=lambda h: h.tenant_id == scope.tenant_id)[:k]


def test_isolation_recheck_drops_foreign_hits_from_leaky_indexes(settings):
    stores = open_stores(settings)
    stores.lexical = _LeakyLexical(stores.lexical, [TENANT_B, TENANT_A])
    stores.vector = _LeakyVector(stores.vector, [TENANT_B, TENANT_A])
    with ContextService(stores, settings, clock=fixed_clock) as service:
        load(service, TENANT_A, "MARKER-A")
        load(service, TENANT_B, "MARKER-B")
        rejected = 0
        for query in QUERIES:
            env = service.recall(TENANT_A, query, depth=2, include_ids=True)
            assert "MARKER-B" not in dumps(env)
            rejected += env["isolation"]["rejected"]
        assert rejected > 0  # the counter shows what the backends leaked


class _LyingLexical(_LeakyLexical):
    """Worse: returns the other tenant's hits relabelled with the caller's scope."""

    def search(self, scope, text, k):
        foreign = self.inner.search(TENANT_B, text, k)
        return [h.model_copy(update=scope.as_dict()) for h in foreign]


def test_relabelled_foreign_hits_still_cannot_leak_content(settings):
    stores = open_stores(settings)
    stores.lexical = _LyingLexical(stores.lexical, [])
    with ContextService(stores, settings, clock=fixed_clock) as service:
        load(service, TENANT_A, "MARKER-A")
        load(service, TENANT_B, "MARKER-B")
        service.remember(TENANT_B, [{"id": "b-only", "name": "b-only secret thing", "summary": "MARKER-B"}])
        for query in [*QUERIES, "b-only secret thing"]:
            assert "MARKER-B" not in dumps(service.recall(TENANT_A, query, include_ids=True))
