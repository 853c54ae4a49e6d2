"""The GraphStore contract: one mixin per catalogue operation, plus two bundles.

Usage, in the adapter's own tests (one fixture, plus the reopen hook for a durable store)::

    import pytest
    from graphctx.contracts.graph import GraphStoreContract

    class TestAcmeGraphStore(GraphStoreContract):
        @pytest.fixture
        def graph_store(self, tmp_path):
            store = AcmeGraphStore(tmp_path / "graph")  # fresh, schema ensured, empty for every scope
            store.ensure_schema()
            yield store
            store.close()

        @pytest.fixture
        def reopen_graph_store(self, tmp_path):      # durable stores only: open the same location
            return lambda store: AcmeGraphStore(tmp_path / "graph")

The hooks (`contract_hooks`) are the only members a test class may override; the guard fails on any
other override.

`GraphStoreCoreContract` certifies the entity and fact templates (with isolation, injection,
ordering, error, fresh-store and close/reopen checks); `GraphStoreContract` adds neighbourhood, shortest path,
statistics, clear and the clamps. A test needing a template the adapter does not declare in
`capabilities.templates` is skipped with the template's name (`template:<name>`); a test that is
known to fail is overridden with `@known_broken(reason=...)`; anything else is caught by the guard.

What the contract promises
--------------------------
Only ``GraphStore.run(template, scope, params)`` is used; the test never touches the backend.

Scope. Every entity and fact returned carries the request scope's ``tenant_id``, ``namespace`` and
``graph_id``. Nothing of another scope -- another tenant, a sibling namespace of the same tenant, or a
shared code graph (``graph_id``) of the same tenant and namespace -- is ever returned, counted, reached
by a traversal, changed or deleted, even when ids, names, aliases, qualified names and fact ids
collide. An entity or fact that names another scope is refused with ``ScopeError`` (nothing of the
batch is written) or re-bound to the request's scope; it never lands in the scope it names.

Ordering. Every answer is in a total order fixed by the catalogue -- a rank and then an id, never a
raw score, never insertion order -- and repeating a read gives an identical answer:

* ``entity.get_by_ids``: the order of the ids given, each entity once, missing ids absent;
* ``entity.find_exact``: field rank (id, qualified_name, name, alias), then entity id; an entity
  once, under its best field; ``id`` and ``qualified_name`` compare exactly, ``name`` and ``alias``
  casefolded (``str.casefold``); ``value`` is the given value that matched;
* ``entity.hashes``: entity id;
* ``fact.from_roots`` and every list of edges: (subject_id, predicate, object_id, id);
* ``graph.neighbourhood`` nodes: (depth, id), roots at depth 0, each node once at its smallest depth;
* ``graph.shortest_path``: a shortest path; among several, the smallest sequence of node ids.

"Id order" is Unicode code-point order (the same as UTF-8 byte order).

Write visibility. A write is visible to the very next ``run()`` on the same store; there is no
flush or refresh step. A write that raises changes nothing.

Close and reopen (since 1.1.0). After ``close()``, ``run()`` raises ``BackendUnavailable`` (or another
``BackendError``); ``close()`` may be called twice. A store declaring ``capabilities.durable`` keeps
every entity and fact across ``close()`` and a reopen on the same location; the test class provides
the ``reopen_graph_store`` hook that reopens it (an in-memory store declares ``durable=False``).

Time. A fact is valid at ``t`` when ``valid_from <= t < valid_to`` (missing bounds are open).
``as_of=None`` means the store's current time, and ``scope.stats``' ``valid_facts`` counts facts
valid now. A new row keeps the ``created_at`` it is given (or gets the current time); a replace keeps
the stored ``created_at``; ``updated_at`` is always set. Apart from those promises, comparisons
ignore ``created_at`` and ``updated_at``, which adapters may stamp.

Traversals. ``graph.neighbourhood`` is a breadth-first expansion over valid facts whose object is an
entity (value-only facts are not edges), following the edge allowlist and the direction at every
hop. Its edges are the edges it followed to a returned node (an edge between two nodes of the last
depth is not followed). ``limit`` counts nodes beyond the roots; ``per_direction_limit`` caps the
edges followed from one node in one direction. What a limit keeps is the first in catalogue order.

Clamps. Parameters are clamped by the template models, not rejected (a depth of 9 runs as 2), and
the store honours the clamped value exactly. A cut answer says so: ``truncated=True`` (and, for the
neighbourhood, ``omitted >= 1``); an answer with nothing cut has ``truncated=False``, ``omitted=0``.

Errors (the type is the contract, the wording is free):

* a template that is not the catalogue's (unknown name or another version), or that the store does
  not declare in ``capabilities.templates``: ``UnsupportedTemplate``, never an empty result; every
  declared template runs;
* params that are not the template's parameter model: ``InputError``;
* a scope that is not a ``Scope``: ``ScopeError``;
* ``fact.upsert`` with an endpoint missing from the scope: ``NotFound``, and nothing is written;
* unknown ids, roots or values are not errors: they match nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from graphctx.contracts import datasets
from graphctx.contracts._base import ContractBase, has_capability
from graphctx.contracts._markers import contract_skip, requires
from graphctx.errors import BackendError, InputError, NotFound, ScopeError, UnsupportedTemplate
from graphctx.kernel import templates as t
from graphctx.kernel.ports import Capabilities, GraphStore
from graphctx.model import Entity, Fact
from graphctx.scope import Scope

__all__ = [
    "ClampTests",
    "DurabilityTests",
    "EntityDeleteTests",
    "EntityHashesTests",
    "EntityUpsertTests",
    "ErrorTests",
    "FactInvalidateTests",
    "FactUpsertTests",
    "FactsFromRootsTests",
    "FindExactTests",
    "FreshStoreTests",
    "GetByIdsTests",
    "GraphStoreContract",
    "GraphStoreCoreContract",
    "InjectionTests",
    "IsolationTests",
    "NeighbourhoodTests",
    "OrderingTests",
    "ScopeClearTests",
    "ScopeStatsTests",
    "ShortestPathTests",
]

# ---- capability names -------------------------------------------------------------------------

UPSERT = f"template:{t.ENTITY_UPSERT.name}"
GET = f"template:{t.ENTITY_GET.name}"
FIND = f"template:{t.ENTITY_FIND_EXACT.name}"
DELETE = f"template:{t.ENTITY_DELETE.name}"
HASHES = f"template:{t.ENTITY_HASHES.name}"
FACTS = f"template:{t.FACT_UPSERT.name}"
INVALIDATE = f"template:{t.FACT_INVALIDATE.name}"
FROM_ROOTS = f"template:{t.FACTS_FROM_ROOTS.name}"
NEIGHBOURHOOD = f"template:{t.NEIGHBOURHOOD.name}"
PATH = f"template:{t.SHORTEST_PATH.name}"
STATS = f"template:{t.SCOPE_STATS.name}"
CLEAR = f"template:{t.SCOPE_CLEAR.name}"

# Instants no store clock can be on the wrong side of: "now" is always between them.
FAR_PAST = datetime(2001, 1, 1, tzinfo=UTC)
FAR_FUTURE = datetime(2999, 1, 1, tzinfo=UTC)
AFTER_T0 = datetime(2024, 3, 1, tzinfo=UTC)
"""Between T0 and T_CHANGE of the memory dataset: the old owner and the Redis dependency hold."""

_STAMPS: set[str] = {"created_at", "updated_at"}


# ---- driving the port -------------------------------------------------------------------------


def upsert_entities(store: GraphStore, scope: Scope, entities: Iterable[Entity]) -> t.UpsertResult:
    return store.run(t.ENTITY_UPSERT, scope, t.EntityUpsertParams(entities=tuple(entities)))


def upsert_facts(store: GraphStore, scope: Scope, facts: Iterable[Fact]) -> t.UpsertResult:
    return store.run(t.FACT_UPSERT, scope, t.FactUpsertParams(facts=tuple(facts)))


def load(store: GraphStore, scope: Scope, entities: Iterable[Entity], facts: Iterable[Fact] = ()) -> None:
    """Entities first, then the facts between them."""
    upsert_entities(store, scope, entities)
    facts = tuple(facts)
    if facts:
        upsert_facts(store, scope, facts)


def get_entities(store: GraphStore, scope: Scope, ids: Iterable[str]) -> list[Entity]:
    return list(store.run(t.ENTITY_GET, scope, t.EntityGetParams(ids=tuple(ids))).entities)


def find_exact(store: GraphStore, scope: Scope, values: Iterable[str], **kw: Any) -> list[t.ExactMatch]:
    params = t.EntityFindExactParams(values=tuple(values), **kw)
    return list(store.run(t.ENTITY_FIND_EXACT, scope, params).matches)


def delete_entities(store: GraphStore, scope: Scope, ids: Iterable[str]) -> t.DeleteResult:
    return store.run(t.ENTITY_DELETE, scope, t.EntityDeleteParams(ids=tuple(ids)))


def hash_page(store: GraphStore, scope: Scope, after: str = "", limit: int = 1000) -> list[tuple[str, str]]:
    page = store.run(t.ENTITY_HASHES, scope, t.EntityHashesParams(after=after, limit=limit))
    return [(item.id, item.content_hash) for item in page.items]


def all_hashes(store: GraphStore, scope: Scope) -> list[tuple[str, str]]:
    """Every (id, hash) of the scope, paging until a short page."""
    out: list[tuple[str, str]] = []
    while True:
        page = hash_page(store, scope, after=out[-1][0] if out else "", limit=5000)
        out += page
        if len(page) < 5000:
            return out


def invalidate(store: GraphStore, scope: Scope, ids: Iterable[str], valid_to: datetime) -> int:
    params = t.FactInvalidateParams(ids=tuple(ids), valid_to=valid_to)
    return store.run(t.FACT_INVALIDATE, scope, params).count


def from_roots(store: GraphStore, scope: Scope, roots: Iterable[str], **kw: Any) -> t.FactList:
    return store.run(t.FACTS_FROM_ROOTS, scope, t.FactsFromRootsParams(roots=tuple(roots), **kw))


def neighbourhood(store: GraphStore, scope: Scope, roots: Iterable[str], **kw: Any) -> t.Subgraph:
    return store.run(t.NEIGHBOURHOOD, scope, t.NeighbourhoodParams(roots=tuple(roots), **kw))


def shortest_path(store: GraphStore, scope: Scope, source: str, target: str, **kw: Any) -> t.PathResult:
    params = t.ShortestPathParams(source=source, target=target, **kw)
    return store.run(t.SHORTEST_PATH, scope, params)


def stats(store: GraphStore, scope: Scope) -> t.ScopeStats:
    return store.run(t.SCOPE_STATS, scope, t.NoParams())


def clear(store: GraphStore, scope: Scope) -> int:
    return store.run(t.SCOPE_CLEAR, scope, t.NoParams()).count


# ---- comparing by value -----------------------------------------------------------------------


def utc(value: datetime | None) -> datetime | None:
    """Timestamps compare as instants; a naive one is read as UTC."""
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def entity_view(entity: Entity) -> dict[str, Any]:
    """Every public field of an entity but the stamps an adapter may set."""
    return entity.model_dump(exclude=_STAMPS)


def expected_entity(entity: Entity, scope: Scope) -> dict[str, Any]:
    """What the store must return for `entity` written to `scope`."""
    return {**entity_view(entity), **scope.as_dict()}


def fact_view(fact: Fact) -> dict[str, Any]:
    view = fact.model_dump(exclude=_STAMPS)
    view["valid_from"] = utc(fact.valid_from)
    view["valid_to"] = utc(fact.valid_to)
    view["confidence"] = round(fact.confidence, 9)
    return view


def expected_fact(fact: Fact, scope: Scope) -> dict[str, Any]:
    return {**fact_view(fact), **scope.as_dict()}


def fact_order(fact: Fact) -> tuple[str, str, str, str]:
    """The catalogue's edge order."""
    return (fact.subject_id, fact.predicate, fact.object_id or "", fact.id)


def valid_at(fact: Fact, when: datetime) -> bool:
    start, end = utc(fact.valid_from), utc(fact.valid_to)
    return (start is None or start <= when) and (end is None or when < end)


def expected_from_roots(
    facts: Iterable[Fact],
    roots: Iterable[str],
    *,
    direction: str = "both",
    predicates: Sequence[str] = (),
    as_of: datetime | None = None,
    include_invalid: bool = False,
) -> list[Fact]:
    """The catalogue's fact.from_roots, computed from the dataset (no limit)."""
    roots = set(roots)
    out = {}
    for f in facts:
        touches = (direction in ("out", "both") and f.subject_id in roots) or (
            direction in ("in", "both") and f.object_id in roots
        )
        if not touches or (predicates and f.predicate not in predicates):
            continue
        if not include_invalid and as_of is not None and not valid_at(f, as_of):
            continue
        out[f.id] = f
    return sorted(out.values(), key=fact_order)


def ids(items: Iterable[Entity | Fact]) -> list[str]:
    return [i.id for i in items]


def node_ids(subgraph: t.Subgraph) -> list[tuple[int, str]]:
    return [(n.depth, n.entity.id) for n in subgraph.nodes]


def edge_triples(facts: Iterable[Fact]) -> list[tuple[str, str, str | None]]:
    return [(f.subject_id, f.predicate, f.object_id) for f in facts]


def in_scope(item: Entity | Fact, scope: Scope) -> bool:
    return (item.tenant_id, item.namespace, item.graph_id) == (
        scope.tenant_id,
        scope.namespace,
        scope.graph_id,
    )


def memory() -> tuple[list[Entity], list[Fact]]:
    return datasets.memory_entities(), datasets.memory_facts()


def code() -> tuple[list[Entity], list[Fact]]:
    return datasets.code_entities(), datasets.code_facts()


def ent(id: str, name: str | None = None, **kw: Any) -> Entity:
    return Entity(id=id, name=name or id, **kw)


def edge(subject: str, obj: str, predicate: str = "relates_to", **kw: Any) -> Fact:
    return Fact(subject_id=subject, predicate=predicate, object_id=obj, **kw)


def chain(n: int, prefix: str = "n") -> tuple[list[Entity], list[Fact]]:
    """n0 -> n1 -> ... -> n(n-1), all `calls`."""
    ents = [ent(f"{prefix}{i}") for i in range(n)]
    return ents, [edge(f"{prefix}{i}", f"{prefix}{i + 1}", "calls") for i in range(n - 1)]


def modified(entity: Entity, **changes: Any) -> Entity:
    """A re-validated copy (so redaction and alias rules apply to the changes)."""
    return Entity.model_validate({**entity.model_dump(), **changes})


# ---- the subject ------------------------------------------------------------------------------


class _GraphSubject(ContractBase):
    """The one fixture an adapter author writes (plus one optional hook), and the capabilities it
    declares."""

    contract_hooks = frozenset({"graph_store", "reopen_graph_store"})

    @pytest.fixture
    def graph_store(self) -> GraphStore:
        """Return (or yield, closing it afterwards) a fresh GraphStore with its schema ensured.

        It must be empty for every scope the contract uses (the scopes are unique per test, so a shared
        server is fine as long as each test's scopes start empty) and declare its templates in
        `capabilities.templates`. Override this fixture in your test class."""
        raise NotImplementedError(
            "return a fresh GraphStore from a `graph_store` fixture in your GraphStoreContract subclass"
        )

    @pytest.fixture
    def reopen_graph_store(self) -> Callable[[GraphStore], GraphStore]:
        """Optional hook for durable stores: return a function that takes the (closed) `graph_store`
        and returns a new store opened on the same location (same file, directory or server), schema
        ensured. The durability test closes the store it gets back.

        A store declaring `capabilities.durable` (the default) must provide it; without it the
        durability test fails, telling you to add it. An in-memory store declares `durable=False` and
        leaves this alone (the test then skips, naming the hook). Override this fixture in your test
        class, e.g.::

            @pytest.fixture
            def reopen_graph_store(self, tmp_path):
                return lambda store: AcmeGraphStore(tmp_path / "graph")
        """
        raise NotImplementedError("no `reopen_graph_store` hook")

    def subject_capabilities(self, request: pytest.FixtureRequest) -> Capabilities:
        store: GraphStore = request.getfixturevalue("graph_store")
        return store.capabilities


