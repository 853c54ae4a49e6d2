"""Ordering and determinism: ties by id, repeatable reads, independence of insertion order."""

from __future__ import annotations

from typing import Any

from graphctx.contracts import datasets
from graphctx.contracts._markers import requires
from graphctx.contracts.graph._common import (
    FACTS,
    FIND,
    FROM_ROOTS,
    GET,
    HASHES,
    NEIGHBOURHOOD,
    PATH,
    STATS,
    UPSERT,
    _GraphSubject,
    _path,
    all_hashes,
    code,
    edge,
    ent,
    find_exact,
    from_roots,
    get_entities,
    ids,
    load,
    memory,
    neighbourhood,
    node_ids,
    shortest_path,
    stats,
    upsert_entities,
)
from graphctx.kernel.ports import GraphStore
from graphctx.scope import Scope

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
