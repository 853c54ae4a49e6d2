"""What every graph mixin shares: capability names, the port drivers, comparisons by value,
small datasets, and the subject (the `graph_store` fixture and its hooks)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

import pytest

from graphctx.contracts import datasets
from graphctx.contracts._base import ContractBase
from graphctx.kernel import templates as t
from graphctx.kernel.ports import Capabilities, GraphStore
from graphctx.model import Entity, Fact
from graphctx.scope import Scope

# ---- capability names -------------------------------------------------------------------------

UPSERT = f"template:{t.ENTITY_UPSERT.name}"
GET = f"template:{t.ENTITY_GET.name}"
NAMES = f"template:{t.ENTITY_NAMES.name}"
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

MINIMUM_TEMPLATES: frozenset[str] = frozenset(
    {
        t.ENTITY_UPSERT.name,
        t.ENTITY_GET.name,
        t.ENTITY_FIND_EXACT.name,
        t.ENTITY_DELETE.name,
        t.ENTITY_HASHES.name,
        t.FACT_UPSERT.name,
        t.FACT_INVALIDATE.name,
        t.FACTS_FROM_ROOTS.name,
        t.NEIGHBOURHOOD.name,
    }
)
"""What a graph store must translate to be certifiable: the read trunk (exact lookup, hydration, facts,
expansion), the writes of remember and forget, and the hash scan of reconcile. `graph.shortest_path`,
`scope.stats` and `scope.clear` are optional: without them `path`, `status` and admin clearing answer
`UnsupportedTemplate` (and their tests skip, naming the template). A store that declares fewer is not
certifiable, whatever its tests say (they would mostly skip)."""

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


def entity_names(store: GraphStore, scope: Scope, ids: Iterable[str]) -> list[t.EntityName]:
    return list(store.run(t.ENTITY_NAMES, scope, t.EntityGetParams(ids=tuple(ids))).names)


def name_view(entity: Entity) -> t.EntityName:
    """What entity.names must answer for a stored entity."""
    return t.EntityName(
        id=entity.id,
        name=entity.name,
        qualified_name=entity.qualified_name,
        tenant_id=entity.tenant_id,
        namespace=entity.namespace,
        graph_id=entity.graph_id,
    )


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


def in_scope(item: Entity | Fact | t.EntityName, scope: Scope) -> bool:
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


# ---- entity.find_exact ------------------------------------------------------------------------


def _matches(found: Iterable[t.ExactMatch]) -> list[tuple[str, str, str]]:
    return [(m.entity.id, m.field, m.value) for m in found]


# ---- graph.shortest_path ----------------------------------------------------------------------


def _path(result: t.PathResult) -> list[str]:
    return ids(result.nodes)
