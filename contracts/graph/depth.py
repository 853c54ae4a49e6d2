"""Isolation at every depth: every traversal template at depths 1 and 2, with adversary edges that
cross tenant, namespace and graph id at the first AND the second hop.

The scope under test holds two chains out of a root and one into it::

    o -> p -> r -> a -> b -> c          (all `calls`; also isolated nodes 0x 0y 0q zz zy)

Every adversary scope holds the same entities and edges (same ids, same names) plus edges the scope
does not have, between ids the scope also has, so a store that forgets a scope field on any hop finds
a node that exists in the scope too::

    first hop:   r -> 0x   r -> zz   0x -> r   zz -> r   r -> c (a shortcut)   r -uses-> a
    second hop:  a -> 0y   a -> zy   0y -> a   zy -> a   a -> c (a shortcut)   0q -> p
    off-scope:   r -> ghost (an entity only the adversary has)

The adversaries are tenants that sort before and after the scope's tenant, namespaces that sort
before and after its namespace, and a shared code graph id; the same tests run with the scope under
test being a shared code graph (adversaries: the tenant's own memory graph "" and graph ids before and
after). Foreign neighbours' ids sort both before (`0x`) and after (`zz`) the scope's own, some
adversaries are loaded before the scope's data and some after: a leak shows whatever order the
backend returns rows in, and a store that filters by scope only after a limit loses its own rows.

Troubleshooting: a failure names the scope that leaked. The usual cause is a traversal step that binds
the scope on the first hop (the roots) but not on later hops or not on the far endpoint of an edge
(Gremlin: a `both()`/`outE().inV()` without `has('tenant_id', ...)` and the other scope fields after
the first step; SQL: a join of the next hop's facts or entities without all three scope columns), or
a limit applied before the scope filter. Since 1.2.0.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest

from graphctx.contracts._base import has_capability
from graphctx.contracts._markers import requires
from graphctx.contracts.graph._common import (
    CLEAR,
    FACTS,
    FROM_ROOTS,
    NEIGHBOURHOOD,
    PATH,
    UPSERT,
    _GraphSubject,
    _path,
    clear,
    edge,
    edge_triples,
    ent,
    from_roots,
    load,
    neighbourhood,
    node_ids,
    shortest_path,
)
from graphctx.errors import BackendError
from graphctx.kernel import templates as t
from graphctx.kernel.ports import GraphStore
from graphctx.model import Entity, Fact
from graphctx.scope import Scope

OWN_IDS = ("o", "p", "r", "a", "b", "c")
ISOLATED = ("0x", "0y", "0q", "zz", "zy")
"""In the scope, but connected to its chains only through adversary edges."""
OWN_EDGES = (("o", "p"), ("p", "r"), ("r", "a"), ("a", "b"), ("b", "c"))
CROSSING = (
    ("r", "0x", "calls"),
    ("r", "zz", "calls"),
    ("0x", "r", "calls"),
    ("zz", "r", "calls"),
    ("r", "c", "calls"),
    ("r", "a", "uses"),
    ("a", "0y", "calls"),
    ("a", "zy", "calls"),
    ("0y", "a", "calls"),
    ("zy", "a", "calls"),
    ("a", "c", "calls"),
    ("0q", "p", "calls"),
    ("r", "ghost", "calls"),
)
OWN_TAG = "depth-own-5e1"
WHERE = ("memory", "graph")
"""The scope under test: a tenant's memory (graph_id ""), or a shared code graph."""


def _tag(scope: Scope) -> str:
    return f"depth-{scope.tenant_id}-{scope.namespace}-{scope.graph_id or 'memory'}"


def _data(tag: str, *, adversary: bool) -> tuple[list[Entity], list[Fact]]:
    ids = (*OWN_IDS, *ISOLATED, *(("ghost",) if adversary else ()))
    entities = [ent(i, f"node {i}", summary=f"[{tag}]") for i in ids]
    facts = [edge(s, o, "calls", source=tag) for s, o in OWN_EDGES]
    if adversary:
        facts += [edge(s, o, p, source=tag) for s, o, p in CROSSING]
    return entities, facts


@dataclasses.dataclass(frozen=True)
class Crossed:
    """The scope under test and the adversary scopes loaded around it."""

    scope: Scope
    adversaries: tuple[Scope, ...]