# ---- entity.upsert ----------------------------------------------------------------------------


class EntityUpsertTests(_GraphSubject):
    """entity.upsert: insert or replace by id; created_at kept on replace."""

    @requires(UPSERT)
    def test_entity_upsert_reports_created(self, graph_store: GraphStore, scope: Scope) -> None:
        """Upserting new entities reports each one as created."""
        entities, _ = memory()
        assert upsert_entities(graph_store, scope, entities) == t.UpsertResult(created=len(entities))

    @requires(UPSERT, GET)
    def test_entity_upsert_visible_to_next_run(self, graph_store: GraphStore, scope: Scope) -> None:
        """An upserted entity is returned by the very next run(), every field equal, the scope filled in."""
        entities = datasets.memory_entities() + datasets.code_entities()
        upsert_entities(graph_store, scope, entities)
        got = get_entities(graph_store, scope, ids(entities))
        assert [entity_view(e) for e in got] == [expected_entity(e, scope) for e in entities]

    @requires(UPSERT, GET)
    def test_entity_upsert_replace_reports_updated(self, graph_store: GraphStore, scope: Scope) -> None:
        """Upserting an existing id with changed content replaces every field and reports it as updated."""
        entities, _ = code()
        upsert_entities(graph_store, scope, entities)
        changed = modified(entities[2], name="Basket", summary="renamed", line_end=70, signature=None)
        assert upsert_entities(graph_store, scope, [changed]) == t.UpsertResult(updated=1)
        (got,) = get_entities(graph_store, scope, [changed.id])
        assert entity_view(got) == expected_entity(changed, scope)

    @requires(UPSERT)
    def test_entity_upsert_identical_reports_unchanged(self, graph_store: GraphStore, scope: Scope) -> None:
        """Re-upserting entities equal in every field but timestamps reports them unchanged."""
        entities, _ = memory()
        upsert_entities(graph_store, scope, entities)
        again = [e.model_copy(update={"updated_at": datasets.T_NOW}) for e in entities]
        assert upsert_entities(graph_store, scope, again) == t.UpsertResult(unchanged=len(entities))

    @requires(UPSERT)
    def test_entity_upsert_counts_a_mixed_batch(self, graph_store: GraphStore, scope: Scope) -> None:
        """A batch of new, changed and identical entities is counted as created, updated and unchanged."""
        upsert_entities(graph_store, scope, [ent("a"), ent("b")])
        result = upsert_entities(graph_store, scope, [ent("a"), ent("b", summary="changed"), ent("c")])
        assert result == t.UpsertResult(created=1, updated=1, unchanged=1)

    @requires(UPSERT, GET)
    def test_entity_upsert_keeps_created_at_on_replace(self, graph_store: GraphStore, scope: Scope) -> None:
        """A replace keeps the stored created_at, even when the new version carries another one."""
        upsert_entities(graph_store, scope, [ent("given", created_at=datasets.T0), ent("stamped")])
        (given, stamped) = get_entities(graph_store, scope, ["given", "stamped"])
        assert utc(given.created_at) == datasets.T0
        assert stamped.created_at is not None
        upsert_entities(
            graph_store,
            scope,
            [ent("given", summary="v2", created_at=datasets.T_NOW), ent("stamped", summary="v2")],
        )
        (given2, stamped2) = get_entities(graph_store, scope, ["given", "stamped"])
        assert (given2.summary, stamped2.summary) == ("v2", "v2")
        assert utc(given2.created_at) == datasets.T0
        assert utc(stamped2.created_at) == utc(stamped.created_at)

    @requires(UPSERT, GET)
    def test_entity_upsert_sets_updated_at(self, graph_store: GraphStore, scope: Scope) -> None:
        """Every stored entity has an updated_at, no earlier than its created_at, also after a replace."""
        upsert_entities(graph_store, scope, [ent("a"), ent("b")])
        upsert_entities(graph_store, scope, [ent("a", summary="changed")])
        for e in get_entities(graph_store, scope, ["a", "b"]):
            assert e.updated_at is not None and e.created_at is not None, e.id
            assert utc(e.updated_at) >= utc(e.created_at), e.id  # type: ignore[operator]

    @requires(UPSERT, GET, FIND)
    def test_entity_upsert_visible_to_reads_made_before(self, graph_store: GraphStore, scope: Scope) -> None:
        """An entity read before a replace comes back in its new version from the next read."""
        upsert_entities(graph_store, scope, [ent("a", summary="v1", aliases=("old",))])
        assert [e.summary for e in get_entities(graph_store, scope, ["a"])] == ["v1"]
        assert [m.entity.summary for m in find_exact(graph_store, scope, ["a", "old"])] == ["v1"]
        upsert_entities(graph_store, scope, [ent("a", summary="v2", aliases=("new",))])
        assert [(e.summary, e.aliases) for e in get_entities(graph_store, scope, ["a"])] == [("v2", ("new",))]
        assert [m.entity.summary for m in find_exact(graph_store, scope, ["a"])] == ["v2"]
        assert find_exact(graph_store, scope, ["old"]) == []

    @requires(UPSERT, GET, FIND)
    def test_entity_upsert_replaces_aliases(self, graph_store: GraphStore, scope: Scope) -> None:
        """A replace drops aliases the new version lacks: they no longer find the entity."""
        upsert_entities(graph_store, scope, [ent("a", aliases=("old", "both"))])
        upsert_entities(graph_store, scope, [ent("a", aliases=("both", "new"))])
        assert find_exact(graph_store, scope, ["old"]) == []
        assert [(m.entity.id, m.field) for m in find_exact(graph_store, scope, ["new", "both"])] == [
            ("a", "alias")
        ]
        assert get_entities(graph_store, scope, ["a"])[0].aliases == ("both", "new")

    @requires(UPSERT, GET)
    def test_entity_upsert_accepts_entities_read_back(self, graph_store: GraphStore, scope: Scope) -> None:
        """Entities read from the store (carrying their scope) can be written back unchanged."""
        entities, _ = code()
        upsert_entities(graph_store, scope, entities)
        read = get_entities(graph_store, scope, ids(entities))
        assert upsert_entities(graph_store, scope, read) == t.UpsertResult(unchanged=len(entities))
        assert [entity_view(e) for e in get_entities(graph_store, scope, ids(entities))] == [
            entity_view(e) for e in read
        ]

    @requires(UPSERT, HASHES)
    def test_entity_upsert_empty_batch_changes_nothing(self, graph_store: GraphStore, scope: Scope) -> None:
        """An empty batch reports zero counts and leaves the scope as it was."""
        upsert_entities(graph_store, scope, [ent("a")])
        before = all_hashes(graph_store, scope)
        assert upsert_entities(graph_store, scope, []) == t.UpsertResult()
        assert all_hashes(graph_store, scope) == before


# ---- entity.get_by_ids ------------------------------------------------------------------------


class GetByIdsTests(_GraphSubject):
    """entity.get_by_ids: hydration in the order given; missing ids absent."""

    @requires(UPSERT, GET)
    def test_get_by_ids_follows_given_order(self, graph_store: GraphStore, scope: Scope) -> None:
        """Entities come back in the order of the ids given, not in id or insertion order."""
        entities, _ = memory()
        upsert_entities(graph_store, scope, entities)
        wanted = ["team-pay", "adr-12", "svc-checkout", "db-redis", "svc-pay"]
        assert ids(get_entities(graph_store, scope, wanted)) == wanted
        assert ids(get_entities(graph_store, scope, reversed(wanted))) == wanted[::-1]

    @requires(UPSERT, GET)
    def test_get_by_ids_omits_missing(self, graph_store: GraphStore, scope: Scope) -> None:
        """Ids that do not exist in the scope are absent from the answer, not an error."""
        entities, _ = memory()
        upsert_entities(graph_store, scope, entities)
        got = get_entities(graph_store, scope, ["missing-1", "svc-pay", "missing-2", "team-com"])
        assert ids(got) == ["svc-pay", "team-com"]
        assert get_entities(graph_store, scope, ["missing-1"]) == []

    @requires(UPSERT, GET)
    def test_get_by_ids_lists_duplicates_once(self, graph_store: GraphStore, scope: Scope) -> None:
        """An id given twice is returned once, at its first position."""
        upsert_entities(graph_store, scope, [ent("a"), ent("b"), ent("c")])
        assert ids(get_entities(graph_store, scope, ["c", "a", "c", "b", "a"])) == ["c", "a", "b"]

    @requires(UPSERT, GET)
    def test_get_by_ids_empty_ids_returns_nothing(self, graph_store: GraphStore, scope: Scope) -> None:
        """No ids, no entities (never the whole scope)."""
        upsert_entities(graph_store, scope, [ent("a")])
        assert get_entities(graph_store, scope, []) == []

    @requires(UPSERT, GET)
    def test_get_by_ids_ids_are_exact(self, graph_store: GraphStore, scope: Scope) -> None:
        """Ids compare exactly: another case, a prefix or surrounding space does not match."""
        upsert_entities(graph_store, scope, [ent("svc-Pay")])
        assert get_entities(graph_store, scope, ["svc-pay", "SVC-PAY", "svc-", " svc-Pay", "svc-Pay "]) == []
        assert ids(get_entities(graph_store, scope, ["svc-Pay"])) == ["svc-Pay"]


# ---- entity.find_exact ------------------------------------------------------------------------


def _matches(found: Iterable[t.ExactMatch]) -> list[tuple[str, str, str]]:
    return [(m.entity.id, m.field, m.value) for m in found]


class FindExactTests(_GraphSubject):
    """entity.find_exact: equality on id, qualified name, name and alias."""

    @requires(UPSERT, FIND)
    def test_find_exact_by_each_field(self, graph_store: GraphStore, scope: Scope) -> None:
        """Each identifier field finds its entity, reported under that field with the value given."""
        load(graph_store, scope, *code())
        load(graph_store, scope, *memory())
        assert _matches(find_exact(graph_store, scope, ["m-add"])) == [("m-add", "id", "m-add")]
        assert _matches(find_exact(graph_store, scope, ["shop.cart.Cart"])) == [
            ("cls-cart", "qualified_name", "shop.cart.Cart")
        ]
        assert _matches(find_exact(graph_store, scope, ["payment-gateway"])) == [
            ("svc-pay", "name", "payment-gateway")
        ]
        assert _matches(find_exact(graph_store, scope, ["pgw"])) == [("svc-pay", "alias", "pgw")]

    @requires(UPSERT, FIND)
    def test_find_exact_returns_whole_entity(self, graph_store: GraphStore, scope: Scope) -> None:
        """A match carries the entity with every field, in the caller's scope."""
        entities, _ = code()
        upsert_entities(graph_store, scope, entities)
        (match,) = find_exact(graph_store, scope, ["shop.cart.Cart.add_item"])
        assert entity_view(match.entity) == expected_entity(entities[3], scope)

    @requires(UPSERT, FIND)
    def test_find_exact_names_and_aliases_casefolded(self, graph_store: GraphStore, scope: Scope) -> None:
        """Names and aliases compare casefolded (ß equals SS), and the given spelling is reported."""
        upsert_entities(graph_store, scope, [ent("m1", "Straße"), ent("m2", "other", aliases=("STRASSE",))])
        assert _matches(find_exact(graph_store, scope, ["strasse"])) == [
            ("m1", "name", "strasse"),
            ("m2", "alias", "strasse"),
        ]
        assert _matches(find_exact(graph_store, scope, ["sTRAßE"])) == [
            ("m1", "name", "sTRAßE"),
            ("m2", "alias", "sTRAßE"),
        ]

    @requires(UPSERT, FIND)
    def test_find_exact_ids_and_qualified_names_case_sensitive(
        self, graph_store: GraphStore, scope: Scope
    ) -> None:
        """Ids and qualified names compare exactly: another case does not match them."""
        upsert_entities(graph_store, scope, [ent("Node-A", "zzz", qualified_name="pkg.Mod.run")])
        assert find_exact(graph_store, scope, ["node-a", "NODE-A", "PKG.MOD.RUN", "pkg.mod.run"]) == []
        assert _matches(find_exact(graph_store, scope, ["Node-A", "pkg.Mod.run"])) == [
            ("Node-A", "id", "Node-A")
        ]

    @requires(UPSERT, FIND)
    def test_find_exact_orders_by_field_rank_then_id(self, graph_store: GraphStore, scope: Scope) -> None:
        """Id matches come first, then qualified names, names, aliases; within a field, by entity id."""
        upsert_entities(
            graph_store,
            scope,
            [
                ent("b-alias", "zzz", aliases=("x",)),
                ent("a-alias", "zzz", aliases=("X",)),
                ent("b-name", "x"),
                ent("a-name", "X"),
                ent("z-qn", "zzz", qualified_name="x"),
                ent("x", "zzz"),
            ],
        )
        assert _matches(find_exact(graph_store, scope, ["x"])) == [
            ("x", "id", "x"),
            ("z-qn", "qualified_name", "x"),
            ("a-name", "name", "x"),
            ("b-name", "name", "x"),
            ("a-alias", "alias", "x"),
            ("b-alias", "alias", "x"),
        ]

    @requires(UPSERT, FIND)
    def test_find_exact_lists_entity_once_under_best_field(
        self, graph_store: GraphStore, scope: Scope
    ) -> None:
        """An entity matching several fields or values is listed once, under its best-ranked field."""
        upsert_entities(
            graph_store, scope, [ent("dup", "dup", aliases=("dup", "DUP2"), qualified_name="dup")]
        )
        assert _matches(find_exact(graph_store, scope, ["dup"])) == [("dup", "id", "dup")]
        assert [(e, f) for e, f, _ in _matches(find_exact(graph_store, scope, ["DUP", "dup2"]))] == [
            ("dup", "name")
        ]

    @requires(UPSERT, FIND)
    def test_find_exact_honours_fields(self, graph_store: GraphStore, scope: Scope) -> None:
        """Only the fields asked for are compared."""
        upsert_entities(graph_store, scope, [ent("x", "x", aliases=("x",), qualified_name="x")])
        for field in ("id", "qualified_name", "name", "alias"):
            assert _matches(find_exact(graph_store, scope, ["x"], fields=(field,))) == [("x", field, "x")]
        upsert_entities(graph_store, scope, [ent("y", "other", aliases=("al",))])
        assert find_exact(graph_store, scope, ["al"], fields=("id", "name", "qualified_name")) == []

    @requires(UPSERT, FIND)
    def test_find_exact_honours_limit(self, graph_store: GraphStore, scope: Scope) -> None:
        """A limit keeps the first matches of the full order."""
        upsert_entities(graph_store, scope, [ent(f"e{i:02d}", "same", aliases=("al",)) for i in range(12)])
        upsert_entities(graph_store, scope, [ent("same", "zzz")])
        full = _matches(find_exact(graph_store, scope, ["same", "al"], limit=100))
        assert len(full) == 13
        assert full[:2] == [("same", "id", "same"), ("e00", "name", "same")]
        for limit in (1, 2, 5, 12, 13):
            assert _matches(find_exact(graph_store, scope, ["same", "al"], limit=limit)) == full[:limit]

    @requires(UPSERT, FIND)
    def test_find_exact_is_not_a_pattern_match(self, graph_store: GraphStore, scope: Scope) -> None:
        """Prefixes, substrings, wildcards and regular expressions match nothing."""
        load(graph_store, scope, *memory())
        probes = [
            "checkout",
            "checkout-ap",
            "heckout-api",
            "checkout%",
            "checkout*",
            "check_ut-api",
            ".*",
            "%",
            "*",
        ]
        assert _matches(find_exact(graph_store, scope, probes)) == [("svc-checkout", "alias", "checkout")]

    @requires(UPSERT, FIND)
    def test_find_exact_no_match_returns_empty(self, graph_store: GraphStore, scope: Scope) -> None:
        """Values that match nothing give an empty answer, not an error."""
        load(graph_store, scope, *memory())
        assert find_exact(graph_store, scope, ["no-such-thing", "svc-nope"]) == []


