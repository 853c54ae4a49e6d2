"""Isolation: adversary scopes with colliding ids, names, aliases and fact ids."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from typing import Any

import pytest

from graphctx.contracts import datasets
from graphctx.contracts._base import joined_twins
from graphctx.contracts._markers import requires
from graphctx.contracts.graph._common import (
    CLEAR,
    DELETE,
    FACTS,
    FAR_PAST,
    FIND,
    FROM_ROOTS,
    GET,
    HASHES,
    INVALIDATE,
    NEIGHBOURHOOD,
    PATH,
    STATS,
    UPSERT,
    _GraphSubject,
    _path,
    all_hashes,
    clear,
    delete_entities,
    edge,
    edge_triples,
    ent,
    entity_view,
    expected_entity,
    expected_fact,
    expected_from_roots,
    fact_view,
    find_exact,
    from_roots,
    get_entities,
    ids,
    in_scope,
    invalidate,
    load,
    modified,
    neighbourhood,
    node_ids,
    shortest_path,
    stats,
    upsert_entities,
    upsert_facts,
)
from graphctx.errors import NotFound, ScopeError
from graphctx.kernel import templates as t
from graphctx.kernel.ports import GraphStore
from graphctx.model import Entity, Fact
from graphctx.scope import Scope

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
    between ids the scope also has, and a fact reusing a fact id of the scope with other endpoints
    (an explicit id: an id of the derived form names its content, so no scope can move it)."""
    base_entities = datasets.memory_entities() + datasets.code_entities()
    base_facts = datasets.memory_facts() + datasets.code_facts()
    entities = [modified(e, summary=f"{e.summary} [{tag}]".lstrip()) for e in base_entities]
    facts = [
        f.model_copy(update={"source": tag, **({"id": _REUSED} if _is_reused(f) else {})}) for f in base_facts
    ]
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
        facts += [
            edge("svc-checkout", "ghost", "depends_on", source=tag),
            edge("ghost", "svc-pay", "owns", source=tag),
            edge("svc-inv", "team-pay", "calls_service", source=tag),
            edge("t-add", "repo", "calls", source=tag),
            edge("svc-inv", "team-com", "depends_on", id=_REUSED, source=tag),
        ]
    return entities, facts


_REUSED = "dep-checkout-pay"  # the id every scope gives svc-checkout -> svc-pay; adversaries reuse it


def _is_reused(f: Fact) -> bool:
    return (f.subject_id, f.object_id) == ("svc-checkout", "svc-pay")


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

    @requires(UPSERT, FACTS, GET, FIND, FROM_ROOTS, DELETE)
    def test_isolation_scopes_whose_joined_names_agree_never_share_data(
        self, graph_store: GraphStore, scope: Scope
    ) -> None:
        """Scopes that differ only in where a separator stands (`t:x`/`y` and `t`/`x:y`, ...: see
        `joined_twins`) each keep their own entity, alias and fact for the same ids through upserts
        and a delete: a vertex or row key is the three parts, not a string joined from them.
        Since 1.6.0."""
        pairs = joined_twins(scope)
        for n, (a, b) in enumerate(pairs):
            for s, tag in ((a, f"a{n}"), (b, f"b{n}")):
                upsert_entities(
                    graph_store, s, [ent("twin", summary=tag, aliases=(f"alias-{tag}",)), ent("peer")]
                )
                upsert_facts(graph_store, s, [edge("twin", "peer", source=tag)])
        for n, (a, b) in enumerate(pairs):
            for s, tag, other in ((a, f"a{n}", f"b{n}"), (b, f"b{n}", f"a{n}")):
                assert [e.summary for e in get_entities(graph_store, s, ["twin"])] == [tag], (a, b)
                assert find_exact(graph_store, s, [f"alias-{other}"]) == [], (a, b)
                got = from_roots(graph_store, s, ["twin"], direction="out")
                assert [f.source for f in got.facts] == [tag], (a, b)
        for a, _ in pairs:
            assert delete_entities(graph_store, a, ["twin"]) == t.DeleteResult(deleted=1, facts_removed=1)
        for n, (a, b) in enumerate(pairs):
            assert get_entities(graph_store, a, ["twin"]) == [], (a, b)
            assert [e.summary for e in get_entities(graph_store, b, ["twin"])] == [f"b{n}"], (a, b)
            assert [f.source for f in from_roots(graph_store, b, ["twin"], direction="out").facts] == [
                f"b{n}"
            ]

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
