"""graph.neighbourhood: the bounded breadth-first expansion."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from graphctx.contracts import datasets
from graphctx.contracts._markers import requires
from graphctx.contracts.graph._common import (
    AFTER_T0,
    FACTS,
    FAR_FUTURE,
    FAR_PAST,
    NEIGHBOURHOOD,
    UPSERT,
    _GraphSubject,
    code,
    edge,
    edge_triples,
    ent,
    entity_view,
    expected_entity,
    expected_fact,
    fact_view,
    load,
    memory,
    neighbourhood,
    node_ids,
)
from graphctx.kernel import templates as t
from graphctx.kernel.ports import GraphStore
from graphctx.scope import Scope

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

    @pytest.mark.parametrize("direction", ["out", "both"])
    @requires(UPSERT, FACTS, NEIGHBOURHOOD)
    def test_neighbourhood_node_keeps_its_smallest_depth(
        self, graph_store: GraphStore, scope: Scope, direction: str
    ) -> None:
        """A node reached at depth 1 and again from another depth-1 node at the second hop stays at
        depth 1, listed once; the edge joining the two depth-1 nodes is followed. Since 1.5.0."""
        load(
            graph_store,
            scope,
            [ent(i) for i in ("r", "a", "b", "c")],
            [edge("r", "a"), edge("r", "b"), edge("a", "b"), edge("b", "c")],
        )
        got = neighbourhood(graph_store, scope, ["r"], direction=direction, depth=2)
        assert node_ids(got) == [(0, "r"), (1, "a"), (1, "b"), (2, "c")]
        assert edge_triples(got.edges) == [
            ("a", "relates_to", "b"),
            ("b", "relates_to", "c"),
            ("r", "relates_to", "a"),
            ("r", "relates_to", "b"),
        ]

    @requires(UPSERT, FACTS, NEIGHBOURHOOD)
    def test_neighbourhood_validity_half_open(self, graph_store: GraphStore, scope: Scope) -> None:
        """An edge is followed from its valid_from (inclusive) until its valid_to (exclusive), to the
        microsecond, in either direction and at either hop. Since 1.5.0."""
        start = datetime(2024, 1, 1, 8, 0, 0, 1, tzinfo=UTC)
        end = datetime(2024, 2, 1, 8, 0, 0, 1, tzinfo=UTC)
        load(
            graph_store,
            scope,
            [ent(i) for i in ("r", "a", "b")],
            [
                edge("r", "a"),
                edge("a", "b", valid_from=start, valid_to=end),
                edge("b", "r", valid_from=start, valid_to=end),
            ],
        )
        tick = timedelta(microseconds=1)
        for as_of, valid in ((start - tick, False), (start, True), (end - tick, True), (end, False)):
            out = neighbourhood(graph_store, scope, ["r"], direction="out", depth=2, as_of=as_of)
            assert node_ids(out) == [(0, "r"), (1, "a"), *([(2, "b")] if valid else [])], as_of
            inward = neighbourhood(graph_store, scope, ["r"], direction="in", depth=1, as_of=as_of)
            assert node_ids(inward) == [(0, "r"), *([(1, "b")] if valid else [])], as_of
