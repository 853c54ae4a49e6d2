"""The read-trunk contract: `ContextService` end to end over a trio of stores (graph, lexical, vector,
plus journal and embedder), checked through the service facade every transport uses.

What the contract promises (contract 1.0.0):

- **Exact first.** A query that is (or contains) an entity id, qualified name, name or alias puts
  that entity first, marked `match.exact`, ahead of anything the BM25 and dense legs rank higher;
  exact items always form a prefix of `items`.
- **Isolation.** Two tenants, a sibling namespace and a shared code graph hold colliding data (same
  ids, names, aliases, summaries, hence the same vectors and content hashes); only the `source`
  marker differs. No answer of `recall`, `explain`, `neighbourhood` or `path` in one scope contains
  another scope's marker, tenant id, namespace or graph id, and `scope` in the envelope is the
  caller's. A name only another scope holds is `NotFound`.
- **The graph is authoritative.** An entity deleted from the graph (while the indexes still hold it)
  or changed in the graph (so the indexes hold a stale content hash) never appears in its old form;
  the envelope counts the drops (`coverage.dropped_missing`, `coverage.dropped_stale`).
- **Budget.** The JSON answer (`graphctx.envelope.dumps`) is never larger than
  `max_tokens * 4` bytes, `max_tokens` normalised to [256, 20000] (and recall never over 32 KiB);
  the envelope reports the normalised value and `used_tokens <= max_tokens`; `truncated` is set
  exactly when something was omitted. A budget too small for the subject is a `BudgetError`, never
  an oversized answer; the default recall budget (1,500) always fits an answer.
- **Determinism.** Same data and query give byte-identical envelopes apart from `timings_ms` and
  `as_of`, whether asked twice or of two scopes loaded in opposite orders.
- **Consistency.** After `remember` / `forget`, and after `reconcile` following graph-only changes,
  graph, lexical index and vector index hold the same `{id: content_hash}` for the scope.

The contract builds `ContextService(stores, clock=<fixed at datasets.T_NOW>)` and closes it (and so
the stores) after each test; `close()` must therefore be safe to call twice if your fixture closes too.

Usage (copy into your tests)::

    import pytest
    from graphctx.contracts.retrieval import RetrievalContract

    class TestMyTrio(RetrievalContract):
        @pytest.fixture
        def stores(self, tmp_path):
            return Stores(graph=MyGraph(...), lexical=MyLexical(...), journal=MyJournal(...),
                          vector=MyVector(...), embedder=MyEmbedder())
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

import pytest

from graphctx import bounds
from graphctx.contracts import datasets
from graphctx.contracts._base import ContractBase, adversarial_scopes, has_capability
from graphctx.contracts._markers import requires
from graphctx.envelope import dumps
from graphctx.errors import BudgetError, NotFound
from graphctx.kernel.ports import Capabilities
from graphctx.kernel.stores import Stores
from graphctx.kernel.templates import (
    ENTITY_DELETE,
    ENTITY_HASHES,
    ENTITY_UPSERT,
    SHORTEST_PATH,
    EntityDeleteParams,
    EntityHashesParams,
    EntityUpsertParams,
)
from graphctx.model import Entity, Fact
from graphctx.scope import Scope
from graphctx.service import ContextService

PATH = f"template:{SHORTEST_PATH.name}"
"""`path` is optional for a graph store (certify's minimum leaves it out): its tests need it."""
BUDGETS = (1, 256, 300, 600, 1000, 1500, 4000, 20_000, 1_000_000)
"""max_tokens values the budget tests ask for (below, at, between and above the normalised range)."""

RECALL_QUERIES = (
    "checkout-api",
    "who owns checkout",
    "payments team card processing",
    "redis evictions session store",
    "PAY-502-UPSTREAM",
    "svc-checkout",
    "shop.cart.Cart.add_item",
    "zanzibar vault",
)
"""Names, ids, aliases, free text, a qualified name, and words only the other scopes hold."""


def fixed_clock() -> datetime:
    return datasets.T_NOW


def marker(label: str) -> str:
    """A string that appears only where a scope's own records are shown."""
    return f"MARKER-{label}-Q7"


def colliding_data(mark: str) -> tuple[list[Entity], list[Fact]]:
    """The memory and code datasets, identical in every scope except `source`, which carries `mark`."""
    entities = [
        e.model_copy(update={"source": mark})
        for e in [*datasets.memory_entities(), *datasets.code_entities()]
    ]
    facts = [
        f.model_copy(update={"source": mark}) for f in [*datasets.memory_facts(), *datasets.code_facts()]
    ]
    return entities, facts


def only_there(mark: str) -> Entity:
    """An entity only the adversarial scopes hold."""
    return Entity(
        id="secret-vault",
        name="zanzibar vault",
        type="datastore",
        summary=f"zanzibar vault secret {mark}",
        source=mark,
        created_at=datasets.T0,
        updated_at=datasets.T0,
    )


def stable(envelope: dict[str, Any]) -> str:
    """The envelope's JSON without the two fields allowed to differ between equal answers."""
    env = copy.deepcopy(envelope)
    env.pop("timings_ms", None)
    env.pop("as_of", None)
    return dumps(env)


def names(envelope: dict[str, Any]) -> list[str]:
    return [item["name"] for item in envelope.get("items", [])]


class _Relabelling:
    """An index that searches other scopes too and stamps the caller's scope on their hits."""

    def __init__(self, inner: Any, others: Sequence[Scope]) -> None:
        self._inner, self._others = inner, list(others)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def search(self, scope: Scope, query: Any, k: int) -> list[Any]:
        hits = list(self._inner.search(scope, query, k))
        for other in self._others:
            hits += [h.model_copy(update=scope.as_dict()) for h in self._inner.search(other, query, k)]
        return hits


class RetrievalHarness(ContractBase):
    """Fixtures and hooks of the read-trunk contract. Adapter authors override `stores`, and may
    override the hook `make_service`; every other member is part of the contract (the guard checks).

    Troubleshooting: if every test fails, check that `stores` is fresh (empty for the suite's
    scopes) and that the lexical and vector indexes make writes visible on `flush()`.
    """

    contract_hooks = frozenset({"stores", "make_service"})

    @pytest.fixture
    def stores(self) -> Stores:
        """Return a fresh `graphctx.kernel.stores.Stores` (graph, lexical, journal, and optionally vector and
        embedder) holding nothing in the suite's scopes. The contract closes them. Override this."""
        raise NotImplementedError("override the `stores` fixture in your contract test class")

    def subject_capabilities(self, request: pytest.FixtureRequest) -> Capabilities:
        stores: Stores = request.getfixturevalue("stores")
        return stores.graph.capabilities

    def make_service(self, stores: Stores) -> ContextService:
        """The service under test; override only to pass settings (deadlines for a slow server)."""
        return ContextService(stores, clock=fixed_clock)

    @pytest.fixture
    def service(self, stores: Stores) -> Iterator[ContextService]:
        svc = self.make_service(stores)
        yield svc
        svc.close()

    def load(
        self, service: ContextService, scope: Scope, entities: Sequence[Entity], facts: Sequence[Fact]
    ) -> None:
        report = service.remember(scope, entities, facts)
        assert not report["index_errors"], report

    @pytest.fixture
    def collided(
        self, service: ContextService, request: pytest.FixtureRequest, scope: Scope
    ) -> dict[Scope, str]:
        """`scope` and the three adversarial scopes hold colliding data; returns {scope: marker}."""
        marks = {scope: marker("own")}
        for i, s in enumerate(adversarial_scopes(request)):
            marks[s] = marker(f"adv{i}")
        for s, mark in marks.items():
            entities, facts = colliding_data(mark)
            if s != scope:
                entities.append(only_there(mark))
            self.load(service, s, entities, facts)
        return marks

    def assert_isolated(self, envelope: dict[str, Any], scope: Scope, marks: dict[Scope, str]) -> str:
        """Nothing of another scope in the answer; returns its JSON."""
        text = dumps(envelope)
        assert envelope["scope"] == scope.as_dict()
        assert envelope["isolation"] == {"rejected": 0}, (
            f"the core's isolation re-check dropped {envelope['isolation']} record(s) of other scopes: "
            "a store or index returned another scope's data (it must bind the scope itself)"
        )
        for other, mark in marks.items():
            if other == scope:
                continue
            assert mark not in text, f"{other} leaked into an answer for {scope}"
            if other.tenant_id != scope.tenant_id:
                assert f'"{other.tenant_id}"' not in text
            if other.namespace != scope.namespace:
                assert f'"{other.namespace}"' not in text
            if other.graph_id and other.graph_id != scope.graph_id:
                assert f'"{other.graph_id}"' not in text
        return text

    def graph_hashes(self, stores: Stores, scope: Scope) -> dict[str, str]:
        """{id: content_hash} of the graph, paged through entity.hashes."""
        out: dict[str, str] = {}
        after = ""
        while True:
            page = stores.graph.run(ENTITY_HASHES, scope, EntityHashesParams(after=after, limit=1000)).items
            if not page:
                return out
            out.update({item.id: item.content_hash for item in page})
            after = page[-1].id

    def assert_consistent(self, stores: Stores, scope: Scope) -> dict[str, str]:
        graph = self.graph_hashes(stores, scope)
        stores.lexical.flush()
        assert stores.lexical.hashes(scope) == graph, "lexical index and graph disagree"
        if stores.vector is not None:
            stores.vector.flush()
            assert stores.vector.hashes(scope) == graph, "vector index and graph disagree"
        return graph


# ---- mixins -----------------------------------------------------------------------------------


class RetrievalExactFirstTests(RetrievalHarness):
    """Exact identifier lookup comes before BM25 and dense relevance. Since 1.0.0.

    Troubleshooting: `entity.find_exact` must match id, qualified name, name and alias (names and
    aliases case-insensitively) in the graph.
    """

    @pytest.mark.parametrize(
        ("query", "expected", "field"),
        [
            ("PAY-502-UPSTREAM", "payment-gateway", "alias"),
            ("svc-inv", "inventory-svc", "id"),
            ("shop.cart.Cart.add_item", "add_item", "qualified_name"),
            ("redis-sessions", "redis-sessions", "name"),
            ("who calls shop.cart.Cart.add_item?", "add_item", "qualified_name"),
        ],
    )
    def test_recall_exact_identifier_first(
        self,
        service: ContextService,
        collided: dict[Scope, str],
        scope: Scope,
        query: str,
        expected: str,
        field: str,
    ) -> None:
        """The whole query as an id, qualified name, name or alias, or a qualified name named inside a
        question, puts its entity first, marked exact."""
        env = service.recall(scope, query)
        assert names(env)[:1] == [expected]
        assert env["items"][0]["match"]["exact"] == field

    def test_recall_exact_beats_lexical_relevance(self, service: ContextService, scope: Scope) -> None:
        """An exact alias match ranks before a decoy that BM25 and the dense leg like better."""
        entities, facts = colliding_data("m")
        decoy = Entity(
            id="decoy", name="pgw pgw pgw notes", summary="pgw pgw pgw pgw pgw", aliases=("pgw pgw",)
        )
        self.load(service, scope, [*entities, decoy], facts)
        env = service.recall(scope, "pgw")
        assert names(env)[:1] == ["payment-gateway"] and "exact" in env["items"][0]["match"]
        decoy_item = next(item for item in env["items"] if item["name"] == decoy.name)
        assert "exact" not in decoy_item["match"]

    def test_recall_exact_items_form_a_prefix(
        self, service: ContextService, collided: dict[Scope, str], scope: Scope
    ) -> None:
        """No approximate item ever ranks above an exact one."""
        for query in RECALL_QUERIES:
            flags = ["exact" in item["match"] for item in service.recall(scope, query)["items"]]
            assert flags == sorted(flags, reverse=True), (query, flags)


class RetrievalIsolationTests(RetrievalHarness):
    """Colliding tenants, namespaces and code graphs never see each other. Since 1.0.0.

    Troubleshooting: every graph template must bind the full scope on every hop; index hits are
    re-checked by core, so a leak here usually comes from the graph.
    """

    def test_recall_fresh_stores_find_nothing(
        self, service: ContextService, request: pytest.FixtureRequest, scope: Scope
    ) -> None:
        """Fresh stores hold nothing in any of the suite's scopes: recall answers an empty envelope."""
        for s in [scope, *adversarial_scopes(request)]:
            env = service.recall(s, "checkout-api payments team")
            assert env["items"] == [] and env["scope"] == s.as_dict()
            assert env["coverage"]["candidates"] == 0 and env["follow_up"]

    @pytest.mark.parametrize("query", RECALL_QUERIES)
    def test_recall_isolated_across_colliding_scopes(
        self, service: ContextService, collided: dict[Scope, str], scope: Scope, query: str
    ) -> None:
        """recall (depth 2, with ids) in each scope shows only that scope's data."""
        for s, mark in collided.items():
            text = self.assert_isolated(service.recall(s, query, depth=2, include_ids=True), s, collided)
            if query != "zanzibar vault" or s != scope:
                assert mark in text, f"{query!r} found nothing of {s}'s own data"

    def test_explain_isolated_across_colliding_scopes(
        self, service: ContextService, collided: dict[Scope, str], scope: Scope
    ) -> None:
        """explain by name, id and alias in `scope` shows only `scope`'s facts and names."""
        for name in ("checkout-api", "svc-checkout", "PAY-502-UPSTREAM", "shop.cart.Cart"):
            env = service.explain(scope, name, include_ids=True)
            assert collided[scope] in self.assert_isolated(env, scope, collided)
            assert env["facts"], name

    def test_neighbourhood_isolated_across_colliding_scopes(
        self, service: ContextService, collided: dict[Scope, str], scope: Scope
    ) -> None:
        """neighbourhood (depth 2) in `scope` reaches only `scope`'s nodes and edges."""
        for name in ("checkout-api", "shop.cart"):
            env = service.neighbourhood(scope, name, depth=2, include_ids=True)
            assert collided[scope] in self.assert_isolated(env, scope, collided)
            assert env["nodes"] and env["edges"], name

    @requires(PATH)
    def test_path_isolated_across_colliding_scopes(
        self, service: ContextService, collided: dict[Scope, str], scope: Scope
    ) -> None:
        """path in `scope` walks only `scope`'s nodes and edges."""
        for source, target in (("checkout-api", "Payments Team"), ("shop", "price_of")):
            env = service.path(scope, source, target, include_ids=True)
            assert env["found"] is True, (source, target)
            assert collided[scope] in self.assert_isolated(env, scope, collided)

    def test_recall_keeps_relabelled_foreign_hits_out_through_hydration(
        self, stores: Stores, collided: dict[Scope, str], scope: Scope
    ) -> None:
        """Indexes that return the other scopes' hits stamped with the caller's scope (so the core's
        re-check cannot tell them apart) still cannot leak: the graph hydrates only the caller's own
        entities, so the foreign hits are dropped as missing or stale. Since 1.2.0."""
        others = [s for s in collided if s != scope]
        lying = Stores(
            graph=stores.graph,
            lexical=_Relabelling(stores.lexical, others),
            journal=stores.journal,
            vector=_Relabelling(stores.vector, others) if stores.vector is not None else None,
            embedder=stores.embedder,
        )
        service = self.make_service(lying)
        try:
            for query in RECALL_QUERIES:
                env = service.recall(scope, query, depth=2, include_ids=True)
                self.assert_isolated(env, scope, collided)
            assert "zanzibar vault" not in names(service.recall(scope, "zanzibar vault"))
        finally:
            service.close()

    def test_explain_other_scope_only_name_is_not_found(
        self, service: ContextService, collided: dict[Scope, str], scope: Scope
    ) -> None:
        """A name only other scopes hold is NotFound in `scope`, and recall finds nothing of it."""
        with pytest.raises(NotFound):
            service.explain(scope, "zanzibar vault")
        assert "zanzibar vault" not in names(service.recall(scope, "zanzibar vault"))


class RetrievalAuthoritativeGraphTests(RetrievalHarness):
    """Hydration from the graph hides what the indexes still hold: deleted and stale entities.
    Since 1.0.0.

    Troubleshooting: `entity.get_by_ids` must return current rows only, with the stored content hash.
    """

    def test_recall_never_returns_graph_deleted_entity(
        self, service: ContextService, stores: Stores, collided: dict[Scope, str], scope: Scope
    ) -> None:
        """An entity deleted from the graph only (the indexes still hold it) never appears."""
        stores.graph.run(ENTITY_DELETE, scope, EntityDeleteParams(ids=("svc-pay",)))
        stores.lexical.flush()
        assert "svc-pay" in stores.lexical.hashes(scope), "precondition: the lexical index still holds it"
        dropped = 0
        for query in ("payment-gateway", "pgw", "PAY-502-UPSTREAM", "idempotency keys card processor"):
            env = service.recall(scope, query, depth=2)
            text = dumps(env)
            assert "payment-gateway" not in text and "idempotency" not in text, query
            dropped += env["coverage"]["dropped_missing"]
        assert dropped > 0, "the indexes returned the deleted entity, and coverage should count the drop"
        with pytest.raises(NotFound):
            service.explain(scope, "payment-gateway")

    def test_recall_never_returns_stale_entity(
        self, service: ContextService, stores: Stores, collided: dict[Scope, str], scope: Scope
    ) -> None:
        """An entity changed in the graph only (indexes hold the old hash) never appears in its old form."""
        old = next(e for e in datasets.memory_entities() if e.id == "db-redis")
        newer = old.model_copy(
            update={
                "name": "valkey-sessions",
                "aliases": ("valkey",),
                "summary": "Replaced the store.",
                **scope.as_dict(),
            }
        )
        stores.graph.run(ENTITY_UPSERT, scope, EntityUpsertParams(entities=(newer,)))
        stores.lexical.flush()
        assert stores.lexical.hashes(scope)["db-redis"] == old.content_hash, (
            "precondition: the index is stale"
        )
        dropped = 0
        for query in ("redis-sessions", "Old session store", "redis sessions old store"):
            env = service.recall(scope, query, depth=2)
            text = dumps(env)
            assert "redis-sessions" not in text and "Old session store" not in text, query
            dropped += env["coverage"]["dropped_stale"]
        assert dropped > 0, "the indexes returned the stale entity, and coverage should count the drop"

    def test_recall_exact_match_survives_stale_index(
        self, service: ContextService, stores: Stores, collided: dict[Scope, str], scope: Scope
    ) -> None:
        """While the indexes hold an old version, the graph's current version is still found by exact name."""
        old = next(e for e in datasets.memory_entities() if e.id == "db-redis")
        newer = old.model_copy(update={"name": "valkey-sessions", "aliases": ("valkey",), **scope.as_dict()})
        stores.graph.run(ENTITY_UPSERT, scope, EntityUpsertParams(entities=(newer,)))
        env = service.recall(scope, "valkey-sessions")
        assert names(env)[:1] == ["valkey-sessions"], env["coverage"]
        assert env["items"][0]["match"]["exact"] == "name"


class RetrievalBudgetTests(RetrievalHarness):
    """Answers fit `max_tokens * 4` bytes of JSON, or are a BudgetError. Since 1.0.0.

    Troubleshooting: a graph template that ignores its limits (facts, nodes) makes answers large;
    the budget still holds, but omissions then name what was cut.
    """

    @pytest.fixture
    def big(self, service: ContextService, scope: Scope) -> ContextService:
        """The memory data plus datasets.hub(60): a hub with 120 neighbours and 120 facts."""
        hub_entities, hub_facts = datasets.hub(60)
        entities, facts = colliding_data("m")
        self.load(service, scope, [*entities, *hub_entities], [*facts, *hub_facts])
        return service

    @pytest.mark.parametrize("max_tokens", BUDGETS)
    def test_reads_fit_the_token_budget(
        self, big: ContextService, scope: Scope, max_tokens: int, request: pytest.FixtureRequest
    ) -> None:
        """recall, explain, neighbourhood and path (when the graph declares it) never exceed
        max_tokens * 4 bytes of JSON."""
        normalised = min(max(max_tokens, bounds.MIN_TOKENS), bounds.MAX_TOKENS)
        calls = {
            "recall": lambda: big.recall(scope, "hub leaf", depth=2, max_tokens=max_tokens, include_ids=True),
            "explain": lambda: big.explain(scope, "hub", max_tokens=max_tokens, include_ids=True),
            "neighbourhood": lambda: big.neighbourhood(
                scope, "hub", depth=2, limit=200, max_tokens=max_tokens
            ),
            "path": lambda: big.path(scope, "leaf in 0", "leaf out 7", max_tokens=max_tokens),
        }
        if not has_capability(self.subject_capabilities(request), PATH):
            del calls["path"]
        answered = 0
        for op, call in calls.items():
            try:
                env = call()
            except BudgetError:
                assert normalised < bounds.DEFAULT_RECALL_TOKENS, f"{op} refused the budget {normalised}"
                continue
            answered += 1
            size = len(dumps(env).encode("utf-8"))
            assert size <= normalised * 4, f"{op}: {size} bytes for {normalised} tokens"
            if op == "recall":
                assert size <= bounds.RECALL_JSON_BYTES
            assert env["budget"]["max_tokens"] == normalised
            assert env["budget"]["used_tokens"] <= normalised
            assert env["truncated"] == bool(env["omissions"]), op
        if normalised >= bounds.DEFAULT_RECALL_TOKENS:
            assert answered == len(calls)

    def test_explain_names_what_the_budget_cut(self, big: ContextService, scope: Scope) -> None:
        """At the smallest budget a large answer is truncated and names its omissions."""
        env = big.explain(scope, "hub", max_tokens=bounds.MIN_TOKENS * 2)
        assert env["truncated"] is True
        assert env["omissions"] and all("what" in o for o in env["omissions"])


class RetrievalDeterminismTests(RetrievalHarness):
    """Same data, same question, same bytes (apart from timings_ms and as_of). Since 1.0.0.

    Troubleshooting: every backend must order its results fully (ties by id), including the graph's
    neighbourhood and fact lists.
    """

    def test_reads_repeat_byte_identical(
        self,
        service: ContextService,
        collided: dict[Scope, str],
        scope: Scope,
        request: pytest.FixtureRequest,
    ) -> None:
        """Asking the same question twice gives byte-identical envelopes."""
        calls = [
            *(lambda q=q: service.recall(scope, q, depth=2, include_ids=True) for q in RECALL_QUERIES),
            lambda: service.explain(scope, "checkout-api"),
            lambda: service.neighbourhood(scope, "checkout-api", depth=2),
        ]
        if has_capability(self.subject_capabilities(request), PATH):
            calls.append(lambda: service.path(scope, "redis-sessions", "Commerce Platform"))
        for call in calls:
            assert stable(call()) == stable(call())

    def test_reads_independent_of_load_order(self, service: ContextService, scope: Scope) -> None:
        """Two scopes loaded with the same data in opposite orders answer identically."""
        twin = Scope(scope.tenant_id[:-1] + "z", scope.namespace)  # same length: same envelope size
        entities, facts = colliding_data("same")
        self.load(service, scope, entities, facts)
        self.load(service, twin, entities[::-1], facts[::-1])

        def both(call: Any) -> tuple[str, str]:
            mine, theirs = call(scope), call(twin)
            theirs["scope"] = mine["scope"]
            return stable(mine), stable(theirs)

        for query in RECALL_QUERIES:
            a, b = both(lambda s, q=query: service.recall(s, q, depth=2, include_ids=True))
            assert a == b, query
        a, b = both(lambda s: service.neighbourhood(s, "checkout-api", depth=2))
        assert a == b
        a, b = both(lambda s: service.explain(s, "checkout-api"))
        assert a == b


class RetrievalConsistencyTests(RetrievalHarness):
    """Graph, lexical and vector agree by id + content hash after writes and after reconcile.
    Since 1.0.0.

    Troubleshooting: index writes must be idempotent upserts keyed by (scope, id); `hashes()` must
    list every entry of the scope.
    """

    def test_remember_and_forget_keep_indexes_consistent(
        self, service: ContextService, stores: Stores, collided: dict[Scope, str], scope: Scope
    ) -> None:
        """After remember and forget, every scope's indexes hold exactly the graph's ids and hashes."""
        for s in collided:
            assert len(self.assert_consistent(stores, s)) == len(colliding_data("x")[0]) + (s != scope)
        service.forget(scope, entity_ids=["team-com", "m-add"])
        graph = self.assert_consistent(stores, scope)
        assert "team-com" not in graph and "m-add" not in graph
        for s in collided:
            self.assert_consistent(stores, s)

    def test_reconcile_repairs_graph_only_changes(
        self, service: ContextService, stores: Stores, collided: dict[Scope, str], scope: Scope
    ) -> None:
        """Graph-only inserts, changes and deletes are repaired by reconcile; other scopes are untouched."""
        before = {s: self.assert_consistent(stores, s) for s in collided if s != scope}
        changed = next(e for e in datasets.memory_entities() if e.id == "db-redis").model_copy(
            update={"summary": "Changed behind the indexes' back.", **scope.as_dict()}
        )
        late = Entity(id="late", name="late-arrival", summary="written past the indexes", **scope.as_dict())
        stores.graph.run(ENTITY_UPSERT, scope, EntityUpsertParams(entities=(changed, late)))
        stores.graph.run(ENTITY_DELETE, scope, EntityDeleteParams(ids=("svc-inv",)))
        graph = self.graph_hashes(stores, scope)
        stores.lexical.flush()
        assert stores.lexical.hashes(scope) != graph, "precondition: the indexes lag the graph"
        service.reconcile(scope)
        after = self.assert_consistent(stores, scope)
        assert after == graph and after["late"] == late.content_hash and "svc-inv" not in after
        for s, hashes in before.items():
            assert self.assert_consistent(stores, s) == hashes
        assert names(service.recall(scope, "late-arrival"))[:1] == ["late-arrival"]


# ---- aggregate ----------------------------------------------------------------------------------


class RetrievalContract(
    RetrievalExactFirstTests,
    RetrievalIsolationTests,
    RetrievalAuthoritativeGraphTests,
    RetrievalBudgetTests,
    RetrievalDeterminismTests,
    RetrievalConsistencyTests,
):
    """The read-trunk contract over a trio of stores. Subclass it and override `stores`.

    Usage::

        class TestMyTrio(RetrievalContract):
            @pytest.fixture
            def stores(self, tmp_path):
                return open_stores(Settings(data_dir=tmp_path, graph_backend="my-graph"))
    """
