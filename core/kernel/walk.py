"""The catalogue's traversal semantics, shared by every graph store.

A store supplies one scoped hop (frontier ids -> the steps leaving them) and a hydration (ids ->
entities); the breadth-first bookkeeping here decides which nodes a limit keeps, how ties break
and which shortest path wins, so every backend answers exactly alike.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from typing import NamedTuple

from graphctx.kernel.rules import fact_order
from graphctx.kernel.templates import Node, PathResult, Subgraph
from graphctx.model import Entity, Fact


class Step(NamedTuple):
    near: str  # the frontier endpoint
    far: str  # the endpoint the step reaches
    fact: Fact


class Hop(NamedTuple):
    steps: list[Step]  # sorted by step_order
    cut: int = 0  # edges the per-node cut left out
    found: Collection[str] | None = None  # the frontier ids that exist in the scope; None: all of them
    outside: frozenset[str] = frozenset()  # KeepingHopFn: the facts of the steps it left out


HopFn = Callable[[Sequence[str]], Hop]
"""Steps from the frontier along allowed, valid, non-literal facts to entities of the same scope."""
Keep = Callable[[Collection[str]], Collection[str]]
"""(the far ends a hop reached) -> those the walk keeps: the nodes it knows, the new ones it has room for."""
KeepingHopFn = Callable[[Sequence[str], Keep], Hop]
"""A HopFn told which far ends the walk keeps: it returns the steps to those and only the fact ids of
the others (`outside`), so a store reads and decodes whole edges only where the walk keeps them
(past a node limit, most of a second hop's). Optional: the walk uses the plain HopFn without one."""
Hydrate = Callable[[Sequence[str]], Iterable[Entity]]
"""The entities of the scope among the ids; absent ids are absent."""


def step_order(s: Step) -> tuple[tuple[str, str, str, str], str]:
    """The order of a hop's steps: catalogue edge order, then the frontier end."""
    return (fact_order(s.fact), s.near)


def neighbourhood(
    candidates: Sequence[str],
    *,
    depth: int,
    limit: int,
    hop: HopFn,
    hydrate: Hydrate,
    keeping_hop: KeepingHopFn | None = None,
) -> Subgraph:
    """BFS to `depth` hops. `limit` caps the nodes beyond the roots (roots do not count); at each hop
    the new nodes with the smallest ids are kept. `omitted` counts the steps (an edge followed from
    one frontier node) that a limit left out: the per-direction cut and edges to nodes over `limit`.
    The roots are the candidates the first hop finds in the scope."""
    roots: list[str] = []
    depth_of: dict[str, int] = {}
    edges: dict[str, Fact] = {}
    dropped: set[str] = set()
    cut = 0
    frontier = list(candidates)
    for d in range(1, depth + 1):
        if not frontier:
            break
        if d > 1 and keeping_hop is not None:  # the first hop also finds the roots: a plain one
            h = keeping_hop(frontier, _keeper(depth_of, limit - (len(depth_of) - len(roots))))
        else:
            h = hop(frontier)
        dropped.update(h.outside)  # empty from a plain hop
        if d == 1:
            roots = sorted(frontier if h.found is None else h.found)
            depth_of = dict.fromkeys(roots, 0)
        cut += h.cut
        reached = sorted({s.far for s in h.steps if s.far not in depth_of})
        room = limit - (len(depth_of) - len(roots))
        frontier = reached[: max(0, room)]
        depth_of.update(dict.fromkeys(frontier, d))
        for s in h.steps:
            if s.far in depth_of:
                edges.setdefault(s.fact.id, s.fact)
            else:
                dropped.add(s.fact.id)
    if not depth_of:
        return Subgraph()
    omitted = cut + len(dropped - edges.keys())
    entities = {e.id: e for e in hydrate(list(depth_of))}
    nodes = sorted(
        # an entity deleted between the hops and now is left out
        (Node.trusted(entity=entities[i], depth=d) for i, d in depth_of.items() if i in entities),
        key=lambda n: (n.depth, n.entity.id),
    )
    return Subgraph.trusted(
        nodes=tuple(nodes),
        edges=tuple(sorted(edges.values(), key=fact_order)),
        truncated=omitted > 0,
        omitted=omitted,
    )


def _keeper(depth_of: dict[str, int], room: int) -> Keep:
    """What `neighbourhood` keeps of a hop: the known nodes and the `room` smallest new ids."""

    def keep(reached: Collection[str]) -> Collection[str]:
        new = sorted({far for far in reached if far not in depth_of})
        return depth_of.keys() | new[: max(0, room)]

    return keep


def shortest_path(source: str, target: str, *, max_depth: int, hop: HopFn, hydrate: Hydrate) -> PathResult:
    """Layered BFS from the source, one hop per layer; among shortest paths, the smallest sequence
    of node ids wins."""
    ends = {e.id: e for e in hydrate([source, target])}
    if source not in ends or target not in ends:
        return PathResult()
    if source == target:
        return PathResult(nodes=(ends[source],))
    dist = {source: 0}
    forward: dict[str, list[Step]] = {}  # steps from a node at distance d to one at d + 1
    frontier = [source]
    for depth in range(1, max_depth + 1):
        for s in hop(frontier).steps:
            if dist.setdefault(s.far, depth) == depth:
                forward.setdefault(s.near, []).append(s)
        if target in dist:
            break
        frontier = sorted(n for n, d in dist.items() if d == depth)
        if not frontier:
            return PathResult()
    else:
        return PathResult()
    node_ids, path_edges = _walk(source, target, dist, forward)
    hydrated = {e.id: e for e in hydrate(node_ids)}
    if any(i not in hydrated for i in node_ids):  # an entity deleted between the hops and now
        return PathResult()
    return PathResult.trusted(nodes=tuple(hydrated[i] for i in node_ids), edges=tuple(path_edges))


def _walk(
    source: str, target: str, dist: dict[str, int], forward: dict[str, list[Step]]
) -> tuple[list[str], list[Fact]]:
    length = dist[target]
    # nodes that still reach the target in the remaining steps, found backwards from the target
    good = {target}
    for d in range(length - 1, -1, -1):
        good |= {n for n, nd in dist.items() if nd == d and any(s.far in good for s in forward.get(n, ()))}
    node_ids, path_edges = [source], []
    here = source
    for _ in range(length):
        # smallest next id keeps the id sequence smallest; between parallel edges, catalogue order
        step = min((s for s in forward[here] if s.far in good), key=lambda s: (s.far, fact_order(s.fact)))
        node_ids.append(step.far)
        path_edges.append(step.fact)
        here = step.far
    return node_ids, path_edges