# ---- entity.delete ----------------------------------------------------------------------------


class EntityDeleteTests(_GraphSubject):
    """entity.delete: removes entities and every fact that touches them."""

    @requires(UPSERT, DELETE, GET, FIND, HASHES)
    def test_entity_delete_removes_entity(self, graph_store: GraphStore, scope: Scope) -> None:
        """A deleted entity is gone from hydration, exact lookup (aliases included) and hash pages."""
        entities, facts = memory()
        load(graph_store, scope, entities, facts)
        result = delete_entities(graph_store, scope, ["svc-pay"])
        assert result.deleted == 1
        assert get_entities(graph_store, scope, ["svc-pay"]) == []
        assert find_exact(graph_store, scope, ["svc-pay", "payment-gateway", "pgw", "PAY-502-UPSTREAM"]) == []
        assert [i for i, _ in all_hashes(graph_store, scope)] == sorted(
            e.id for e in entities if e.id != "svc-pay"
        )

    @requires(UPSERT, FACTS, DELETE, FROM_ROOTS)
    def test_entity_delete_removes_touching_facts(self, graph_store: GraphStore, scope: Scope) -> None:
        """Every fact with the entity as subject or object is removed and counted once."""
        entities, facts = memory()
        load(graph_store, scope, entities, facts)
        touching = [f for f in facts if "svc-checkout" in (f.subject_id, f.object_id)]
        result = delete_entities(graph_store, scope, ["svc-checkout"])
        assert result == t.DeleteResult(deleted=1, facts_removed=len(touching))
        rest = [e.id for e in entities if e.id != "svc-checkout"]
        left = from_roots(graph_store, scope, rest, include_invalid=True).facts
        assert ids(left) == ids(expected_from_roots([f for f in facts if f not in touching], rest))

    @requires(UPSERT, FACTS, DELETE, FROM_ROOTS)
    def test_entity_delete_counts_fact_between_deleted_once(
        self, graph_store: GraphStore, scope: Scope
    ) -> None:
        """A fact between two deleted entities is counted once."""
        load(graph_store, scope, [ent("a"), ent("b"), ent("c")], [edge("a", "b"), edge("b", "c")])
        assert delete_entities(graph_store, scope, ["a", "b"]) == t.DeleteResult(deleted=2, facts_removed=2)
        assert from_roots(graph_store, scope, ["c"], include_invalid=True).facts == ()

    @requires(UPSERT, FACTS, DELETE, HASHES, FROM_ROOTS)
    def test_entity_delete_missing_ids_changes_nothing(self, graph_store: GraphStore, scope: Scope) -> None:
        """Deleting ids that do not exist reports zero and leaves every entity and fact in place."""
        entities, facts = memory()
        load(graph_store, scope, entities, facts)
        before = all_hashes(graph_store, scope)
        assert delete_entities(graph_store, scope, ["missing", "svc-"]) == t.DeleteResult()
        assert all_hashes(graph_store, scope) == before
        assert len(from_roots(graph_store, scope, ids(entities), include_invalid=True).facts) == len(facts)

    @requires(UPSERT, DELETE, GET)
    def test_entity_delete_then_recreate(self, graph_store: GraphStore, scope: Scope) -> None:
        """A deleted id can be created again, as a new entity with the new content."""
        upsert_entities(graph_store, scope, [ent("a", aliases=("old",))])
        delete_entities(graph_store, scope, ["a"])
        assert upsert_entities(graph_store, scope, [ent("a", summary="again")]) == t.UpsertResult(created=1)
        (got,) = get_entities(graph_store, scope, ["a"])
        assert (got.summary, got.aliases) == ("again", ())

    @requires(UPSERT, DELETE, GET, FIND, HASHES)
    def test_entity_delete_visible_to_reads_made_before(self, graph_store: GraphStore, scope: Scope) -> None:
        """Entities read before a delete are gone from the next read: no answer is served from before it."""
        entities, _ = memory()
        upsert_entities(graph_store, scope, entities)
        gone = ["svc-pay", "team-com"]
        assert ids(get_entities(graph_store, scope, gone)) == gone
        assert {m.entity.id for m in find_exact(graph_store, scope, ["pgw", "commerce"])} == set(gone)
        assert {i for i, _ in all_hashes(graph_store, scope)} >= set(gone)
        delete_entities(graph_store, scope, gone)
        assert get_entities(graph_store, scope, gone) == []
        assert ids(get_entities(graph_store, scope, ["svc-pay", "svc-inv", "team-com"])) == ["svc-inv"]
        assert find_exact(graph_store, scope, ["pgw", "commerce", "svc-pay", "team-com"]) == []
        assert not {i for i, _ in all_hashes(graph_store, scope)} & set(gone)


# ---- entity.hashes ----------------------------------------------------------------------------


class EntityHashesTests(_GraphSubject):
    """entity.hashes: (id, content hash) pages in id order."""

    @requires(UPSERT, HASHES)
    def test_entity_hashes_in_id_order_with_content_hash(self, graph_store: GraphStore, scope: Scope) -> None:
        """The page lists every entity once, in id order, with Entity.content_hash."""
        entities = datasets.memory_entities() + datasets.code_entities()
        upsert_entities(graph_store, scope, entities)
        assert hash_page(graph_store, scope) == sorted((e.id, e.content_hash) for e in entities)

    @requires(UPSERT, HASHES)
    def test_entity_hashes_pages_cover_all_once(self, graph_store: GraphStore, scope: Scope) -> None:
        """Paging with `after` = the last id seen visits every entity exactly once."""
        entities = datasets.memory_entities() + datasets.code_entities()
        upsert_entities(graph_store, scope, entities)
        for size in (1, 3, 5):
            seen: list[tuple[str, str]] = []
            while True:
                page = hash_page(graph_store, scope, after=seen[-1][0] if seen else "", limit=size)
                assert len(page) <= size
                seen += page
                if len(page) < size:
                    break
            assert seen == sorted((e.id, e.content_hash) for e in entities), size

    @requires(UPSERT, HASHES)
    def test_entity_hashes_after_is_exclusive(self, graph_store: GraphStore, scope: Scope) -> None:
        """`after` starts strictly after the given id, which need not exist."""
        upsert_entities(graph_store, scope, [ent(i) for i in ("a", "b", "c", "d")])
        assert [i for i, _ in hash_page(graph_store, scope, after="b")] == ["c", "d"]
        assert [i for i, _ in hash_page(graph_store, scope, after="bb")] == ["c", "d"]
        assert hash_page(graph_store, scope, after="d") == []

    @requires(UPSERT, HASHES)
    def test_entity_hashes_follow_content_changes(self, graph_store: GraphStore, scope: Scope) -> None:
        """Changing what the indexes derive from (summary, aliases) changes the hash the store reports."""
        upsert_entities(graph_store, scope, [ent("a", summary="one"), ent("b", aliases=("x",))])
        before = dict(hash_page(graph_store, scope))
        new_a, new_b = ent("a", summary="two"), ent("b", aliases=("y",))
        upsert_entities(graph_store, scope, [new_a, new_b])
        after = dict(hash_page(graph_store, scope))
        assert after == {"a": new_a.content_hash, "b": new_b.content_hash}
        assert after["a"] != before["a"] and after["b"] != before["b"]


# ---- fact.upsert ------------------------------------------------------------------------------


class FactUpsertTests(_GraphSubject):
    """fact.upsert: insert or replace facts whose endpoints exist in the scope."""

    @requires(UPSERT, FACTS, FROM_ROOTS)
    def test_fact_upsert_visible_to_next_run(self, graph_store: GraphStore, scope: Scope) -> None:
        """Upserted facts are counted as created and returned with every field, in the caller's scope."""
        entities, facts = memory()
        upsert_entities(graph_store, scope, entities)
        assert upsert_facts(graph_store, scope, facts) == t.UpsertResult(created=len(facts))
        got = from_roots(graph_store, scope, ids(entities), include_invalid=True)
        expected = expected_from_roots(facts, ids(entities))
        assert [fact_view(f) for f in got.facts] == [expected_fact(f, scope) for f in expected]

    @requires(UPSERT, FACTS, FROM_ROOTS)
    def test_fact_upsert_keeps_given_id(self, graph_store: GraphStore, scope: Scope) -> None:
        """A fact keeps the id it was given."""
        load(graph_store, scope, [ent("a"), ent("b")], [edge("a", "b", id="fact-1")])
        assert ids(from_roots(graph_store, scope, ["a"]).facts) == ["fact-1"]

    @requires(UPSERT, FACTS, FROM_ROOTS, STATS)
    def test_fact_upsert_replace_by_id(self, graph_store: GraphStore, scope: Scope) -> None:
        """Upserting an existing fact id replaces the fact (reported updated), never adds a second row."""
        load(graph_store, scope, [ent("a"), ent("b"), ent("c")], [edge("a", "b", id="f1")])
        new = edge("a", "c", "depends_on", id="f1", confidence=0.5, source="agent", valid_to=FAR_FUTURE)
        assert upsert_facts(graph_store, scope, [new]) == t.UpsertResult(updated=1)
        got = from_roots(graph_store, scope, ["a", "b", "c"], include_invalid=True).facts
        assert [fact_view(f) for f in got] == [expected_fact(new, scope)]
        assert stats(graph_store, scope).facts == 1

    @requires(UPSERT, FACTS)
    def test_fact_upsert_identical_reports_unchanged(self, graph_store: GraphStore, scope: Scope) -> None:
        """Re-upserting facts equal in every field but timestamps reports them unchanged."""
        entities, facts = memory()
        load(graph_store, scope, entities, facts)
        again = [f.model_copy(update={"updated_at": datasets.T_NOW}) for f in facts]
        assert upsert_facts(graph_store, scope, again) == t.UpsertResult(unchanged=len(facts))

    @requires(UPSERT, FACTS, FROM_ROOTS)
    def test_fact_upsert_value_only_fact(self, graph_store: GraphStore, scope: Scope) -> None:
        """A fact with a literal value and no object needs only its subject and is returned as given."""
        note = Fact(
            subject_id="a", predicate="note", value="remember the milk", source="cli", confidence=0.25
        )
        load(graph_store, scope, [ent("a")], [note])
        got = from_roots(graph_store, scope, ["a"], direction="out").facts
        assert [fact_view(f) for f in got] == [expected_fact(note, scope)]

    @requires(UPSERT, FACTS, FROM_ROOTS)
    def test_fact_upsert_sets_timestamps(self, graph_store: GraphStore, scope: Scope) -> None:
        """A stored fact has created_at and updated_at; a replace keeps created_at."""
        load(graph_store, scope, [ent("a"), ent("b")], [edge("a", "b", id="f1", created_at=datasets.T0)])
        upsert_facts(graph_store, scope, [edge("a", "b", id="f1", confidence=0.5)])
        (got,) = from_roots(graph_store, scope, ["a"]).facts
        assert got.confidence == 0.5
        assert utc(got.created_at) == datasets.T0
        assert got.updated_at is not None

    @requires(UPSERT, FACTS, FROM_ROOTS)
    def test_fact_upsert_empty_batch_changes_nothing(self, graph_store: GraphStore, scope: Scope) -> None:
        """An empty batch reports zero counts and leaves the facts as they were."""
        load(graph_store, scope, [ent("a"), ent("b")], [edge("a", "b")])
        assert upsert_facts(graph_store, scope, []) == t.UpsertResult()
        assert len(from_roots(graph_store, scope, ["a"]).facts) == 1


# ---- fact.invalidate --------------------------------------------------------------------------


class FactInvalidateTests(_GraphSubject):
    """fact.invalidate: sets valid_to; the rows are kept."""

    @requires(UPSERT, FACTS, INVALIDATE, FROM_ROOTS)
    def test_fact_invalidate_sets_valid_to_and_keeps_row(self, graph_store: GraphStore, scope: Scope) -> None:
        """An invalidated fact keeps its row, with valid_to set and every other field unchanged."""
        end = datetime(2025, 1, 1, tzinfo=UTC)
        fact = edge("a", "b", id="f1", valid_from=datasets.T0, source="s", confidence=0.75)
        load(graph_store, scope, [ent("a"), ent("b")], [fact])
        assert invalidate(graph_store, scope, ["f1"], end) == 1
        (got,) = from_roots(graph_store, scope, ["a"], include_invalid=True).facts
        want = fact.model_copy(update={"valid_to": end})
        assert fact_view(got) == expected_fact(want, scope)

    @requires(UPSERT, FACTS, INVALIDATE, FROM_ROOTS)
    def test_fact_invalidate_ends_validity(self, graph_store: GraphStore, scope: Scope) -> None:
        """After invalidation the fact is valid before valid_to and not from valid_to on."""
        end = FAR_PAST + timedelta(days=365)
        load(graph_store, scope, [ent("a"), ent("b")], [edge("a", "b", id="f1")])
        invalidate(graph_store, scope, ["f1"], end)
        assert ids(from_roots(graph_store, scope, ["a"], as_of=end - timedelta(seconds=1)).facts) == ["f1"]
        assert from_roots(graph_store, scope, ["a"], as_of=end).facts == ()
        assert from_roots(graph_store, scope, ["a"]).facts == ()  # now is after 2002

    @requires(UPSERT, FACTS, INVALIDATE, FROM_ROOTS, NEIGHBOURHOOD)
    def test_fact_invalidate_visible_to_reads_made_before(
        self, graph_store: GraphStore, scope: Scope
    ) -> None:
        """A fact read before its invalidation is no longer valid in the next read."""
        load(graph_store, scope, [ent("a"), ent("b")], [edge("a", "b", id="f1")])
        assert ids(from_roots(graph_store, scope, ["a"]).facts) == ["f1"]
        assert node_ids(neighbourhood(graph_store, scope, ["a"])) == [(0, "a"), (1, "b")]
        invalidate(graph_store, scope, ["f1"], FAR_PAST)
        assert from_roots(graph_store, scope, ["a"]).facts == ()
        assert node_ids(neighbourhood(graph_store, scope, ["a"])) == [(0, "a")]
        (kept,) = from_roots(graph_store, scope, ["a"], include_invalid=True).facts
        assert utc(kept.valid_to) == FAR_PAST

    @requires(UPSERT, FACTS, INVALIDATE, FROM_ROOTS)
    def test_fact_invalidate_counts_only_known_ids(self, graph_store: GraphStore, scope: Scope) -> None:
        """The count is the number of facts invalidated; unknown ids are ignored."""
        load(graph_store, scope, [ent("a"), ent("b")], [edge("a", "b", id="f1"), edge("b", "a", id="f2")])
        assert invalidate(graph_store, scope, ["f1", "missing"], FAR_PAST) == 1
        assert invalidate(graph_store, scope, ["missing"], FAR_PAST) == 0
        assert ids(from_roots(graph_store, scope, ["a"]).facts) == ["f2"]

    @requires(UPSERT, FACTS, INVALIDATE, STATS)
    def test_fact_invalidate_updates_stats(self, graph_store: GraphStore, scope: Scope) -> None:
        """Invalidation lowers valid_facts and keeps the fact count."""
        load(graph_store, scope, [ent("a"), ent("b")], [edge("a", "b", id="f1"), edge("b", "a", id="f2")])
        invalidate(graph_store, scope, ["f1"], FAR_PAST)
        got = stats(graph_store, scope)
        assert (got.facts, got.valid_facts) == (2, 1)


