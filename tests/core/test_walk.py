"""The shared BFS (graph_walk.neighbourhood): a store's optional KeepingHopFn changes what a hop
reads, never the answer."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from graphctx.kernel import walk
from graphctx.model import Entity, Fact


class Graph:
    """An in-memory scope: a random multigraph, hopped in both directions with a per-node cut."""

    def __init__(self, rng: random.Random, nodes: int, edges: int, per_node: int) -> None:
        self.ids = [f"n{i:02d}" for i in range(nodes)]
        self.entities = {i: Entity(id=i, name=i) for i in self.ids}
        self.facts = [
            Fact(
                subject_id=rng.choice(self.ids),
                predicate=rng.choice(("depends_on", "owned_by")),
                object_id=rng.choice(self.ids),
            )
            for _ in range(edges)
        ]
        self.per_node = per_node
        self.kept: list[tuple[list[str], set[str]]] = []  # each keeping hop: frontier, ends kept

    def hop(self, frontier: Sequence[str]) -> walk.Hop:
        steps: list[walk.Step] = []
        cut = 0
        for near in dict.fromkeys(frontier):
            for ends in (lambda f: (f.subject_id, f.object_id), lambda f: (f.object_id, f.subject_id)):
                mine = sorted((f for f in self.facts if ends(f)[0] == near), key=lambda f: (ends(f)[1], f.id))
                cut += max(0, len(mine) - self.per_node)
                steps += [walk.Step(near, str(ends(f)[1]), f) for f in mine[: self.per_node]]
        return walk.Hop(sorted(steps, key=walk.step_order), cut)

    def keeping_hop(self, frontier: Sequence[str], keep: walk.Keep) -> walk.Hop:
        full = self.hop(frontier)
        ends = set(keep({s.far for s in full.steps}))
        self.kept.append((list(frontier), ends))
        kept = [s for s in full.steps if s.far in ends]
        outside = frozenset(s.fact.id for s in full.steps if s.far not in ends)
        return walk.Hop(kept, full.cut, outside=outside)

    def hydrate(self, ids: Sequence[str]) -> list[Entity]:
        return [self.entities[i] for i in ids if i in self.entities]


@pytest.mark.parametrize("seed", range(60))
def test_a_keeping_hop_gives_the_same_neighbourhood(seed: int) -> None:
    rng = random.Random(seed)
    graph = Graph(rng, nodes=rng.randint(3, 30), edges=rng.randint(0, 80), per_node=rng.choice((1, 2, 5, 50)))
    roots = rng.sample(graph.ids, rng.randint(1, 4))
    for depth in (1, 2):
        for limit in (1, 2, 5, 200):
            plain = walk.neighbourhood(roots, depth=depth, limit=limit, hop=graph.hop, hydrate=graph.hydrate)
            thin = walk.neighbourhood(
                roots,
                depth=depth,
                limit=limit,
                hop=graph.hop,
                hydrate=graph.hydrate,
                keeping_hop=graph.keeping_hop,
            )
            assert thin == plain, (seed, depth, limit)


def test_a_keeping_hop_returns_only_the_steps_the_walk_keeps() -> None:
    """Roots r0, r1; r0 -> a, b, c; a -> d, e; b -> r1. With room for 2 nodes (a and b) the second
    hop keeps the steps back to known nodes and leaves out a -> d and a -> e; with room for 4 it
    keeps d (the smallest new id) and leaves out a -> e. The first hop is always a plain one."""
    graph = Graph(random.Random(0), nodes=0, edges=0, per_node=50)
    for i in ("r0", "r1", "a", "b", "c", "d", "e"):
        graph.entities[i] = Entity(id=i, name=i)
    graph.facts = [
        *(Fact(subject_id="r0", predicate="depends_on", object_id=o) for o in ("a", "b", "c")),
        *(Fact(subject_id="a", predicate="depends_on", object_id=o) for o in ("d", "e")),
        Fact(subject_id="b", predicate="depends_on", object_id="r1"),
    ]
    common = {"hop": graph.hop, "hydrate": graph.hydrate, "keeping_hop": graph.keeping_hop}

    got = walk.neighbourhood(["r0", "r1"], depth=2, limit=2, **common)  # type: ignore[arg-type]
    assert graph.kept == [(["a", "b"], {"r0", "r1", "a", "b"})]
    assert [n.entity.id for n in got.nodes] == ["r0", "r1", "a", "b"]
    assert len(got.edges) == 3 and got.omitted == 3  # r0 -> c; a -> d, a -> e

    graph.kept.clear()
    got = walk.neighbourhood(["r0", "r1"], depth=2, limit=4, **common)  # type: ignore[arg-type]
    assert graph.kept == [(["a", "b", "c"], {"r0", "r1", "a", "b", "c", "d"})]
    assert [n.entity.id for n in got.nodes] == ["r0", "r1", "a", "b", "c", "d"]
    assert got.omitted == 1  # a -> e

    graph.kept.clear()
    walk.neighbourhood(["r0", "r1"], depth=1, limit=1, **common)  # type: ignore[arg-type]
    assert graph.kept == []
