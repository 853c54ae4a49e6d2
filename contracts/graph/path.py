"""graph.shortest_path: the bounded shortest path."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from graphctx.contracts import datasets
from graphctx.contracts._markers import requires
from graphctx.contracts.graph._common import (
    AFTER_T0,
    FACTS,
    FAR_FUTURE,
    FAR_PAST,
    PATH,
    UPSERT,
    _GraphSubject,
    _path,
    chain,
    code,
    edge,
    edge_triples,
    ent,
    entity_view,
    expected_entity,
    in_scope,
    load,
    memory,
    shortest_path,
)
from graphctx.kernel import templates as t
from graphctx.kernel.ports import GraphStore
from graphctx.scope import Scope


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

    @requires(UPSERT, FACTS, PATH)
    def test_shortest_path_ties_take_smallest_ids_not_first_edges(
        self, graph_store: GraphStore, scope: Scope
    ) -> None:
        """The smallest sequence of node ids wins even when another path's first edge comes first in
        catalogue edge order (here a `calls` edge before a `uses` one). Since 1.5.0."""
        load(
            graph_store,
            scope,
            [ent(i) for i in ("s", "a", "b", "t")],
            [
                edge("s", "b", "calls"),
                edge("s", "a", "uses"),
                edge("b", "t", "calls"),
                edge("a", "t", "uses"),
            ],
        )
        got = shortest_path(graph_store, scope, "s", "t", direction="out")
        assert _path(got) == ["s", "a", "t"]
        assert edge_triples(got.edges) == [("s", "uses", "a"), ("a", "uses", "t")]
        assert _path(shortest_path(graph_store, scope, "t", "s", direction="in")) == ["t", "a", "s"]

    @requires(UPSERT, FACTS, PATH)
    def test_shortest_path_parallel_edges_take_catalogue_order(
        self, graph_store: GraphStore, scope: Scope
    ) -> None:
        """Between two consecutive nodes joined by several edges (of several predicates, in either
        direction), the path names the first of them in catalogue edge order (subject, predicate,
        object, id). Since 1.5.0."""
        load(
            graph_store,
            scope,
            [ent("a"), ent("b")],
            [
                edge("a", "b", "uses", id="f1"),
                edge("a", "b", "calls", id="f9"),
                edge("b", "a", "calls", id="f0"),
                edge("a", "b", "calls", id="f5"),
            ],
        )
        assert [f.id for f in shortest_path(graph_store, scope, "a", "b", direction="both").edges] == ["f5"]
        assert [f.id for f in shortest_path(graph_store, scope, "a", "b", direction="out").edges] == ["f5"]
        assert [f.id for f in shortest_path(graph_store, scope, "a", "b", direction="in").edges] == ["f0"]
        assert [f.id for f in shortest_path(graph_store, scope, "b", "a", direction="both").edges] == ["f5"]

    @requires(UPSERT, FACTS, PATH)
    def test_shortest_path_edge_allowlist_at_every_hop(self, graph_store: GraphStore, scope: Scope) -> None:
        """The allowlist holds on every hop, not only the first: a shorter path through an edge of
        another type later on is not taken. Since 1.5.0."""
        load(
            graph_store,
            scope,
            [ent(i) for i in ("s", "m", "x", "y", "t")],
            [
                edge("s", "m", "calls"),
                edge("m", "t", "uses"),
                edge("s", "x", "calls"),
                edge("x", "y", "calls"),
                edge("y", "t", "calls"),
            ],
        )
        assert _path(shortest_path(graph_store, scope, "s", "t", edge_types=("calls",))) == [
            "s",
            "x",
            "y",
            "t",
        ]
        assert _path(shortest_path(graph_store, scope, "t", "s", edge_types=("calls",))) == [
            "t",
            "y",
            "x",
            "s",
        ]
        assert _path(shortest_path(graph_store, scope, "s", "t", edge_types=("calls", "uses"))) == [
            "s",
            "m",
            "t",
        ]

    @requires(UPSERT, FACTS, PATH)
    def test_shortest_path_direction_at_every_hop(self, graph_store: GraphStore, scope: Scope) -> None:
        """The direction holds on every hop, not only the first: a shorter path that walks an edge
        against the direction later on is not taken. Since 1.5.0."""
        load(
            graph_store,
            scope,
            [ent(i) for i in ("s", "m", "x", "y", "t")],
            [edge("s", "m"), edge("t", "m"), edge("s", "x"), edge("x", "y"), edge("y", "t")],
        )
        assert _path(shortest_path(graph_store, scope, "s", "t", direction="out")) == ["s", "x", "y", "t"]
        assert _path(shortest_path(graph_store, scope, "t", "s", direction="in")) == ["t", "y", "x", "s"]
        assert _path(shortest_path(graph_store, scope, "s", "t", direction="both")) == ["s", "m", "t"]

    @requires(UPSERT, FACTS, PATH)
    def test_shortest_path_default_as_of_is_now(self, graph_store: GraphStore, scope: Scope) -> None:
        """Without as_of, ended and future edges are not walked; an edge that ends in the future is.
        Since 1.5.0."""
        load(
            graph_store,
            scope,
            [ent(i) for i in ("s", "m", "t", "u", "v")],
            [
                edge("s", "t", valid_from=FAR_FUTURE),
                edge("s", "m"),
                edge("m", "t"),
                edge("s", "u", valid_to=FAR_PAST),
                edge("s", "v", valid_from=FAR_PAST, valid_to=FAR_FUTURE),
            ],
        )
        assert _path(shortest_path(graph_store, scope, "s", "t")) == ["s", "m", "t"]
        assert shortest_path(graph_store, scope, "s", "u") == t.PathResult()
        assert _path(shortest_path(graph_store, scope, "s", "v")) == ["s", "v"]

    @requires(UPSERT, FACTS, PATH)
    def test_shortest_path_validity_half_open(self, graph_store: GraphStore, scope: Scope) -> None:
        """An edge is walked from its valid_from (inclusive) until its valid_to (exclusive), to the
        microsecond. Since 1.5.0."""
        start = datetime(2024, 1, 1, 8, 0, 0, 1, tzinfo=UTC)
        end = datetime(2024, 2, 1, 8, 0, 0, 1, tzinfo=UTC)
        load(graph_store, scope, [ent("a"), ent("b")], [edge("a", "b", valid_from=start, valid_to=end)])
        tick = timedelta(microseconds=1)
        for as_of, valid in ((start - tick, False), (start, True), (end - tick, True), (end, False)):
            got = shortest_path(graph_store, scope, "a", "b", as_of=as_of)
            assert _path(got) == (["a", "b"] if valid else []), as_of