# ---- fact.from_roots --------------------------------------------------------------------------


class FactsFromRootsTests(_GraphSubject):
    """fact.from_roots: facts touching the roots, valid at as_of unless include_invalid."""

    @pytest.mark.parametrize("direction", ["out", "in", "both"])
    @requires(UPSERT, FACTS, FROM_ROOTS)
    def test_facts_from_roots_follows_direction(
        self, graph_store: GraphStore, scope: Scope, direction: str
    ) -> None:
        """out: facts whose subject is a root; in: whose object is a root; both: either, each once."""
        entities, facts = memory()
        load(graph_store, scope, entities, facts)
        for roots in (["svc-checkout"], ["db-redis"], ["svc-checkout", "svc-pay"], ["adr-12", "inc-1"]):
            got = from_roots(graph_store, scope, roots, direction=direction, include_invalid=True)
            assert ids(got.facts) == ids(expected_from_roots(facts, roots, direction=direction)), roots
            assert got.truncated is False

    @requires(UPSERT, FACTS, FROM_ROOTS)
    def test_facts_from_roots_valid_at_as_of(self, graph_store: GraphStore, scope: Scope) -> None:
        """Only facts valid at as_of come back: ownership moves and the Redis dependency ends on T_CHANGE."""
        entities, facts = memory()
        load(graph_store, scope, entities, facts)
        for as_of in (datasets.T0, AFTER_T0, datasets.T_CHANGE, datasets.T_NOW):
            got = from_roots(graph_store, scope, ["svc-checkout"], as_of=as_of)
            assert ids(got.facts) == ids(expected_from_roots(facts, ["svc-checkout"], as_of=as_of)), as_of
        owners = from_roots(graph_store, scope, ["svc-checkout"], predicates=("owned_by",), as_of=AFTER_T0)
        assert [f.object_id for f in owners.facts] == ["team-pay"]
        owners = from_roots(
            graph_store, scope, ["svc-checkout"], predicates=("owned_by",), as_of=datasets.T_NOW
        )
        assert [f.object_id for f in owners.facts] == ["team-com"]

    @requires(UPSERT, FACTS, FROM_ROOTS)
    def test_facts_from_roots_validity_half_open(self, graph_store: GraphStore, scope: Scope) -> None:
        """A fact is valid from valid_from inclusive to valid_to exclusive."""
        start, end = datetime(2024, 1, 1, tzinfo=UTC), datetime(2024, 2, 1, tzinfo=UTC)
        load(
            graph_store,
            scope,
            [ent("a"), ent("b")],
            [edge("a", "b", id="f1", valid_from=start, valid_to=end)],
        )
        tick = timedelta(seconds=1)
        for as_of, valid in ((start - tick, False), (start, True), (end - tick, True), (end, False)):
            assert ids(from_roots(graph_store, scope, ["a"], as_of=as_of).facts) == (
                ["f1"] if valid else []
            ), as_of

    @requires(UPSERT, FACTS, FROM_ROOTS)
    def test_facts_from_roots_default_as_of_is_now(self, graph_store: GraphStore, scope: Scope) -> None:
        """Without as_of, facts ended in the past and facts starting in the future are left out."""
        load(
            graph_store,
            scope,
            [ent("a"), ent("b")],
            [
                edge("a", "b", "owns", id="ended", valid_to=FAR_PAST),
                edge("a", "b", "uses", id="future", valid_from=FAR_FUTURE),
                edge("a", "b", "leads", id="open", valid_from=FAR_PAST),
            ],
        )
        assert ids(from_roots(graph_store, scope, ["a"]).facts) == ["open"]

    @requires(UPSERT, FACTS, FROM_ROOTS)
    def test_facts_from_roots_include_invalid(self, graph_store: GraphStore, scope: Scope) -> None:
        """include_invalid returns every fact touching the roots, ended and future ones too."""
        load(
            graph_store,
            scope,
            [ent("a"), ent("b")],
            [
                edge("a", "b", "owns", id="ended", valid_to=FAR_PAST),
                edge("a", "b", "uses", id="future", valid_from=FAR_FUTURE),
            ],
        )
        got = from_roots(graph_store, scope, ["a"], include_invalid=True)
        assert ids(got.facts) == ["ended", "future"]
        got = from_roots(graph_store, scope, ["a"], include_invalid=True, as_of=datasets.T0)
        assert ids(got.facts) == ["ended", "future"]

    @requires(UPSERT, FACTS, FROM_ROOTS)
    def test_facts_from_roots_filters_predicates(self, graph_store: GraphStore, scope: Scope) -> None:
        """A predicate list keeps only facts with those predicates."""
        entities, facts = memory()
        load(graph_store, scope, entities, facts)
        for predicates in (("depends_on",), ("owned_by", "affected"), ("leads",)):
            got = from_roots(
                graph_store, scope, ["svc-checkout"], predicates=predicates, include_invalid=True
            )
            want = expected_from_roots(facts, ["svc-checkout"], predicates=predicates)
            assert ids(got.facts) == ids(want), predicates

    @requires(UPSERT, FACTS, FROM_ROOTS)
    def test_facts_from_roots_ordered_by_subject_predicate_object_id(
        self, graph_store: GraphStore, scope: Scope
    ) -> None:
        """Facts are ordered by (subject_id, predicate, object_id, id), whatever the insertion order."""
        entities = [ent(i) for i in ("r", "a", "b", "c")]
        facts = [
            edge("r", "c", "uses", id="f9"),
            edge("b", "r", "calls", id="f1"),
            edge("r", "a", "uses", id="f2"),
            edge("r", "a", "calls", id="f8"),
            edge("a", "r", "uses", id="f3"),
            edge("r", "a", "uses", id="f0"),
        ]
        load(graph_store, scope, entities, facts)
        got = from_roots(graph_store, scope, ["r"])
        assert ids(got.facts) == ["f3", "f1", "f8", "f0", "f2", "f9"]

    @requires(UPSERT, FACTS, FROM_ROOTS)
    def test_facts_from_roots_unknown_roots_return_nothing(
        self, graph_store: GraphStore, scope: Scope
    ) -> None:
        """Roots that do not exist in the scope match nothing, not an error."""
        load(graph_store, scope, *memory())
        got = from_roots(graph_store, scope, ["missing", "svc-"], include_invalid=True)
        assert (got.facts, got.truncated) == ((), False)


# ---- graph.neighbourhood ----------------------------------------------------------------------


class NeighbourhoodTests(_GraphSubject):
    """graph.neighbourhood: bounded BFS with an edge allowlist, a direction and limits."""

    @requires(UPSERT, FACTS, NEIGHBOURHOOD)
    def test_neighbourhood_depth_one(self, graph_store: GraphStore, scope: Scope) -> None:
        """Depth 1 returns the root at depth 0, its neighbours at depth 1 and the edges to them."""
        load(graph_store, scope, *code())
        got = neighbourhood(graph_store, scope, ["m-add"], depth=1)
        assert node_ids(got) == [(0, "m-add"), (1, "cls-cart"), (1, "f-price"), (1, "t-add")]
        assert edge_triples(got.edges) == [
            ("cls-cart", "contains", "m-add"),
            ("m-add", "calls", "f-price"),
            ("m-add", "tested_by", "t-add"),
        ]
        assert (got.truncated, got.omitted) == (False, 0)

    @requires(UPSERT, FACTS, NEIGHBOURHOOD)
    def test_neighbourhood_depth_two(self, graph_store: GraphStore, scope: Scope) -> None:
        """Depth 2 adds the neighbours of the depth-1 nodes, each node once at its smallest depth."""
        load(graph_store, scope, *code())
        got = neighbourhood(graph_store, scope, ["m-add"], depth=2)
        assert node_ids(got) == [(0, "m-add"), (1, "cls-cart"), (1, "f-price"), (1, "t-add"), (2, "mod-cart")]
        assert edge_triples(got.edges) == [
            ("cls-cart", "contains", "m-add"),
            ("m-add", "calls", "f-price"),
            ("m-add", "tested_by", "t-add"),
            ("mod-cart", "contains", "cls-cart"),
            ("mod-cart", "imports", "f-price"),
        ]

    @pytest.mark.parametrize(
        ("root", "direction", "nodes", "edges"),
        [
            (
                "repo",
                "out",
                [(0, "repo"), (1, "mod-cart"), (2, "cls-cart"), (2, "f-price")],
                [
                    ("mod-cart", "contains", "cls-cart"),
                    ("mod-cart", "imports", "f-price"),
                    ("repo", "contains", "mod-cart"),
                ],
            ),
            (
                "f-price",
                "in",
                [(0, "f-price"), (1, "m-add"), (1, "mod-cart"), (2, "cls-cart"), (2, "repo")],
                [
                    ("cls-cart", "contains", "m-add"),
                    ("m-add", "calls", "f-price"),
                    ("mod-cart", "imports", "f-price"),
                    ("repo", "contains", "mod-cart"),
                ],
            ),
            ("f-price", "out", [(0, "f-price")], []),
        ],
    )
    @requires(UPSERT, FACTS, NEIGHBOURHOOD)
    def test_neighbourhood_follows_direction(
        self,
        graph_store: GraphStore,
        scope: Scope,
        root: str,
        direction: str,
        nodes: list[tuple[int, str]],
        edges: list[tuple[str, str, str]],
    ) -> None:
        """out follows edges from subject to object at every hop, in from object to subject."""
        load(graph_store, scope, *code())
        got = neighbourhood(graph_store, scope, [root], direction=direction, depth=2)
        assert (node_ids(got), edge_triples(got.edges)) == (nodes, edges)

    @requires(UPSERT, FACTS, NEIGHBOURHOOD)
    def test_neighbourhood_edge_allowlist(self, graph_store: GraphStore, scope: Scope) -> None:
        """Only edges of the allowed types are followed, at every hop."""
        load(graph_store, scope, *code())
        got = neighbourhood(graph_store, scope, ["m-add"], edge_types=("calls",), depth=2)
        assert node_ids(got) == [(0, "m-add"), (1, "f-price")]
        got = neighbourhood(graph_store, scope, ["repo"], edge_types=("contains",), depth=2, direction="out")
        assert node_ids(got) == [(0, "repo"), (1, "mod-cart"), (2, "cls-cart")]
        assert {f.predicate for f in got.edges} == {"contains"}

    @requires(UPSERT, FACTS, NEIGHBOURHOOD)
    def test_neighbourhood_valid_at_as_of(self, graph_store: GraphStore, scope: Scope) -> None:
        """Only facts valid at as_of are followed."""
        load(graph_store, scope, *memory())
        before = neighbourhood(graph_store, scope, ["svc-checkout"], direction="out", as_of=AFTER_T0)
        assert node_ids(before) == [
            (0, "svc-checkout"),
            (1, "db-redis"),
            (1, "svc-inv"),
            (1, "svc-pay"),
            (1, "team-pay"),
        ]
        after = neighbourhood(graph_store, scope, ["svc-checkout"], direction="out", as_of=datasets.T_NOW)
        assert node_ids(after) == [(0, "svc-checkout"), (1, "svc-inv"), (1, "svc-pay"), (1, "team-com")]

    @requires(UPSERT, FACTS, NEIGHBOURHOOD)
    def test_neighbourhood_default_as_of_is_now(self, graph_store: GraphStore, scope: Scope) -> None:
        """Without as_of, ended and future facts are not followed."""
        load(
            graph_store,
            scope,
            [ent("r"), ent("old"), ent("new"), ent("open")],
            [edge("r", "old", valid_to=FAR_PAST), edge("r", "new", valid_from=FAR_FUTURE), edge("r", "open")],
        )
        assert node_ids(neighbourhood(graph_store, scope, ["r"])) == [(0, "r"), (1, "open")]

    @requires(UPSERT, FACTS, NEIGHBOURHOOD)
    def test_neighbourhood_returns_followed_edges_only(self, graph_store: GraphStore, scope: Scope) -> None:
        """An edge between two nodes of the last depth is not followed, so it is not returned."""
        load(graph_store, scope, *memory())
        got = neighbourhood(graph_store, scope, ["svc-checkout"], direction="out", depth=1, as_of=AFTER_T0)
        assert all(f.subject_id == "svc-checkout" for f in got.edges)
        assert len(got.edges) == 4  # svc-pay -owned_by-> team-pay joins two depth-1 nodes and is left out

    @requires(UPSERT, FACTS, NEIGHBOURHOOD)
    def test_neighbourhood_several_roots(self, graph_store: GraphStore, scope: Scope) -> None:
        """Every root is at depth 0, even when another root reaches it; an edge between roots is returned."""
        load(graph_store, scope, *code())
        got = neighbourhood(graph_store, scope, ["m-add", "f-price"], depth=1)
        assert node_ids(got) == [(0, "f-price"), (0, "m-add"), (1, "cls-cart"), (1, "mod-cart"), (1, "t-add")]
        assert edge_triples(got.edges) == [
            ("cls-cart", "contains", "m-add"),
            ("m-add", "calls", "f-price"),
            ("m-add", "tested_by", "t-add"),
            ("mod-cart", "imports", "f-price"),
        ]

    @requires(UPSERT, FACTS, NEIGHBOURHOOD)
    def test_neighbourhood_hydrates_nodes_and_edges(self, graph_store: GraphStore, scope: Scope) -> None:
        """Nodes carry whole entities and edges whole facts, in the caller's scope."""
        entities, facts = code()
        load(graph_store, scope, entities, facts)
        got = neighbourhood(graph_store, scope, ["mod-cart"], depth=1)
        by_id = {e.id: e for e in entities}
        assert [entity_view(n.entity) for n in got.nodes] == [
            expected_entity(by_id[i], scope) for _, i in node_ids(got)
        ]
        facts_by_id = {f.id: f for f in facts}
        assert [fact_view(f) for f in got.edges] == [
            expected_fact(facts_by_id[f.id], scope) for f in got.edges
        ]

    @requires(UPSERT, FACTS, NEIGHBOURHOOD)
    def test_neighbourhood_skips_value_only_facts(self, graph_store: GraphStore, scope: Scope) -> None:
        """A fact without an object entity is not an edge."""
        load(graph_store, scope, *memory())
        got = neighbourhood(graph_store, scope, ["adr-12"], direction="out", as_of=datasets.T_NOW)
        assert node_ids(got) == [(0, "adr-12"), (1, "db-redis")]
        assert edge_triples(got.edges) == [("adr-12", "relates_to", "db-redis")]

    @requires(UPSERT, FACTS, NEIGHBOURHOOD)
    def test_neighbourhood_unknown_roots(self, graph_store: GraphStore, scope: Scope) -> None:
        """Roots missing from the scope are ignored; with none left the answer is empty."""
        load(graph_store, scope, *code())
        assert neighbourhood(graph_store, scope, ["missing"]) == t.Subgraph()
        assert node_ids(neighbourhood(graph_store, scope, ["missing", "t-add"])) == [
            (0, "t-add"),
            (1, "m-add"),
        ]