def crossing_scopes(scope: Scope, where: str) -> Crossed:
    """Adversaries that sort before and after the scope in every scope field it has."""
    tenant, ns = scope.tenant_id, scope.namespace
    if where == "memory":
        own = Scope(tenant, ns)
        around = (
            Scope(tenant[:-1] + "-0", ns),  # '-' sorts before every hex digit: a tenant just before
            Scope(tenant + "-z", ns),  # ... and just after
            Scope(tenant, ns[:-1]),  # a namespace just before
            Scope(tenant, ns + "-z"),  # ... and just after
            Scope(tenant, ns, "g-m"),  # a shared code graph of the same tenant and namespace
        )
    else:
        own = Scope(tenant, ns, "g-m")
        around = (
            Scope(tenant, ns),
            Scope(tenant, ns, "g-a"),
            Scope(tenant, ns, "g-z"),
            Scope(tenant + "-z", ns, "g-m"),
        )
    return Crossed(own, around)


class IsolationDepthTests(_GraphSubject):
    """Traversals never cross a scope boundary at any hop (module docstring). Since 1.2.0."""

    @pytest.fixture
    def crossed(self, graph_store: GraphStore, scope: Scope, where: str) -> Iterator[Crossed]:
        """The scope (tenant memory, or a shared code graph) crowded by adversaries on every side;
        half of them loaded before its own data, half after. Cleared afterwards when the store can."""
        crossed = crossing_scopes(scope, where)
        first, later = crossed.adversaries[::2], crossed.adversaries[1::2]
        for adversary in first:
            load(graph_store, adversary, *_data(_tag(adversary), adversary=True))
        load(graph_store, crossed.scope, *_data(OWN_TAG, adversary=False))
        for adversary in later:
            load(graph_store, adversary, *_data(_tag(adversary), adversary=True))
        yield crossed
        if has_capability(graph_store.capabilities, CLEAR):
            for s in (crossed.scope, *crossed.adversaries):
                try:
                    clear(graph_store, s)
                except BackendError:  # closed by the test: nothing more to clear
                    break

    def _assert_depth_own(self, sub: t.Subgraph | t.PathResult, crossed: Crossed, what: str) -> None:
        entities = [n.entity for n in sub.nodes] if isinstance(sub, t.Subgraph) else list(sub.nodes)
        for item in (*entities, *sub.edges):
            fields = (item.tenant_id, item.namespace, item.graph_id)
            leaked = next(
                (a for a in crossed.adversaries if fields == (a.tenant_id, a.namespace, a.graph_id)), None
            )
            assert leaked is None, (
                f"{what}: {type(item).__name__} {item.id!r} of {leaked} reached from {crossed.scope}"
            )
            assert fields == (crossed.scope.tenant_id, crossed.scope.namespace, crossed.scope.graph_id), (
                f"{what}: {type(item).__name__} {item.id!r} carries {fields}, traversed in {crossed.scope}"
            )
        for f in sub.edges:
            assert f.source == OWN_TAG, f"{what}: edge {edge_triples([f])} is another scope's ({f.source})"
        for e in entities:
            assert e.summary == f"[{OWN_TAG}]", f"{what}: node {e.id!r} is another scope's ({e.summary})"

    @pytest.mark.parametrize(
        ("direction", "depth", "nodes", "edges"),
        [
            ("out", 1, [(0, "r"), (1, "a")], [("r", "a")]),
            ("out", 2, [(0, "r"), (1, "a"), (2, "b")], [("a", "b"), ("r", "a")]),
            ("in", 1, [(0, "r"), (1, "p")], [("p", "r")]),
            ("in", 2, [(0, "r"), (1, "p"), (2, "o")], [("o", "p"), ("p", "r")]),
            ("both", 1, [(0, "r"), (1, "a"), (1, "p")], [("p", "r"), ("r", "a")]),
            (
                "both",
                2,
                [(0, "r"), (1, "a"), (1, "p"), (2, "b"), (2, "o")],
                [("a", "b"), ("o", "p"), ("p", "r"), ("r", "a")],
            ),
        ],
    )
    @pytest.mark.parametrize("where", WHERE)
    @requires(UPSERT, FACTS, NEIGHBOURHOOD)
    def test_isolation_depth_neighbourhood_at_each_hop(
        self,
        graph_store: GraphStore,
        crossed: Crossed,
        direction: str,
        depth: int,
        nodes: list[tuple[int, str]],
        edges: list[tuple[str, str]],
    ) -> None:
        """Depth 1 and 2, out, in and both: exactly the scope's own nodes and edges, whatever crosses at
        the first or the second hop."""
        got = neighbourhood(graph_store, crossed.scope, ["r"], direction=direction, depth=depth)
        what = f"neighbourhood(r, {direction}, depth {depth}) in {crossed.scope}"
        self._assert_depth_own(got, crossed, what)
        assert node_ids(got) == nodes, what
        assert [(s, o) for s, _, o in edge_triples(got.edges)] == edges, what
        assert (got.truncated, got.omitted) == (False, 0), f"{what}: other scopes' edges were counted as cut"

    @pytest.mark.parametrize("where", WHERE)
    @requires(UPSERT, FACTS, NEIGHBOURHOOD)
    def test_isolation_depth_roots_at_the_second_hop(self, graph_store: GraphStore, crossed: Crossed) -> None:
        """Roots deep in the chain, and several at once: still only the scope's own graph."""
        for roots, nodes in (
            (["a"], [(0, "a"), (1, "b"), (1, "r"), (2, "c"), (2, "p")]),
            (["b", "p"], [(0, "b"), (0, "p"), (1, "a"), (1, "c"), (1, "o"), (1, "r")]),
            (["0y", "zz"], [(0, "0y"), (0, "zz")]),  # in the scope, but joined to it only elsewhere
        ):
            got = neighbourhood(graph_store, crossed.scope, roots, depth=2 if len(roots) == 1 else 1)
            self._assert_depth_own(got, crossed, f"neighbourhood({roots})")
            assert node_ids(got) == nodes, roots

    @pytest.mark.parametrize("where", WHERE)
    @requires(UPSERT, FACTS, NEIGHBOURHOOD)
    def test_isolation_depth_limits_count_only_own_edges(
        self, graph_store: GraphStore, crossed: Crossed
    ) -> None:
        """Limits apply after the scope filter: foreign rows that sort first take no place and are not
        counted as cut."""
        got = neighbourhood(
            graph_store, crossed.scope, ["r"], direction="out", depth=2, per_direction_limit=1
        )
        self._assert_depth_own(got, crossed, "per_direction_limit=1")
        assert node_ids(got) == [(0, "r"), (1, "a"), (2, "b")]
        assert (got.truncated, got.omitted) == (False, 0)
        got = neighbourhood(graph_store, crossed.scope, ["r"], direction="out", depth=2, limit=1)
        self._assert_depth_own(got, crossed, "limit=1")
        assert node_ids(got) == [(0, "r"), (1, "a")]
        assert (got.truncated, got.omitted) == (True, 1)  # a -> b, the one own step past the limit

    @pytest.mark.parametrize("where", WHERE)
    @requires(UPSERT, FACTS, PATH)
    def test_isolation_depth_shortest_path_takes_no_foreign_shortcut(
        self, graph_store: GraphStore, crossed: Crossed
    ) -> None:
        """No path uses another scope's edge as a shortcut, at the first hop or the second, and nodes
        joined to the chain only elsewhere are unreachable."""
        scope = crossed.scope
        got = shortest_path(graph_store, scope, "r", "c", direction="out")
        self._assert_depth_own(got, crossed, "path r -> c")
        assert _path(got) == ["r", "a", "b", "c"]
        got = shortest_path(graph_store, scope, "c", "o", direction="in")
        self._assert_depth_own(got, crossed, "path c <- o")
        assert _path(got) == []  # five hops, longer than max_depth 4 -- unless a foreign r -> c is taken
        got = shortest_path(graph_store, scope, "b", "o", direction="both")
        self._assert_depth_own(got, crossed, "path b - o")
        assert _path(got) == ["b", "a", "r", "p", "o"]
        for target in ISOLATED:
            for direction in ("out", "in", "both"):
                assert (
                    shortest_path(graph_store, scope, "r", target, direction=direction) == t.PathResult()
                ), f"a path from r to {target} ({direction}) exists only through other scopes"
        assert shortest_path(graph_store, scope, "r", "ghost") == t.PathResult()

    @pytest.mark.parametrize("where", WHERE)
    @requires(UPSERT, FACTS, FROM_ROOTS)
    def test_isolation_depth_facts_from_roots_at_each_hop(
        self, graph_store: GraphStore, crossed: Crossed
    ) -> None:
        """The facts of roots at the first and second hop are the scope's own."""
        scope = crossed.scope
        for roots, want in (
            (["r"], [("p", "r"), ("r", "a")]),
            (["a"], [("a", "b"), ("r", "a")]),
            (["b"], [("a", "b"), ("b", "c")]),
            (["p", "b"], [("a", "b"), ("b", "c"), ("o", "p"), ("p", "r")]),
            (list(ISOLATED), []),
        ):
            for include_invalid in (False, True):
                got = from_roots(graph_store, scope, roots, include_invalid=include_invalid)
                for f in got.facts:
                    assert (f.tenant_id, f.namespace, f.graph_id) == (
                        scope.tenant_id,
                        scope.namespace,
                        scope.graph_id,
                    )
                    assert f.source == OWN_TAG, f"fact {edge_triples([f])} of {f.source} from roots {roots}"
                assert [(s, o) for s, _, o in edge_triples(got.facts)] == want, roots
