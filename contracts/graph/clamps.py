"""Clamps and limits at, under and over their edges; truncation reported."""

from __future__ import annotations

import pytest

from graphctx.contracts import datasets
from graphctx.contracts._markers import requires
from graphctx.contracts.graph._common import (
    FACTS,
    FAR_FUTURE,
    FAR_PAST,
    FIND,
    FROM_ROOTS,
    HASHES,
    NEIGHBOURHOOD,
    PATH,
    UPSERT,
    _GraphSubject,
    _path,
    chain,
    edge,
    edge_triples,
    ent,
    expected_from_roots,
    find_exact,
    from_roots,
    hash_page,
    ids,
    load,
    neighbourhood,
    node_ids,
    shortest_path,
    upsert_entities,
)
from graphctx.kernel import templates as t
from graphctx.kernel.ports import GraphStore
from graphctx.model import Fact
from graphctx.scope import Scope

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

    @pytest.mark.parametrize("direction", ["out", "in"])
    @requires(UPSERT, FACTS, NEIGHBOURHOOD)
    def test_neighbourhood_per_direction_limit_counts_only_valid_edges(
        self, graph_store: GraphStore, scope: Scope, direction: str
    ) -> None:
        """A node's first `per_direction_limit` edges are its first *valid* ones: five ended edges and
        a future one that sort before the current edge take no place (validity checked after the cut
        leaves the node with nothing, silently). Since 1.6.0."""
        far = [f"a{i}" for i in range(6)]

        def link(other: str, fact_id: str, **kw: object) -> Fact:
            ends = ("r", other) if direction == "out" else (other, "r")
            return edge(*ends, "calls", id=fact_id, **kw)

        facts = [link(a, f"ended-{a}", valid_to=FAR_PAST) for a in far[:5]]
        facts += [link(far[5], "future", valid_from=FAR_FUTURE), link("b", "live")]
        load(graph_store, scope, [ent("r"), ent("b"), *(ent(a) for a in far)], facts)
        for as_of in (None, datasets.T_NOW):
            got = neighbourhood(
                graph_store, scope, ["r"], direction=direction, per_direction_limit=1, as_of=as_of
            )
            assert node_ids(got) == [(0, "r"), (1, "b")], as_of
            assert [f.id for f in got.edges] == ["live"] and got.omitted == 0, as_of

    @pytest.mark.parametrize("direction", ["out", "in"])
    @requires(UPSERT, FACTS, NEIGHBOURHOOD)
    def test_neighbourhood_per_direction_limit_counts_only_allowed_edges(
        self, graph_store: GraphStore, scope: Scope, direction: str
    ) -> None:
        """With an edge allowlist, a node's first `per_direction_limit` edges are its first allowed
        ones: `calls` edges that sort before the one `uses` edge take no place, at either hop.
        Since 1.6.0."""

        def link(a: str, b: str, predicate: str, fact_id: str) -> Fact:
            return (
                edge(a, b, predicate, id=fact_id) if direction == "out" else edge(b, a, predicate, id=fact_id)
            )

        facts = [link("r", f"a{i}", "calls", f"c{i}") for i in range(3)] + [link("r", "b", "uses", "u1")]
        facts += [link("b", f"b{i}", "calls", f"d{i}") for i in range(3)] + [link("b", "c", "uses", "u2")]
        names = ["r", "b", "c", *(f"a{i}" for i in range(3)), *(f"b{i}" for i in range(3))]
        load(graph_store, scope, [ent(n) for n in names], facts)
        got = neighbourhood(
            graph_store,
            scope,
            ["r"],
            direction=direction,
            edge_types=("uses",),
            per_direction_limit=1,
            depth=2,
        )
        assert node_ids(got) == [(0, "r"), (1, "b"), (2, "c")]
        assert sorted(f.id for f in got.edges) == ["u1", "u2"] and got.omitted == 0

    @pytest.mark.parametrize(("limit", "cut"), [(2, False), (1, True)])
    @requires(UPSERT, FACTS, FROM_ROOTS)
    def test_facts_from_roots_limit_counts_only_matching_predicates(
        self, graph_store: GraphStore, scope: Scope, limit: int, cut: bool
    ) -> None:
        """`limit` cuts the facts of the allowed predicates: three `calls` facts that sort before two
        `uses` facts take no place in an answer for `uses` (a filter after the cut answers nothing,
        truncated). Since 1.6.0."""
        facts = [edge("r", f"a{i}", "calls") for i in range(3)] + [
            edge("r", f"b{i}", "uses") for i in range(2)
        ]
        load(
            graph_store,
            scope,
            [ent("r"), *(ent(f"a{i}") for i in range(3)), *(ent(f"b{i}") for i in range(2))],
            facts,
        )
        want = ids(expected_from_roots(facts, ["r"], direction="out", predicates=("uses",)))
        got = from_roots(graph_store, scope, ["r"], direction="out", predicates=("uses",), limit=limit)
        assert (ids(got.facts), got.truncated) == (want[:limit], cut)

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

    @requires(UPSERT, FACTS, NEIGHBOURHOOD)
    def test_neighbourhood_per_direction_limit_keeps_catalogue_order(
        self, graph_store: GraphStore, scope: Scope
    ) -> None:
        """The edges a node keeps per direction are its first in catalogue order: outgoing by
        (predicate, object, id), incoming by (subject, predicate, id) -- with several predicates and
        parallel edges, not by the far end's id alone, nor by the predicate first for incoming edges,
        nor in storage order between parallel edges. Since 1.5.0."""
        load(
            graph_store,
            scope,
            [ent(i) for i in ("hub", "a1", "a2", "z1", "z2", "b1", "b2", "y1", "y2")],
            [
                edge("hub", "a1", "uses", id="u1"),
                edge("hub", "a2", "uses", id="u2"),
                edge("hub", "z1", "calls", id="c2"),
                edge("hub", "z1", "calls", id="c1"),
                edge("hub", "z2", "calls", id="c0"),
                edge("b1", "hub", "uses", id="v1"),
                edge("b1", "hub", "calls", id="v2"),
                edge("b2", "hub", "uses", id="v0"),
                edge("y1", "hub", "calls", id="w1"),
                edge("y2", "hub", "calls", id="w2"),
            ],
        )
        for direction, per_direction, nodes, edges, omitted in (
            ("out", 2, ["z1"], ["c1", "c2"], 3),
            ("out", 3, ["z1", "z2"], ["c1", "c2", "c0"], 2),
            ("in", 1, ["b1"], ["v2"], 4),
            ("in", 3, ["b1", "b2"], ["v2", "v1", "v0"], 2),
            ("both", 1, ["b1", "z1"], ["v2", "c1"], 8),
        ):
            got = neighbourhood(
                graph_store, scope, ["hub"], direction=direction, per_direction_limit=per_direction, limit=200
            )
            case = (direction, per_direction)
            assert node_ids(got) == [(0, "hub"), *((1, i) for i in nodes)], case
            assert [f.id for f in got.edges] == edges, case
            assert got.omitted == omitted, case

    @requires(UPSERT, FACTS, NEIGHBOURHOOD)
    def test_neighbourhood_limit_keeps_smallest_ids_not_first_edges(
        self, graph_store: GraphStore, scope: Scope
    ) -> None:
        """`limit` keeps the nodes of smallest id at each hop, whatever order the edges to them come
        in, and the hops share it: the first hop's nodes count against the second's. Since 1.5.0."""
        load(
            graph_store,
            scope,
            [ent(i) for i in ("r", "z", "a", "b", "c", "d")],
            [
                edge("r", "z", "calls"),
                edge("r", "b", "uses"),
                edge("r", "a", "uses"),
                edge("b", "c", "calls"),
                edge("a", "d", "calls"),
            ],
        )
        got = neighbourhood(
            graph_store, scope, ["r"], direction="out", depth=1, per_direction_limit=50, limit=2
        )
        assert node_ids(got) == [(0, "r"), (1, "a"), (1, "b")]
        assert edge_triples(got.edges) == [("r", "uses", "a"), ("r", "uses", "b")]
        assert (got.truncated, got.omitted) == (True, 1)
        deeper = neighbourhood(
            graph_store, scope, ["r"], direction="out", depth=2, per_direction_limit=50, limit=4
        )
        assert node_ids(deeper) == [(0, "r"), (1, "a"), (1, "b"), (1, "z"), (2, "c")]
        assert (deeper.truncated, deeper.omitted) == (True, 1)

    @pytest.mark.parametrize(
        ("direction", "per_direction", "limit", "omitted"),
        [
            ("out", 3, 200, 7),
            ("out", 50, 4, 6),
            ("out", 5, 2, 8),
            ("both", 3, 200, 14),
            ("both", 4, 5, 15),
            ("out", 10, 10, 0),
        ],
    )
    @requires(UPSERT, FACTS, NEIGHBOURHOOD)
    def test_neighbourhood_omitted_counts_each_step_left_out(
        self,
        graph_store: GraphStore,
        scope: Scope,
        direction: str,
        per_direction: int,
        limit: int,
        omitted: int,
    ) -> None:
        """`omitted` is exactly the number of steps a limit left out: the edges the per-direction cut
        dropped plus the edges to nodes over `limit` -- not a flag, not a count of nodes. Since 1.5.0."""
        load(graph_store, scope, *datasets.hub(10))
        got = neighbourhood(
            graph_store, scope, ["hub"], direction=direction, per_direction_limit=per_direction, limit=limit
        )
        assert got.omitted == omitted
        assert got.truncated is (omitted > 0)