# ---- graph.shortest_path ----------------------------------------------------------------------


def _path(result: t.PathResult) -> list[str]:
    return ids(result.nodes)


class ShortestPathTests(_GraphSubject):
    """graph.shortest_path: bounded BFS, smallest id sequence on ties, empty when none."""

    @requires(UPSERT, FACTS, PATH)
    def test_shortest_path_nodes_and_edges(self, graph_store: GraphStore, scope: Scope) -> None:
        """The path lists nodes from source to target and, between each pair, the edge joining them."""
        entities, facts = code()
        load(graph_store, scope, entities, facts)
        got = shortest_path(graph_store, scope, "repo", "m-add", direction="out")
        assert _path(got) == ["repo", "mod-cart", "cls-cart", "m-add"]
        assert edge_triples(got.edges) == [
            ("repo", "contains", "mod-cart"),
            ("mod-cart", "contains", "cls-cart"),
            ("cls-cart", "contains", "m-add"),
        ]
        by_id = {e.id: e for e in entities}
        assert [entity_view(e) for e in got.nodes] == [expected_entity(by_id[i], scope) for i in _path(got)]
        assert all(in_scope(f, scope) for f in got.edges)

    @requires(UPSERT, FACTS, PATH)
    def test_shortest_path_follows_direction(self, graph_store: GraphStore, scope: Scope) -> None:
        """out walks subject to object, in walks object to subject, both either way."""
        load(graph_store, scope, *code())
        assert _path(shortest_path(graph_store, scope, "repo", "f-price", direction="out")) == [
            "repo",
            "mod-cart",
            "f-price",
        ]
        assert shortest_path(graph_store, scope, "f-price", "repo", direction="out") == t.PathResult()
        got = shortest_path(graph_store, scope, "f-price", "repo", direction="in")
        assert _path(got) == ["f-price", "mod-cart", "repo"]
        assert edge_triples(got.edges) == [
            ("mod-cart", "imports", "f-price"),
            ("repo", "contains", "mod-cart"),
        ]
        assert _path(shortest_path(graph_store, scope, "t-add", "f-price", direction="both")) == [
            "t-add",
            "m-add",
            "f-price",
        ]

    @requires(UPSERT, FACTS, PATH)
    def test_shortest_path_prefers_shortest(self, graph_store: GraphStore, scope: Scope) -> None:
        """A shorter path wins over one through smaller ids."""
        load(
            graph_store,
            scope,
            [ent(i) for i in ("a", "b", "c", "z", "t")],
            [edge("a", "b"), edge("b", "c"), edge("c", "t"), edge("a", "z"), edge("z", "t")],
        )
        assert _path(shortest_path(graph_store, scope, "a", "t", direction="out")) == ["a", "z", "t"]

    @requires(UPSERT, FACTS, PATH)
    def test_shortest_path_ties_take_smallest_ids(self, graph_store: GraphStore, scope: Scope) -> None:
        """Among shortest paths, the smallest sequence of node ids wins, compared from the source."""
        load(
            graph_store,
            scope,
            [ent(i) for i in ("s", "b", "a", "c", "z", "t")],
            [edge("s", "b"), edge("b", "c"), edge("c", "t"), edge("s", "a"), edge("a", "z"), edge("z", "t")],
        )
        got = shortest_path(graph_store, scope, "s", "t", direction="out")
        assert _path(got) == ["s", "a", "z", "t"]  # not s, b, c, t: the first differing id decides
        assert edge_triples(got.edges) == [
            ("s", "relates_to", "a"),
            ("a", "relates_to", "z"),
            ("z", "relates_to", "t"),
        ]
        assert _path(shortest_path(graph_store, scope, "t", "s", direction="in")) == ["t", "c", "b", "s"]

    @requires(UPSERT, FACTS, PATH)
    def test_shortest_path_honours_max_depth(self, graph_store: GraphStore, scope: Scope) -> None:
        """A path longer than max_depth is not found: the answer is empty."""
        load(graph_store, scope, *chain(4))
        assert _path(shortest_path(graph_store, scope, "n0", "n3", max_depth=3)) == ["n0", "n1", "n2", "n3"]
        assert shortest_path(graph_store, scope, "n0", "n3", max_depth=2) == t.PathResult()

    @requires(UPSERT, FACTS, PATH)
    def test_shortest_path_edge_allowlist(self, graph_store: GraphStore, scope: Scope) -> None:
        """Only edges of the allowed types are walked."""
        load(graph_store, scope, *code())
        assert _path(shortest_path(graph_store, scope, "m-add", "f-price", edge_types=("calls",))) == [
            "m-add",
            "f-price",
        ]
        got = shortest_path(graph_store, scope, "m-add", "f-price", edge_types=("contains", "imports"))
        assert _path(got) == ["m-add", "cls-cart", "mod-cart", "f-price"]
        assert (
            shortest_path(graph_store, scope, "m-add", "f-price", edge_types=("tested_by",)) == t.PathResult()
        )

    @requires(UPSERT, FACTS, PATH)
    def test_shortest_path_valid_at_as_of(self, graph_store: GraphStore, scope: Scope) -> None:
        """Only facts valid at as_of are walked."""
        load(graph_store, scope, *memory())
        before = shortest_path(graph_store, scope, "svc-inv", "team-pay", as_of=AFTER_T0)
        assert _path(before) == ["svc-inv", "svc-checkout", "team-pay"]
        after = shortest_path(graph_store, scope, "svc-inv", "team-pay", as_of=datasets.T_NOW)
        assert _path(after) == ["svc-inv", "svc-checkout", "svc-pay", "team-pay"]

    @requires(UPSERT, FACTS, PATH)
    def test_shortest_path_same_source_and_target(self, graph_store: GraphStore, scope: Scope) -> None:
        """From a node to itself the path is that node and no edge."""
        entities, facts = code()
        load(graph_store, scope, entities, facts)
        got = shortest_path(graph_store, scope, "m-add", "m-add")
        assert (_path(got), got.edges) == (["m-add"], ())

    @requires(UPSERT, FACTS, PATH)
    def test_shortest_path_missing_endpoint_is_empty(self, graph_store: GraphStore, scope: Scope) -> None:
        """A source or target missing from the scope gives an empty path, not an error."""
        load(graph_store, scope, *code())
        for source, target in (("missing", "m-add"), ("m-add", "missing"), ("missing", "missing")):
            assert shortest_path(graph_store, scope, source, target) == t.PathResult()


# ---- scope.stats ------------------------------------------------------------------------------


class ScopeStatsTests(_GraphSubject):
    """scope.stats: counts of what the scope holds."""

    @requires(UPSERT, FACTS, STATS)
    def test_scope_stats_counts(self, graph_store: GraphStore, scope: Scope) -> None:
        """Entities, facts and entities by type are counted exactly."""
        entities = datasets.memory_entities() + datasets.code_entities()
        facts = datasets.memory_facts() + datasets.code_facts()
        load(graph_store, scope, entities, facts)
        got = stats(graph_store, scope)
        by_type: dict[str, int] = {}
        for e in entities:
            by_type[e.type] = by_type.get(e.type, 0) + 1
        assert (got.entities, got.facts, got.by_type) == (len(entities), len(facts), by_type)

    @requires(UPSERT, FACTS, STATS)
    def test_scope_stats_valid_facts_now(self, graph_store: GraphStore, scope: Scope) -> None:
        """valid_facts counts the facts valid at the store's current time."""
        load(
            graph_store,
            scope,
            [ent("a"), ent("b")],
            [
                edge("a", "b", "owns", valid_to=FAR_PAST),
                edge("a", "b", "uses", valid_from=FAR_FUTURE),
                edge("a", "b", "leads", valid_from=FAR_PAST, valid_to=FAR_FUTURE),
                edge("b", "a", "leads"),
            ],
        )
        assert (stats(graph_store, scope).facts, stats(graph_store, scope).valid_facts) == (4, 2)

    @requires(UPSERT, FACTS, DELETE, STATS)
    def test_scope_stats_follow_writes(self, graph_store: GraphStore, scope: Scope) -> None:
        """Counts follow deletes and replaces at once."""
        entities, facts = memory()
        load(graph_store, scope, entities, facts)
        delete_entities(graph_store, scope, ["db-redis"])
        upsert_entities(graph_store, scope, [modified(entities[0], type="team")])
        got = stats(graph_store, scope)
        assert (got.entities, got.facts) == (7, 7)
        assert got.by_type == {"service": 2, "team": 3, "incident": 1, "decision": 1}

    @requires(STATS)
    def test_scope_stats_empty_scope(self, graph_store: GraphStore, scope: Scope) -> None:
        """An empty scope counts zero everywhere."""
        assert stats(graph_store, scope) == t.ScopeStats()


# ---- scope.clear ------------------------------------------------------------------------------


class ScopeClearTests(_GraphSubject):
    """scope.clear: delete everything in the scope (admin and tests)."""

    @requires(UPSERT, FACTS, CLEAR, STATS, HASHES, GET)
    def test_scope_clear_removes_everything(self, graph_store: GraphStore, scope: Scope) -> None:
        """After a clear the scope is empty for every read."""
        entities, facts = memory()
        load(graph_store, scope, entities, facts)
        clear(graph_store, scope)
        assert stats(graph_store, scope) == t.ScopeStats()
        assert all_hashes(graph_store, scope) == []
        assert get_entities(graph_store, scope, ids(entities)) == []

    @requires(UPSERT, FACTS, CLEAR, GET, FIND, HASHES, FROM_ROOTS, NEIGHBOURHOOD, STATS)
    def test_scope_clear_visible_to_reads_made_before(self, graph_store: GraphStore, scope: Scope) -> None:
        """Everything read before a clear is gone from the next read of every template."""
        entities, facts = memory()
        load(graph_store, scope, entities, facts)

        def reads() -> list[Any]:
            return [
                get_entities(graph_store, scope, ids(entities)),
                find_exact(graph_store, scope, [e.name for e in entities], limit=100),
                all_hashes(graph_store, scope),
                from_roots(graph_store, scope, ids(entities), include_invalid=True).facts,
                neighbourhood(graph_store, scope, ids(entities), as_of=datasets.T_NOW).nodes,
                stats(graph_store, scope).entities,
            ]

        assert all(reads())
        clear(graph_store, scope)
        assert not any(reads())

    @requires(UPSERT, FACTS, CLEAR)
    def test_scope_clear_counts_entities_and_facts(self, graph_store: GraphStore, scope: Scope) -> None:
        """The count is the entities plus the facts removed; an empty scope counts zero."""
        entities, facts = memory()
        load(graph_store, scope, entities, facts)
        assert clear(graph_store, scope) == len(entities) + len(facts)
        assert clear(graph_store, scope) == 0

    @requires(UPSERT, FACTS, CLEAR, GET)
    def test_scope_clear_then_reload(self, graph_store: GraphStore, scope: Scope) -> None:
        """A cleared scope takes the same ids again as new entities."""
        entities, facts = memory()
        load(graph_store, scope, entities, facts)
        clear(graph_store, scope)
        assert upsert_entities(graph_store, scope, entities) == t.UpsertResult(created=len(entities))
        assert upsert_facts(graph_store, scope, facts) == t.UpsertResult(created=len(facts))
        assert ids(get_entities(graph_store, scope, ids(entities))) == ids(entities)


# ---- isolation --------------------------------------------------------------------------------

_OWN = "own-marker-4b1d"


@dataclasses.dataclass(frozen=True)
class Tenancy:
    """The scope under test, with its own data, crowded by three adversary scopes."""

    scope: Scope
    entities: list[Entity]
    facts: list[Fact]
    adversaries: dict[str, Scope]

    @property
    def entity_ids(self) -> list[str]:
        return ids(self.entities)


def tenant_data(tag: str, *, adversary: bool) -> tuple[list[Entity], list[Fact]]:
    """Memory + code datasets with `tag` in every summary and fact source. An adversary also holds a
    `ghost` entity that shares a name, aliases and a qualified name with the scope's entities, facts
    between ids the scope also has, and a fact reusing a fact id of the scope with other endpoints."""
    base_entities = datasets.memory_entities() + datasets.code_entities()
    base_facts = datasets.memory_facts() + datasets.code_facts()
    entities = [modified(e, summary=f"{e.summary} [{tag}]".lstrip()) for e in base_entities]
    facts = [f.model_copy(update={"source": tag}) for f in base_facts]
    if adversary:
        entities.append(
            ent(
                "ghost",
                "checkout-api",
                type="service",
                aliases=("checkout", "pgw"),
                summary=f"ghost [{tag}]",
                qualified_name="shop.cart.Cart",
            )
        )
        reused = next(f for f in base_facts if (f.subject_id, f.object_id) == ("svc-checkout", "svc-pay"))
        facts += [
            edge("svc-checkout", "ghost", "depends_on", source=tag),
            edge("ghost", "svc-pay", "owns", source=tag),
            edge("svc-inv", "team-pay", "calls_service", source=tag),
            edge("t-add", "repo", "calls", source=tag),
            edge("svc-inv", "team-com", "depends_on", id=reused.id, source=tag),
        ]
    return entities, facts


def _marked(item: Entity | Fact, tag: str) -> bool:
    if isinstance(item, Entity):
        return item.summary.endswith(f"[{tag}]")
    return item.source == tag


