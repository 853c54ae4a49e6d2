"""The isolation re-check of whole traversal answers: reachability through admitted edges only, and a
path reported only as one admitted chain from the source to the target."""

from __future__ import annotations

from graphctx.kernel.templates import Node, PathResult, Subgraph
from graphctx.model import Entity, Fact
from graphctx.retrieval.isolation import Isolation
from graphctx.scope import Scope

OWN = Scope("t", "ns")
FOREIGN = Scope("u", "ns")


def ent(i: str, scope: Scope = OWN) -> Entity:
    return Entity(id=i, name=i, **scope.as_dict())


def fact(s: str, o: str, scope: Scope = OWN) -> Fact:
    return Fact(subject_id=s, predicate="relates_to", object_id=o, **scope.as_dict())


def node(i: str, depth: int, scope: Scope = OWN) -> Node:
    return Node(entity=ent(i, scope), depth=depth)


def test_an_honest_answer_is_kept_as_it_is() -> None:
    sub = Subgraph(
        nodes=(node("r", 0), node("a", 1), node("b", 2)),
        edges=(fact("a", "b"), fact("r", "a")),
        truncated=True,
        omitted=3,
    )
    isolation = Isolation(OWN)
    kept = isolation.admit_subgraph(sub, ["r"], "out", 2)
    assert (kept.nodes, kept.edges, kept.clean) == (list(sub.nodes), list(sub.edges), True)
    assert kept.limit_note("nodes") == {"what": "nodes", "reason": "limit", "count": 3}
    assert isolation.rejected == 0


def test_a_node_reached_only_through_a_foreign_edge_is_dropped() -> None:
    """`b` carries the caller's scope, but the only edge to it is another tenant's."""
    sub = Subgraph(
        nodes=(node("r", 0), node("a", 1), node("b", 2), node("x", 1, FOREIGN)),
        edges=(fact("a", "b", FOREIGN), fact("r", "a"), fact("r", "x", FOREIGN)),
        truncated=True,
        omitted=7,
    )
    isolation = Isolation(OWN)
    kept = isolation.admit_subgraph(sub, ["r"], "both", 2)
    assert [(n.depth, n.entity.id) for n in kept.nodes] == [(0, "r"), (1, "a")]
    assert [(e.subject_id, e.object_id) for e in kept.edges] == [("r", "a")]
    assert kept.clean is False
    assert isolation.rejected == 4  # two foreign edges, a foreign node, and b
    assert kept.limit_note("nodes") == {"what": "nodes", "reason": "limit"}  # no count of foreign edges


def test_depths_are_recomputed_and_direction_is_respected() -> None:
    """A node the store put at depth 1 through a foreign edge keeps only its own distance."""
    sub = Subgraph(
        nodes=(node("r", 0), node("a", 1), node("b", 1)),
        edges=(fact("r", "a"), fact("a", "b"), fact("r", "b", FOREIGN)),
    )
    kept = Isolation(OWN).admit_subgraph(sub, ["r"], "out", 2)
    assert [(n.depth, n.entity.id) for n in kept.nodes] == [(0, "r"), (1, "a"), (2, "b")]
    upstream = Isolation(OWN).admit_subgraph(sub, ["r"], "in", 2)
    assert [n.entity.id for n in upstream.nodes] == ["r"]


def test_a_path_through_a_foreign_node_or_edge_is_no_path() -> None:
    own = PathResult(nodes=(ent("s"), ent("m"), ent("t")), edges=(fact("s", "m"), fact("m", "t")))
    assert Isolation(OWN).admit_path(own, "s", "t") == own
    through_node = own.model_copy(update={"nodes": (ent("s"), ent("m", FOREIGN), ent("t"))})
    through_edge = own.model_copy(update={"edges": (fact("s", "m"), fact("m", "t", FOREIGN))})
    for leaky in (through_node, through_edge):
        isolation = Isolation(OWN)
        assert isolation.admit_path(leaky, "s", "t") == PathResult()
        assert isolation.rejected == 1


def test_a_path_that_is_not_one_chain_from_source_to_target_is_no_path() -> None:
    """All in scope, but not the path asked for: edges that do not join consecutive nodes, other ends."""
    nodes = (ent("s"), ent("m"), ent("t"))
    broken = [
        PathResult(nodes=nodes, edges=(fact("s", "m"), fact("s", "t"))),
        PathResult(nodes=nodes, edges=(fact("s", "m"),)),
        PathResult(nodes=(ent("m"), ent("t")), edges=(fact("m", "t"),)),
        PathResult(nodes=(ent("s"), ent("m"), ent("s"), ent("t")), edges=(fact("s", "m"),) * 3),
    ]
    for path in broken:
        assert Isolation(OWN).admit_path(path, "s", "t") == PathResult(), path
    single = PathResult(nodes=(ent("s"),))
    assert Isolation(OWN).admit_path(single, "s", "s") == single