class IsolationTests(_GraphSubject):
    """Adversarial tenant collisions: three other scopes hold the same ids, names, aliases and fact ids
    (plus a few extra entities and edges); every template in the scope sees only the scope's own data."""

    @pytest.fixture
    def tenancy(
        self,
        graph_store: GraphStore,
        scope: Scope,
        other_scope: Scope,
        sibling_scope: Scope,
        graph_scope: Scope,
    ) -> Tenancy:
        """Other tenant loaded before the scope, sibling namespace and shared graph after it."""
        adversaries = {"other": other_scope, "sibling": sibling_scope, "graph": graph_scope}
        load(graph_store, other_scope, *tenant_data("other", adversary=True))
        entities, facts = tenant_data(_OWN, adversary=False)
        load(graph_store, scope, entities, facts)
        for tag in ("sibling", "graph"):
            load(graph_store, adversaries[tag], *tenant_data(tag, adversary=True))
        return Tenancy(scope, entities, facts, adversaries)

    def _assert_own(self, items: Iterable[Entity | Fact], scope: Scope) -> None:
        for item in items:
            assert in_scope(item, scope), f"{type(item).__name__} {item.id!r} carries another scope: {item}"
            assert _marked(item, _OWN), f"{type(item).__name__} {item.id!r} is another scope's data: {item}"

    def _snapshot(self, store: GraphStore, tenancy: Tenancy) -> dict[str, Any]:
        """What each adversary scope holds, read through the port."""
        out: dict[str, Any] = {}
        all_ids = [*tenancy.entity_ids, "ghost"]
        for tag, adversary in tenancy.adversaries.items():
            entities = [entity_view(e) for e in get_entities(store, adversary, all_ids)]
            facts = from_roots(store, adversary, all_ids, include_invalid=True).facts
            out[tag] = (entities, [fact_view(f) for f in facts])
        return out

    @requires(UPSERT, FACTS, GET)
    def test_isolation_get_by_ids_sees_only_own_scope(
        self, graph_store: GraphStore, tenancy: Tenancy
    ) -> None:
        """Hydration returns the scope's own version of colliding ids and nothing of the ghost."""
        got = get_entities(graph_store, tenancy.scope, [*tenancy.entity_ids, "ghost"])
        assert [entity_view(e) for e in got] == [expected_entity(e, tenancy.scope) for e in tenancy.entities]
        self._assert_own(got, tenancy.scope)

    @requires(UPSERT, FACTS, FIND)
    def test_isolation_find_exact_sees_only_own_scope(
        self, graph_store: GraphStore, tenancy: Tenancy
    ) -> None:
        """Exact lookup by id, qualified name, name and alias finds only the scope's own entities."""
        own = tenancy.entities
        probes: dict[str, list[str]] = {
            "id": [*tenancy.entity_ids, "ghost"],
            "qualified_name": [e.qualified_name for e in own if e.qualified_name],
            "name": [e.name for e in own],
            "alias": sorted({a for e in own for a in e.aliases}),
        }
        for field, values in probes.items():
            got = find_exact(graph_store, tenancy.scope, values, fields=(field,), limit=100)
            self._assert_own([m.entity for m in got], tenancy.scope)
            want = sorted(e.id for e in own if _has(e, field, values))
            assert sorted(m.entity.id for m in got) == want, field

    @requires(UPSERT, FACTS, HASHES)
    def test_isolation_hashes_see_only_own_scope(self, graph_store: GraphStore, tenancy: Tenancy) -> None:
        """The hash pages list the scope's own entities with the scope's own content hashes."""
        assert all_hashes(graph_store, tenancy.scope) == sorted(
            (e.id, e.content_hash) for e in tenancy.entities
        )

    @requires(UPSERT, FACTS, FROM_ROOTS)
    def test_isolation_facts_from_roots_see_only_own_scope(
        self, graph_store: GraphStore, tenancy: Tenancy
    ) -> None:
        """Facts from roots are the scope's own, even for colliding ids and a reused fact id."""
        for direction in ("out", "in", "both"):
            got = from_roots(
                graph_store,
                tenancy.scope,
                [*tenancy.entity_ids, "ghost"],
                direction=direction,
                include_invalid=True,
            )
            self._assert_own(got.facts, tenancy.scope)
            want = expected_from_roots(tenancy.facts, tenancy.entity_ids, direction=direction)
            assert [fact_view(f) for f in got.facts] == [expected_fact(f, tenancy.scope) for f in want], (
                direction
            )

    @requires(UPSERT, FACTS, NEIGHBOURHOOD)
    def test_isolation_neighbourhood_sees_only_own_scope(
        self, graph_store: GraphStore, tenancy: Tenancy
    ) -> None:
        """A traversal never steps onto another scope's node or edge, even between colliding ids."""
        got = neighbourhood(
            graph_store, tenancy.scope, tenancy.entity_ids, depth=2, limit=200, as_of=datasets.T_NOW
        )
        self._assert_own([n.entity for n in got.nodes], tenancy.scope)
        self._assert_own(got.edges, tenancy.scope)
        assert sorted(i for _, i in node_ids(got)) == sorted(tenancy.entity_ids)
        out = neighbourhood(
            graph_store, tenancy.scope, ["svc-checkout"], direction="out", as_of=datasets.T_NOW
        )
        assert node_ids(out) == [(0, "svc-checkout"), (1, "svc-inv"), (1, "svc-pay"), (1, "team-com")]
        self._assert_own(out.edges, tenancy.scope)
        for root in ("svc-inv", "t-add"):
            got = neighbourhood(
                graph_store, tenancy.scope, [root], direction="out", depth=2, as_of=datasets.T_NOW
            )
            assert node_ids(got) == [(0, root)], root

    @requires(UPSERT, FACTS, PATH)
    def test_isolation_shortest_path_sees_only_own_scope(
        self, graph_store: GraphStore, tenancy: Tenancy
    ) -> None:
        """A path never uses another scope's edges or nodes as a shortcut."""
        scope = tenancy.scope
        assert shortest_path(graph_store, scope, "svc-checkout", "ghost") == t.PathResult()
        assert shortest_path(graph_store, scope, "svc-inv", "team-pay", direction="out") == t.PathResult()
        assert shortest_path(graph_store, scope, "t-add", "repo", direction="out") == t.PathResult()
        got = shortest_path(graph_store, scope, "svc-inv", "team-pay", as_of=datasets.T_NOW)
        assert _path(got) == ["svc-inv", "svc-checkout", "svc-pay", "team-pay"]
        self._assert_own([*got.nodes, *got.edges], scope)

    @requires(UPSERT, FACTS, STATS)
    def test_isolation_stats_count_only_own_scope(self, graph_store: GraphStore, tenancy: Tenancy) -> None:
        """Statistics count the scope's own entities and facts only."""
        got = stats(graph_store, tenancy.scope)
        by_type: dict[str, int] = {}
        for e in tenancy.entities:
            by_type[e.type] = by_type.get(e.type, 0) + 1
        assert (got.entities, got.facts, got.by_type) == (len(tenancy.entities), len(tenancy.facts), by_type)

    @requires(UPSERT, FACTS, FROM_ROOTS)
    def test_isolation_fact_upsert_cannot_reach_foreign_entity(
        self, graph_store: GraphStore, tenancy: Tenancy
    ) -> None:
        """A fact to an entity that exists only in another scope is NotFound, and nothing is written."""
        before = self._snapshot(graph_store, tenancy)
        with pytest.raises(NotFound):
            upsert_facts(
                graph_store, tenancy.scope, [edge("svc-pay", "svc-inv"), edge("svc-checkout", "ghost")]
            )
        assert from_roots(graph_store, tenancy.scope, ["ghost"], include_invalid=True).facts == ()
        got = from_roots(graph_store, tenancy.scope, ["svc-pay"], direction="out", include_invalid=True)
        assert edge_triples(got.facts) == [("svc-pay", "owned_by", "team-pay")]
        assert self._snapshot(graph_store, tenancy) == before

    @requires(UPSERT, FACTS, GET, FROM_ROOTS)
    def test_isolation_upsert_changes_only_own_scope(self, graph_store: GraphStore, tenancy: Tenancy) -> None:
        """Replacing colliding entities and facts in the scope leaves the other scopes as they were."""
        before = self._snapshot(graph_store, tenancy)
        upsert_entities(
            graph_store, tenancy.scope, [modified(e, summary=f"v2 [{_OWN}]") for e in tenancy.entities]
        )
        upsert_facts(
            graph_store, tenancy.scope, [f.model_copy(update={"confidence": 0.5}) for f in tenancy.facts]
        )
        assert self._snapshot(graph_store, tenancy) == before

    @requires(UPSERT, FACTS, DELETE, GET, FROM_ROOTS)
    def test_isolation_delete_changes_only_own_scope(self, graph_store: GraphStore, tenancy: Tenancy) -> None:
        """Deleting colliding ids in the scope leaves the other scopes' entities and facts in place."""
        before = self._snapshot(graph_store, tenancy)
        result = delete_entities(graph_store, tenancy.scope, [*tenancy.entity_ids, "ghost"])
        assert result == t.DeleteResult(deleted=len(tenancy.entities), facts_removed=len(tenancy.facts))
        assert self._snapshot(graph_store, tenancy) == before

    @requires(UPSERT, FACTS, INVALIDATE, GET, FROM_ROOTS)
    def test_isolation_invalidate_changes_only_own_scope(
        self, graph_store: GraphStore, tenancy: Tenancy
    ) -> None:
        """Invalidating colliding fact ids in the scope leaves the other scopes' facts valid."""
        before = self._snapshot(graph_store, tenancy)
        open_facts = [f for f in tenancy.facts if f.valid_to is None]
        assert invalidate(graph_store, tenancy.scope, ids(open_facts), FAR_PAST) == len(open_facts)
        assert self._snapshot(graph_store, tenancy) == before

    @requires(UPSERT, FACTS, CLEAR, GET, FROM_ROOTS)
    def test_isolation_clear_changes_only_own_scope(self, graph_store: GraphStore, tenancy: Tenancy) -> None:
        """Clearing the scope leaves the other tenant, the sibling namespace and the shared graph intact."""
        before = self._snapshot(graph_store, tenancy)
        assert clear(graph_store, tenancy.scope) == len(tenancy.entities) + len(tenancy.facts)
        assert get_entities(graph_store, tenancy.scope, tenancy.entity_ids) == []
        assert self._snapshot(graph_store, tenancy) == before

    @requires(UPSERT, GET)
    def test_isolation_entity_naming_another_scope_never_lands_there(
        self, graph_store: GraphStore, scope: Scope, other_scope: Scope
    ) -> None:
        """An entity naming another scope is refused (ScopeError, nothing written) or re-bound."""
        named = ent("x", tenant_id=other_scope.tenant_id, namespace=other_scope.namespace, graph_id="")
        try:
            upsert_entities(graph_store, scope, [ent("ok"), named])
        except ScopeError:
            assert get_entities(graph_store, scope, ["ok", "x"]) == []
        else:
            got = get_entities(graph_store, scope, ["ok", "x"])
            assert ids(got) == ["ok", "x"] and all(in_scope(e, scope) for e in got)
        assert get_entities(graph_store, other_scope, ["ok", "x"]) == []

    @requires(UPSERT, FACTS, FROM_ROOTS)
    def test_isolation_fact_naming_another_scope_never_lands_there(
        self, graph_store: GraphStore, scope: Scope, other_scope: Scope
    ) -> None:
        """A fact naming another scope is refused (ScopeError, nothing written) or re-bound."""
        for s in (scope, other_scope):
            upsert_entities(graph_store, s, [ent("a"), ent("b")])
        named = edge("a", "b", id="named", tenant_id=other_scope.tenant_id, namespace=other_scope.namespace)
        try:
            upsert_facts(graph_store, scope, [edge("b", "a", id="ok"), named])
        except ScopeError:
            assert from_roots(graph_store, scope, ["a"], include_invalid=True).facts == ()
        else:
            got = from_roots(graph_store, scope, ["a"], include_invalid=True).facts
            assert ids(got) == ["named", "ok"] and all(in_scope(f, scope) for f in got)
        assert from_roots(graph_store, other_scope, ["a"], include_invalid=True).facts == ()


def _has(entity: Entity, field: str, values: Sequence[str]) -> bool:
    if field == "id":
        return entity.id in values
    if field == "qualified_name":
        return entity.qualified_name in values
    folded = {v.casefold() for v in values}
    if field == "name":
        return entity.name.casefold() in folded
    return any(a.casefold() in folded for a in entity.aliases)


# ---- injection --------------------------------------------------------------------------------


def _payload_ids() -> list[str]:
    """Payloads short enough to be entity ids."""
    return [p for p in datasets.INJECTION_PAYLOADS if len(p.encode()) <= 512]


def targeted_payloads(other: Scope, sibling: Scope, graph: Scope) -> list[str]:
    """Payloads that name the adversary scopes' real tenant id, namespace and graph id: as plain text
    and as SQL, Cypher, Gremlin, query-string and document-filter fragments that would widen (or wipe)
    a lookup if the store spliced them into its query."""
    tenant, namespace, graph_id = other.tenant_id, sibling.namespace, graph.graph_id
    return [
        tenant,
        f"{tenant}/{other.namespace}",
        namespace,
        graph_id,
        f"x') OR tenant_id = '{tenant}' --",
        f"x') OR (tenant_id = '{tenant}' AND namespace = '{other.namespace}') --",
        f"x') OR namespace = '{namespace}' --",
        f"x') OR graph_id = '{graph_id}' --",
        f"x' OR tenant_id='{tenant}",
        f'x") OR tenant_id = "{tenant}" --',
        f"x'); DELETE FROM entities WHERE tenant_id = '{tenant}'; --",  # noqa: S608 - a payload, not a query
        f"x' OR n.tenant_id = '{tenant}' RETURN n //",
        f"x').or().has('tenant_id', '{tenant}').as('",
        f"g.V().has('tenant_id', '{tenant}').drop().iterate()",
        f"tenant_id:{tenant} OR name:*",
        f"namespace:{namespace} OR namespace:*",
        f'{{"$or": [{{"tenant_id": "{tenant}"}}, {{"graph_id": "{graph_id}"}}]}}',
    ]


class InjectionTests(_GraphSubject):
    """Parameter binding: injection payloads are data, stored and returned byte for byte, never code."""

    @requires(UPSERT, GET)
    def test_injection_payloads_round_trip(self, graph_store: GraphStore, scope: Scope) -> None:
        """Payloads as names, aliases and summaries come back byte-identical."""
        entities = datasets.injection_entities()
        assert upsert_entities(graph_store, scope, entities) == t.UpsertResult(created=len(entities))
        got = get_entities(graph_store, scope, ids(entities))
        assert [entity_view(e) for e in got] == [expected_entity(e, scope) for e in entities]

    @requires(UPSERT, FIND)
    def test_injection_payloads_found_literally(self, graph_store: GraphStore, scope: Scope) -> None:
        """find_exact finds each payload's own entity by name and by alias, and nothing else."""
        entities = datasets.injection_entities()
        upsert_entities(graph_store, scope, entities)
        for e in entities:
            by_name = find_exact(graph_store, scope, [e.name], fields=("name",))
            assert [(m.entity.id, m.value) for m in by_name] == [(e.id, e.name)], e.name
            assert by_name[0].entity.name == e.name
            by_alias = find_exact(graph_store, scope, [e.aliases[0]], fields=("alias",))
            assert [(m.entity.id, m.value) for m in by_alias] == [(e.id, e.aliases[0])], e.aliases[0]

    @requires(UPSERT, FIND, STATS)
    def test_injection_payloads_never_widen_scope(
        self, graph_store: GraphStore, scope: Scope, other_scope: Scope, sibling_scope: Scope
    ) -> None:
        """Payload lookups match only the scope's own entities and change nothing anywhere."""
        entities = datasets.injection_entities()
        upsert_entities(graph_store, scope, entities)
        upsert_entities(graph_store, other_scope, [modified(e, summary="other") for e in entities])
        upsert_entities(graph_store, other_scope, [ent("other-only", "other only")])
        payloads = list(datasets.INJECTION_PAYLOADS)
        got = find_exact(graph_store, scope, payloads, limit=100)
        assert sorted(m.entity.id for m in got) == sorted(ids(entities))
        assert all(in_scope(m.entity, scope) and m.entity.summary != "other" for m in got)
        assert find_exact(graph_store, sibling_scope, payloads, limit=100) == []
        assert (stats(graph_store, scope).entities, stats(graph_store, other_scope).entities) == (
            len(entities),
            len(entities) + 1,
        )

    @requires(UPSERT, GET, FIND, HASHES)
    def test_injection_payloads_as_ids(self, graph_store: GraphStore, scope: Scope) -> None:
        """Payloads as entity ids are stored, fetched, found and paged literally, in code-point order."""
        payload_ids = _payload_ids()
        entities = [ent(p, f"name {i}") for i, p in enumerate(payload_ids)]
        upsert_entities(graph_store, scope, entities)
        assert ids(get_entities(graph_store, scope, payload_ids)) == payload_ids
        for p in payload_ids:
            assert [m.entity.id for m in find_exact(graph_store, scope, [p], fields=("id",))] == [p], p
        assert [i for i, _ in all_hashes(graph_store, scope)] == sorted(payload_ids)
        for p in payload_ids:
            assert [i for i, _ in hash_page(graph_store, scope, after=p)] == sorted(
                i for i in payload_ids if i > p
            ), p

    @requires(UPSERT, FACTS, FROM_ROOTS)
    def test_injection_payloads_as_fact_values(self, graph_store: GraphStore, scope: Scope) -> None:
        """Payloads as fact values and sources come back byte-identical."""
        entities = datasets.injection_entities()
        facts = [
            Fact(subject_id=e.id, predicate="note", value=p, source=p[:100])
            for e, p in zip(entities, datasets.INJECTION_PAYLOADS, strict=True)
        ]
        load(graph_store, scope, entities, facts)
        got = from_roots(graph_store, scope, ids(entities), direction="out")
        assert [fact_view(f) for f in got.facts] == [
            expected_fact(f, scope) for f in sorted(facts, key=fact_order)
        ]

    @requires(UPSERT, FACTS, GET, FROM_ROOTS, NEIGHBOURHOOD, PATH, STATS)
    def test_injection_payloads_in_traversal_params(self, graph_store: GraphStore, scope: Scope) -> None:
        """Payloads as roots and path ends match nothing and leave the data intact."""
        entities, facts = memory()
        load(graph_store, scope, entities, facts)
        before = stats(graph_store, scope)
        payloads = _payload_ids()
        assert from_roots(graph_store, scope, payloads, include_invalid=True).facts == ()
        assert neighbourhood(graph_store, scope, payloads, depth=2) == t.Subgraph()
        for p in payloads:
            assert shortest_path(graph_store, scope, p, "svc-pay") == t.PathResult()
            assert shortest_path(graph_store, scope, "svc-pay", p) == t.PathResult()
        assert get_entities(graph_store, scope, payloads) == []
        assert stats(graph_store, scope) == before

    @requires(UPSERT, FIND, STATS)
    def test_injection_targeted_values_stay_in_scope(
        self,
        graph_store: GraphStore,
        scope: Scope,
        other_scope: Scope,
        sibling_scope: Scope,
        graph_scope: Scope,
    ) -> None:
        """find_exact values naming the adversary scopes' real tenant id, namespace and graph id match
        nothing of those scopes (nor of the scope), and change nothing anywhere."""
        adversaries = (other_scope, sibling_scope, graph_scope)
        payloads = targeted_payloads(*adversaries)
        entities = datasets.memory_entities()
        upsert_entities(graph_store, scope, entities)
        for s in adversaries:  # the same entities, plus one named by every payload
            foreign = [modified(e, summary="foreign") for e in entities]
            foreign += [ent(f"foreign-{i:02d}", p, aliases=(p,)) for i, p in enumerate(payloads)]
            upsert_entities(graph_store, s, foreign)
        counts = {s: stats(graph_store, s).entities for s in (scope, *adversaries)}
        for payload in payloads:
            for field in ("id", "qualified_name", "name", "alias"):
                got = find_exact(graph_store, scope, [payload], fields=(field,), limit=100)
                found = [
                    (m.entity.id, m.entity.tenant_id, m.entity.namespace, m.entity.graph_id) for m in got
                ]
                assert found == [], (field, payload)
        got = find_exact(graph_store, scope, [*payloads, entities[0].name], limit=100)
        assert [(m.entity.id, m.value) for m in got] == [(entities[0].id, entities[0].name)]
        assert in_scope(got[0].entity, scope) and got[0].entity.summary != "foreign"
        assert {s: stats(graph_store, s).entities for s in counts} == counts

    @requires(UPSERT, GET, FIND, HASHES, DELETE)
    def test_injection_targeted_ids_stay_in_scope(
        self,
        graph_store: GraphStore,
        scope: Scope,
        other_scope: Scope,
        sibling_scope: Scope,
        graph_scope: Scope,
    ) -> None:
        """Entity ids naming the adversary scopes' real tenant id, namespace and graph id are stored,
        fetched, found, paged and deleted in the scope only; the adversaries' data is untouched."""
        adversaries = (other_scope, sibling_scope, graph_scope)
        payloads = [p for p in targeted_payloads(*adversaries) if len(p.encode()) <= 512]
        foreign = datasets.memory_entities()
        for s in adversaries:
            upsert_entities(graph_store, s, [modified(e, summary="foreign") for e in foreign])
        before = {s: all_hashes(graph_store, s) for s in adversaries}
        upsert_entities(graph_store, scope, [ent(p, f"targeted {i}") for i, p in enumerate(payloads)])
        got = get_entities(graph_store, scope, [*payloads, *ids(foreign)])
        assert ids(got) == payloads
        assert all(in_scope(e, scope) for e in got)
        for p in payloads:
            found = find_exact(graph_store, scope, [p], fields=("id",))
            assert [(m.entity.id, m.entity.tenant_id) for m in found] == [(p, scope.tenant_id)], p
        assert [i for i, _ in all_hashes(graph_store, scope)] == sorted(payloads)
        assert delete_entities(graph_store, scope, payloads).deleted == len(payloads)
        assert all_hashes(graph_store, scope) == []
        assert {s: all_hashes(graph_store, s) for s in adversaries} == before


# ---- ordering ---------------------------------------------------------------------------------


class OrderingTests(_GraphSubject):
    """Determinism: entities equal in everything but their id are ordered by id; reads repeat exactly."""

    @requires(UPSERT, FIND)
    def test_find_exact_ties_ordered_by_id(self, graph_store: GraphStore, scope: Scope) -> None:
        """Equal names or aliases are ordered by entity id, whatever the insertion order."""
        tied = datasets.ties()
        upsert_entities(graph_store, scope, tied)
        want = sorted(ids(tied))
        assert [m.entity.id for m in find_exact(graph_store, scope, ["same name"])] == want
        assert [m.entity.id for m in find_exact(graph_store, scope, ["SAME ALIAS"])] == want
        assert [m.entity.id for m in find_exact(graph_store, scope, ["same name"], limit=3)] == want[:3]

    @requires(UPSERT, HASHES)
    def test_hashes_ties_ordered_by_id(self, graph_store: GraphStore, scope: Scope) -> None:
        """Hash pages list tied entities in id order."""
        tied = datasets.ties()
        upsert_entities(graph_store, scope, tied)
        assert [i for i, _ in all_hashes(graph_store, scope)] == sorted(ids(tied))

    @requires(UPSERT, GET)
    def test_get_by_ids_ties_follow_given_order(self, graph_store: GraphStore, scope: Scope) -> None:
        """Hydration follows the given order, not id order, for tied entities."""
        tied = datasets.ties()
        upsert_entities(graph_store, scope, tied)
        for order in (ids(tied), sorted(ids(tied), reverse=True)):
            assert ids(get_entities(graph_store, scope, order)) == order

    @requires(UPSERT, FACTS, FROM_ROOTS, NEIGHBOURHOOD)
    def test_traversal_ties_ordered_by_id(self, graph_store: GraphStore, scope: Scope) -> None:
        """Facts and nodes reached through tied entities are ordered by id."""
        tied = datasets.ties()
        load(graph_store, scope, [*tied, ent("anchor")], [edge(e.id, "anchor") for e in tied])
        got = from_roots(graph_store, scope, ["anchor"])
        assert [f.subject_id for f in got.facts] == sorted(ids(tied))
        sub = neighbourhood(graph_store, scope, ["anchor"])
        assert node_ids(sub) == [(0, "anchor"), *((1, i) for i in sorted(ids(tied)))]
        assert [f.subject_id for f in sub.edges] == sorted(ids(tied))

    @requires(UPSERT, FACTS, PATH)
    def test_shortest_path_ties_ordered_by_id(self, graph_store: GraphStore, scope: Scope) -> None:
        """Between many equal paths the one through the smallest id is taken."""
        tied = datasets.ties()
        facts = [edge("src", e.id) for e in tied] + [edge(e.id, "dst") for e in tied]
        load(graph_store, scope, [*tied, ent("src"), ent("dst")], facts)
        assert _path(shortest_path(graph_store, scope, "src", "dst")) == ["src", "tie-00", "dst"]

    @requires(UPSERT, FACTS, GET, FIND, HASHES, FROM_ROOTS, NEIGHBOURHOOD, PATH, STATS)
    def test_reads_repeat_identically(self, graph_store: GraphStore, scope: Scope) -> None:
        """The same read twice gives the same answer, field for field."""
        load(graph_store, scope, *memory())
        load(graph_store, scope, *code())
        reads = [
            lambda: get_entities(graph_store, scope, ["svc-pay", "m-add", "team-com"]),
            lambda: find_exact(graph_store, scope, ["checkout", "Cart", "shop.cart.Cart", "repo"]),
            lambda: all_hashes(graph_store, scope),
            lambda: from_roots(graph_store, scope, ["svc-checkout", "m-add"], include_invalid=True),
            lambda: neighbourhood(
                graph_store, scope, ["svc-checkout", "m-add"], depth=2, as_of=datasets.T_NOW
            ),
            lambda: shortest_path(graph_store, scope, "t-add", "repo"),
            lambda: stats(graph_store, scope),
        ]
        for read in reads:
            assert read() == read()  # type: ignore[no-untyped-call]

    @requires(UPSERT, FACTS, FIND, HASHES, FROM_ROOTS, NEIGHBOURHOOD)
    def test_answers_independent_of_insertion_order(
        self, graph_store: GraphStore, scope: Scope, other_scope: Scope
    ) -> None:
        """Two scopes loaded with the same data in opposite orders answer identically."""
        entities = datasets.memory_entities() + datasets.ties()
        facts = datasets.memory_facts() + [edge(e.id, "svc-pay") for e in datasets.ties()]
        load(graph_store, scope, entities, facts)
        load(graph_store, other_scope, entities[::-1], facts[::-1])

        def answers(s: Scope) -> list[Any]:
            return [
                [
                    (m.entity.id, m.field)
                    for m in find_exact(graph_store, s, ["same name", "checkout", "pgw"])
                ],
                all_hashes(graph_store, s),
                ids(from_roots(graph_store, s, ["svc-pay", "svc-checkout"], include_invalid=True).facts),
                node_ids(
                    neighbourhood(graph_store, s, ["svc-pay"], depth=2, limit=200, as_of=datasets.T_NOW)
                ),
            ]

        assert answers(scope) == answers(other_scope)


# ---- clamps -----------------------------------------------------------------------------------


class ClampTests(_GraphSubject):
    """Clamps and limits at their edges: exactly the limit, one under, one over; truncation is reported."""

    @requires(UPSERT, FACTS, NEIGHBOURHOOD)
    def test_neighbourhood_depth_clamped_to_two(self, graph_store: GraphStore, scope: Scope) -> None:
        """A depth of 9 runs as 2."""
        load(graph_store, scope, *chain(5))
        got = neighbourhood(graph_store, scope, ["n0"], direction="out", depth=9)
        assert node_ids(got) == [(0, "n0"), (1, "n1"), (2, "n2")]

    @pytest.mark.parametrize(("limit", "kept", "cut"), [(29, 29, True), (30, 30, False), (31, 30, False)])
    @requires(UPSERT, FACTS, NEIGHBOURHOOD)
    def test_neighbourhood_limit_edges(
        self, graph_store: GraphStore, scope: Scope, limit: int, kept: int, cut: bool
    ) -> None:
        """limit caps the nodes beyond the roots, keeps the smallest ids and reports a cut."""
        load(graph_store, scope, *datasets.hub(30))
        got = neighbourhood(graph_store, scope, ["hub"], direction="out", per_direction_limit=50, limit=limit)
        assert node_ids(got) == [(0, "hub"), *((1, f"leaf-out-{i:03d}") for i in range(kept))]
        assert len(got.edges) == kept
        assert got.truncated is cut
        assert (got.omitted >= 1) if cut else (got.omitted == 0)

    @requires(UPSERT, FACTS, NEIGHBOURHOOD)
    def test_neighbourhood_limit_clamped(self, graph_store: GraphStore, scope: Scope) -> None:
        """A limit of 0 runs as 1, a limit of 10,000 as 200."""
        roots = [f"r{i}" for i in range(5)]
        leaves = [f"leaf-{r}-{i:02d}" for r in roots for i in range(50)]
        load(
            graph_store,
            scope,
            [ent(i) for i in roots + leaves],
            [edge(leaf.split("-")[1], leaf) for leaf in leaves],
        )
        one = neighbourhood(graph_store, scope, ["r0"], direction="out", limit=0)
        assert node_ids(one) == [(0, "r0"), (1, "leaf-r0-00")]
        assert one.truncated is True
        many = neighbourhood(graph_store, scope, roots, direction="out", per_direction_limit=50, limit=10_000)
        assert len(many.nodes) == len(roots) + 200
        assert [i for d, i in node_ids(many) if d == 1] == sorted(leaves)[:200]
        assert many.truncated is True and many.omitted >= 1

    @pytest.mark.parametrize(
        ("per_direction", "kept", "cut"), [(29, 29, True), (30, 30, False), (31, 30, False)]
    )
    @requires(UPSERT, FACTS, NEIGHBOURHOOD)
    def test_neighbourhood_per_direction_limit_edges(
        self, graph_store: GraphStore, scope: Scope, per_direction: int, kept: int, cut: bool
    ) -> None:
        """per_direction_limit caps the edges followed from a node in one direction and reports a cut."""
        load(graph_store, scope, *datasets.hub(30))
        got = neighbourhood(
            graph_store, scope, ["hub"], direction="out", per_direction_limit=per_direction, limit=200
        )
        assert node_ids(got) == [(0, "hub"), *((1, f"leaf-out-{i:03d}") for i in range(kept))]
        assert got.truncated is cut
        assert (got.omitted >= 1) if cut else (got.omitted == 0)

    @requires(UPSERT, FACTS, NEIGHBOURHOOD)
    def test_neighbourhood_per_direction_limit_each_direction(
        self, graph_store: GraphStore, scope: Scope
    ) -> None:
        """With direction both, each direction keeps its own first per_direction_limit edges."""
        load(graph_store, scope, *datasets.hub())
        got = neighbourhood(graph_store, scope, ["hub"], per_direction_limit=5, limit=200)
        want = sorted([f"leaf-in-{i:03d}" for i in range(5)] + [f"leaf-out-{i:03d}" for i in range(5)])
        assert node_ids(got) == [(0, "hub"), *((1, i) for i in want)]
        assert got.truncated is True and got.omitted >= 1

    @requires(UPSERT, FACTS, NEIGHBOURHOOD)
    def test_neighbourhood_per_direction_limit_clamped(self, graph_store: GraphStore, scope: Scope) -> None:
        """A per_direction_limit of 99 runs as 50; of 0, as 1."""
        load(graph_store, scope, *datasets.hub())
        got = neighbourhood(graph_store, scope, ["hub"], direction="out", per_direction_limit=99, limit=200)
        assert [i for d, i in node_ids(got) if d == 1] == [f"leaf-out-{i:03d}" for i in range(50)]
        assert got.truncated is True
        got = neighbourhood(graph_store, scope, ["hub"], direction="in", per_direction_limit=0, limit=200)
        assert node_ids(got) == [(0, "hub"), (1, "leaf-in-000")]

    @requires(UPSERT, FACTS, FROM_ROOTS)
    def test_facts_from_roots_limit_80(self, graph_store: GraphStore, scope: Scope) -> None:
        """At most 80 facts come back, the first 80 in order, truncated=True; a limit of 500 runs as 80."""
        entities, facts = datasets.hub()
        load(graph_store, scope, entities, facts)
        want = ids(expected_from_roots(facts, ["hub"]))
        assert len(want) == 120
        for kw in ({}, {"limit": 500}, {"limit": 80}):
            got = from_roots(graph_store, scope, ["hub"], **kw)
            assert (ids(got.facts), got.truncated) == (want[:80], True), kw

    @pytest.mark.parametrize(
        ("limit", "kept", "cut"), [(0, 1, True), (59, 59, True), (60, 60, False), (61, 60, False)]
    )
    @requires(UPSERT, FACTS, FROM_ROOTS)
    def test_facts_from_roots_limit_edges(
        self, graph_store: GraphStore, scope: Scope, limit: int, kept: int, cut: bool
    ) -> None:
        """Exactly `limit` matching facts is not a cut; one more is."""
        entities, facts = datasets.hub()
        load(graph_store, scope, entities, facts)
        want = ids(expected_from_roots(facts, ["hub"], direction="out"))
        got = from_roots(graph_store, scope, ["hub"], direction="out", limit=limit)
        assert (ids(got.facts), got.truncated) == (want[:kept], cut)

    @requires(UPSERT, FIND)
    def test_find_exact_limit_clamped(self, graph_store: GraphStore, scope: Scope) -> None:
        """find_exact keeps at most 100 matches (a limit of 500 runs as 100) and at least 1."""
        many = [ent(f"e{i:03d}", "same") for i in range(105)]
        upsert_entities(graph_store, scope, many)
        got = find_exact(graph_store, scope, ["same"], limit=500)
        assert [m.entity.id for m in got] == sorted(ids(many))[:100]
        assert [m.entity.id for m in find_exact(graph_store, scope, ["same"], limit=0)] == ["e000"]

    @requires(UPSERT, HASHES)
    def test_entity_hashes_limit_edges(self, graph_store: GraphStore, scope: Scope) -> None:
        """A hash page holds exactly `limit` items when more exist; a limit of 0 runs as 1."""
        entities = [ent(f"e{i:02d}") for i in range(10)]
        upsert_entities(graph_store, scope, entities)
        for limit, kept in ((0, 1), (9, 9), (10, 10), (11, 10)):
            assert [i for i, _ in hash_page(graph_store, scope, limit=limit)] == sorted(ids(entities))[:kept]

    @requires(UPSERT, FACTS, PATH)
    def test_shortest_path_max_depth_clamped(self, graph_store: GraphStore, scope: Scope) -> None:
        """A max_depth of 99 runs as 4; of 0, as 1."""
        load(graph_store, scope, *chain(6))
        assert _path(shortest_path(graph_store, scope, "n0", "n4", max_depth=99)) == [
            f"n{i}" for i in range(5)
        ]
        assert shortest_path(graph_store, scope, "n0", "n5", max_depth=99) == t.PathResult()
        assert _path(shortest_path(graph_store, scope, "n0", "n1", max_depth=0)) == ["n0", "n1"]
        assert shortest_path(graph_store, scope, "n0", "n2", max_depth=0) == t.PathResult()


# ---- errors -----------------------------------------------------------------------------------

UNKNOWN_TEMPLATE: t.Template[Any, Any] = t.Template(
    "contract.unknown", 1, t.NoParams, t.CountResult, "Not in the catalogue."
)


def empty_scope_calls() -> dict[str, Any]:
    """Parameters for every catalogue template that are valid on an empty scope."""
    return {
        t.ENTITY_UPSERT.name: t.EntityUpsertParams(entities=()),
        t.ENTITY_GET.name: t.EntityGetParams(ids=("nothing",)),
        t.ENTITY_FIND_EXACT.name: t.EntityFindExactParams(values=("nothing",)),
        t.ENTITY_DELETE.name: t.EntityDeleteParams(ids=("nothing",)),
        t.ENTITY_HASHES.name: t.EntityHashesParams(),
        t.FACT_UPSERT.name: t.FactUpsertParams(facts=()),
        t.FACT_INVALIDATE.name: t.FactInvalidateParams(ids=("nothing",), valid_to=datasets.T_NOW),
        t.FACTS_FROM_ROOTS.name: t.FactsFromRootsParams(roots=("nothing",)),
        t.NEIGHBOURHOOD.name: t.NeighbourhoodParams(roots=("nothing",)),
        t.SHORTEST_PATH.name: t.ShortestPathParams(source="nothing", target="nothing-else"),
        t.SCOPE_STATS.name: t.NoParams(),
        t.SCOPE_CLEAR.name: t.NoParams(),
    }


class ErrorTests(_GraphSubject):
    """Typed errors: the type is the contract, the message is free."""

    def test_run_unknown_template_raises_unsupported(self, graph_store: GraphStore, scope: Scope) -> None:
        """A template that is not in the catalogue is UnsupportedTemplate, never an empty result."""
        with pytest.raises(UnsupportedTemplate):
            graph_store.run(UNKNOWN_TEMPLATE, scope, t.NoParams())

    def test_run_other_template_version_raises_unsupported(
        self, graph_store: GraphStore, scope: Scope
    ) -> None:
        """A catalogue template of another version is UnsupportedTemplate."""
        for template in (t.ENTITY_GET, t.SCOPE_STATS):
            newer = dataclasses.replace(template, version=template.version + 1)
            with pytest.raises(UnsupportedTemplate):
                graph_store.run(newer, scope, empty_scope_calls()[template.name])  # type: ignore[misc]

    def test_run_declared_templates_match_capabilities(self, graph_store: GraphStore, scope: Scope) -> None:
        """Every declared template runs (empty scope: the empty result); any other is UnsupportedTemplate."""
        calls = empty_scope_calls()
        assert set(calls) == set(t.CATALOG), "the contract lists parameters for every catalogue template"
        declared = graph_store.capabilities.templates
        assert declared <= set(t.CATALOG), (
            f"declared templates outside the catalogue: {sorted(declared - set(t.CATALOG))}"
        )
        for name, template in t.CATALOG.items():
            if name in declared:
                assert graph_store.run(template, scope, calls[name]) == template.result(), name
            else:
                with pytest.raises(UnsupportedTemplate):
                    graph_store.run(template, scope, calls[name])

    @requires(UPSERT, GET)
    def test_run_wrong_params_type_raises_input_error(self, graph_store: GraphStore, scope: Scope) -> None:
        """Params that are not the template's parameter model are InputError, and nothing runs."""
        upsert_entities(graph_store, scope, [ent("a")])
        with pytest.raises(InputError):
            graph_store.run(t.ENTITY_GET, scope, t.EntityDeleteParams(ids=("a",)))  # type: ignore[misc]
        with pytest.raises(InputError):
            graph_store.run(t.ENTITY_GET, scope, {"ids": ["a"]})  # type: ignore[misc]
        with pytest.raises(InputError):
            graph_store.run(t.ENTITY_UPSERT, scope, [ent("b")])  # type: ignore[misc]
        assert ids(get_entities(graph_store, scope, ["a", "b"])) == ["a"]

    @requires(UPSERT, GET)
    def test_run_without_scope_raises_scope_error(self, graph_store: GraphStore, scope: Scope) -> None:
        """A scope that is not a Scope (a dict, a tuple, a string) is ScopeError."""
        upsert_entities(graph_store, scope, [ent("a")])
        for fake in (
            scope.as_dict(),
            (scope.tenant_id, scope.namespace, scope.graph_id),
            scope.tenant_id,
            None,
        ):
            with pytest.raises(ScopeError):
                graph_store.run(t.ENTITY_GET, fake, t.EntityGetParams(ids=("a",)))  # type: ignore[arg-type]

    @requires(UPSERT, FACTS, FROM_ROOTS, STATS)
    def test_fact_upsert_missing_endpoint_raises_not_found(
        self, graph_store: GraphStore, scope: Scope
    ) -> None:
        """A fact whose subject or object is missing is NotFound, and nothing of the batch is written."""
        load(graph_store, scope, [ent("a"), ent("b")])
        batches = [
            [edge("a", "b"), edge("a", "missing")],
            [edge("a", "b"), edge("missing", "b")],
            [edge("a", "b"), Fact(subject_id="missing", predicate="note", value="v")],
        ]
        for batch in batches:
            with pytest.raises(NotFound):
                upsert_facts(graph_store, scope, batch)
            assert from_roots(graph_store, scope, ["a", "b"], include_invalid=True).facts == ()
        assert stats(graph_store, scope).facts == 0

    @requires(UPSERT, FACTS, FROM_ROOTS)
    def test_fact_upsert_endpoint_in_other_scope_raises_not_found(
        self, graph_store: GraphStore, scope: Scope, other_scope: Scope, graph_scope: Scope
    ) -> None:
        """An endpoint that exists only in another scope (tenant or shared graph) is NotFound."""
        upsert_entities(graph_store, scope, [ent("a")])
        upsert_entities(graph_store, other_scope, [ent("b")])
        upsert_entities(graph_store, graph_scope, [ent("c")])
        for obj in ("b", "c"):
            with pytest.raises(NotFound):
                upsert_facts(graph_store, scope, [edge("a", obj)])
        assert from_roots(graph_store, scope, ["a"], include_invalid=True).facts == ()
        assert from_roots(graph_store, other_scope, ["b"], include_invalid=True).facts == ()


# ---- close and reopen -------------------------------------------------------------------------


class DurabilityTests(_GraphSubject):
    """close(): a closed store refuses work; a durable store keeps what it was given across a reopen.

    Troubleshooting: `run()` after `close()` must raise `BackendUnavailable` (or another
    `BackendError`), never answer from a stale handle or reconnect silently, and `close()` must be
    safe to call twice (the fixture closes the store again). For the reopen test, provide the
    `reopen_graph_store` hook (open the same location again) or, for an in-memory store, declare
    `durable=False`. Since 1.1.0.
    """

    def _reopener(self, request: pytest.FixtureRequest) -> Callable[[GraphStore], GraphStore]:
        """The `reopen_graph_store` hook; skips (in-memory store) or fails (durable store) without it."""
        reopen: Callable[[GraphStore], GraphStore] | None
        try:
            reopen = request.getfixturevalue("reopen_graph_store")
        except NotImplementedError:  # the contract's default: no hook
            reopen = None
        if reopen is None:
            if not has_capability(self.subject_capabilities(request), "durable"):
                contract_skip(
                    request.node,
                    "adapter does not declare capability durable and provides no `reopen_graph_store` hook",
                )
            pytest.fail(
                f"{type(self).__name__}: the store declares capabilities.durable=True (the default) but "
                "the test class provides no `reopen_graph_store` fixture. Add one returning a function "
                "that opens a new store on the same location, e.g.\n\n"
                "    @pytest.fixture\n"
                "    def reopen_graph_store(self, tmp_path):\n"
                "        return lambda store: AcmeGraphStore(tmp_path / 'graph')\n\n"
                "or declare durable=False if nothing survives close().",
                pytrace=False,
            )
        return reopen

    @requires(UPSERT, GET)
    def test_close_then_run_raises_backend_error(self, graph_store: GraphStore, scope: Scope) -> None:
        """After close(), reads and writes raise BackendUnavailable (or another BackendError)."""
        upsert_entities(graph_store, scope, [ent("a")])
        graph_store.close()
        with pytest.raises(BackendError):
            get_entities(graph_store, scope, ["a"])
        with pytest.raises(BackendError):
            upsert_entities(graph_store, scope, [ent("b")])

    @requires(UPSERT, FACTS, GET, HASHES, FROM_ROOTS)
    def test_close_then_reopen_keeps_data(
        self, graph_store: GraphStore, scope: Scope, request: pytest.FixtureRequest
    ) -> None:
        """Entities and facts written before close() are all there, unchanged, after a reopen on the same
        location (durable stores; needs the `reopen_graph_store` hook)."""
        reopen = self._reopener(request)
        entities, facts = memory()
        load(graph_store, scope, entities, facts)
        graph_store.close()
        reopened = reopen(graph_store)
        try:
            got = get_entities(reopened, scope, ids(entities))
            assert [entity_view(e) for e in got] == [expected_entity(e, scope) for e in entities]
            want = expected_from_roots(facts, ids(entities), include_invalid=True)
            got_facts = from_roots(reopened, scope, ids(entities), include_invalid=True).facts
            assert [fact_view(f) for f in got_facts] == [expected_fact(f, scope) for f in want]
            assert all_hashes(reopened, scope) == sorted((e.id, e.content_hash) for e in entities)
        finally:
            reopened.close()


# ---- fresh store ------------------------------------------------------------------------------


class FreshStoreTests(_GraphSubject):
    """The fixture's store is empty for the test's scopes, and scopes never share data."""

    @requires(STATS)
    def test_fresh_store_stats_are_zero(
        self,
        graph_store: GraphStore,
        scope: Scope,
        other_scope: Scope,
        sibling_scope: Scope,
        graph_scope: Scope,
    ) -> None:
        """A fresh store counts nothing in any of the test's scopes."""
        for s in (scope, other_scope, sibling_scope, graph_scope):
            assert stats(graph_store, s) == t.ScopeStats(), s

    @requires(HASHES, GET, FIND)
    def test_fresh_store_lookups_find_nothing(self, graph_store: GraphStore, scope: Scope) -> None:
        """A fresh store pages no hashes and finds none of the datasets' ids, names or aliases."""
        entities = datasets.memory_entities() + datasets.code_entities()
        assert all_hashes(graph_store, scope) == []
        assert get_entities(graph_store, scope, ids(entities)) == []
        assert find_exact(graph_store, scope, [e.name for e in entities] + ids(entities), limit=100) == []

    @requires(UPSERT, FACTS, HASHES, GET, FROM_ROOTS)
    def test_fresh_store_scopes_do_not_share_data(
        self,
        graph_store: GraphStore,
        scope: Scope,
        other_scope: Scope,
        sibling_scope: Scope,
        graph_scope: Scope,
    ) -> None:
        """Data in one scope is invisible in the other tenant, the sibling namespace and the shared graph."""
        entities, facts = memory()
        load(graph_store, scope, entities, facts)
        assert len(all_hashes(graph_store, scope)) == len(entities)
        for s in (other_scope, sibling_scope, graph_scope):
            assert all_hashes(graph_store, s) == [], s
            assert get_entities(graph_store, s, ids(entities)) == [], s
            assert from_roots(graph_store, s, ids(entities), include_invalid=True).facts == (), s


# ---- bundles ----------------------------------------------------------------------------------


class GraphStoreCoreContract(
    EntityUpsertTests,
    GetByIdsTests,
    FindExactTests,
    EntityDeleteTests,
    EntityHashesTests,
    FactUpsertTests,
    FactInvalidateTests,
    FactsFromRootsTests,
    IsolationTests,
    InjectionTests,
    OrderingTests,
    ErrorTests,
    FreshStoreTests,
    DurabilityTests,
):
    """The entity and fact templates, with isolation, injection, ordering, errors, a fresh store, and
    close / reopen.

    Subclass it and write one `graph_store` fixture (see the module docstring). Tests needing a
    template your store does not declare in `capabilities.templates` skip with its name."""


class GraphStoreContract(
    GraphStoreCoreContract,
    NeighbourhoodTests,
    ShortestPathTests,
    ScopeStatsTests,
    ScopeClearTests,
    ClampTests,
):
    """The whole GraphStore contract: the core plus neighbourhood, shortest path, statistics, clear
    and the clamps. This is what the reference SQLite store passes.

    Usage::

        class TestAcmeGraphStore(GraphStoreContract):
            @pytest.fixture
            def graph_store(self):
                store = AcmeGraphStore(...)
                store.ensure_schema()
                yield store
                store.close()
    """
