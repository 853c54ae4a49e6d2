"""Bounded traversals: neighbourhood and shortest path, one scoped request per hop.

The breadth-first bookkeeping (which nodes a limit keeps, tie-breaking, the path walk) runs here,
exactly as in the reference store; the server does each hop: from the frontier vertices of the
scope, along allowed, valid, non-literal fact edges of the scope, to entity vertices of the scope,
with the per-node cut (ordered by the catalogue edge order) and its count done server-side.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, NamedTuple

from graphctx.model import Fact
from graphctx.scope import Scope
from graphctx.templates import Direction, NeighbourhoodParams, Node, PathResult, ShortestPathParams, Subgraph

from . import codec, keys
from .binding import Binder
from .context import Ctx
from .entities import get_by_ids
from .facts import fact_edges_from


class Step(NamedTuple):
    near: str  # the frontier endpoint
    far: str  # the endpoint the step reaches
    fact: Fact


def hop(
    ctx: Ctx,
    scope: Scope,
    frontier: Sequence[str],
    *,
    direction: Direction,
    edge_types: Sequence[str],
    when: Any,
    per_node: int | None = None,
    what: str,
    found: set[str] | None = None,
) -> tuple[list[Step], int]:
    """Steps from the frontier in catalogue edge order, and how many edges the per-node cut left
    out. One request for the whole frontier, both directions. `found`, if given, receives the
    frontier ids that exist in the scope (every one gets a row, with or without edges)."""
    d = ctx.dialect
    b = Binder()
    dirs = ("out", "in") if direction == "both" else (direction,)
    names = ["near"]
    t = d.entity_vertices(ctx.g, b, scope, list(frontier))
    bys: list[Any] = [keys.ENTITY_ID]
    for dir_ in dirs:
        kept = fact_edges_from(ctx, b, scope, dir_, edge_types, when)
        if per_node is not None:
            names.append(f"{dir_}_total")
            bys.append(fact_edges_from(ctx, b, scope, dir_, edge_types, when).count())
            kept = kept.order().by(keys.ORDER_KEY).limit(b.long(per_node))
        names.append(dir_)
        bys.append(kept.value_map(*keys.FACT_KEYS).fold())
    t = t.project(*names)
    for by in bys:
        t = t.by(by)
    steps: list[Step] = []
    cut = 0
    for row in ctx.read(t, b, what):
        near = row["near"]
        if found is not None:
            found.add(near)
        for dir_ in dirs:
            if per_node is not None:
                cut += max(0, row[f"{dir_}_total"] - per_node)
            for props in row[dir_]:
                f = codec.fact(codec.flat(props), d)
                far = f.object_id if dir_ == "out" else f.subject_id
                steps.append(Step(near, far or "", f))
    steps.sort(key=lambda s: (codec.fact_order(s.fact), s.near))
    return steps, cut


def neighbourhood(ctx: Ctx, scope: Scope, p: NeighbourhoodParams, now: datetime) -> Subgraph:
    """BFS to `depth` hops. `limit` caps the nodes beyond the roots; at each hop the new nodes with
    the smallest ids are kept. `omitted` counts the steps a limit left out. Requests: one per hop
    (the first also tells which roots exist), the hydration of the nodes."""
    when = ctx.dialect.encode_time(p.as_of or now)
    existing: set[str] = set()
    depth_of: dict[str, int] = {}
    edges: dict[str, Fact] = {}
    dropped: set[str] = set()
    cut = 0
    frontier = codec.unique(p.roots)
    roots: list[str] = []
    for depth in range(1, p.depth + 1):
        if not frontier:
            break
        steps, hop_cut = hop(
            ctx,
            scope,
            frontier,
            direction=p.direction,
            edge_types=p.edge_types,
            when=when,
            per_node=p.per_direction_limit,
            what="graph.neighbourhood",
            found=existing if depth == 1 else None,
        )
        if depth == 1:
            roots = sorted(existing)
            depth_of = dict.fromkeys(roots, 0)
        cut += hop_cut
        reached = sorted({s.far for s in steps if s.far not in depth_of})
        room = p.limit - (len(depth_of) - len(roots))
        frontier = reached[: max(0, room)]
        depth_of.update(dict.fromkeys(frontier, depth))
        for s in steps:
            if s.far in depth_of:
                edges.setdefault(s.fact.id, s.fact)
            else:
                dropped.add(s.fact.id)
    if not depth_of:
        return Subgraph()
    omitted = cut + len(dropped - edges.keys())
    entities = {e.id: e for e in get_by_ids(ctx, scope, list(depth_of))}
    nodes = sorted(
        (Node(entity=entities[i], depth=d) for i, d in depth_of.items() if i in entities),
        key=lambda n: (n.depth, n.entity.id),
    )
    return Subgraph(
        nodes=tuple(nodes),
        edges=tuple(sorted(edges.values(), key=codec.fact_order)),
        truncated=omitted > 0,
        omitted=omitted,
    )


def shortest_path(ctx: Ctx, scope: Scope, p: ShortestPathParams, now: datetime) -> PathResult:
    """Layered BFS from the source; among shortest paths, the smallest sequence of node ids wins.
    Requests: the two ends, one per layer (at most max_depth), the hydration of the path."""
    when = ctx.dialect.encode_time(p.as_of or now)
    ends = {e.id: e for e in get_by_ids(ctx, scope, [p.source, p.target])}
    if p.source not in ends or p.target not in ends:
        return PathResult()
    if p.source == p.target:
        return PathResult(nodes=(ends[p.source],))
    dist = {p.source: 0}
    forward: dict[str, list[Step]] = {}  # steps from a node at distance d to one at d + 1
    frontier = [p.source]
    for depth in range(1, p.max_depth + 1):
        steps, _ = hop(
            ctx,
            scope,
            frontier,
            direction=p.direction,
            edge_types=p.edge_types,
            when=when,
            what="graph.shortest_path",
        )
        for s in steps:
            if dist.setdefault(s.far, depth) == depth:
                forward.setdefault(s.near, []).append(s)
        if p.target in dist:
            break
        frontier = sorted(n for n, d in dist.items() if d == depth)
        if not frontier:
            return PathResult()
    else:
        return PathResult()
    return _walk(ctx, scope, source=p.source, target=p.target, dist=dist, forward=forward)


def _walk(
    ctx: Ctx,
    scope: Scope,
    *,
    source: str,
    target: str,
    dist: dict[str, int],
    forward: dict[str, list[Step]],
) -> PathResult:
    length = dist[target]
    # nodes that still reach the target in the remaining steps, found backwards from the target
    good = {target}
    for d in range(length - 1, -1, -1):
        good |= {n for n, nd in dist.items() if nd == d and any(s.far in good for s in forward.get(n, ()))}
    node_ids, path_edges = [source], []
    here = source
    for _ in range(length):
        # smallest next id keeps the id sequence smallest; between parallel edges, catalogue order
        step = min(
            (s for s in forward[here] if s.far in good), key=lambda s: (s.far, codec.fact_order(s.fact))
        )
        node_ids.append(step.far)
        path_edges.append(step.fact)
        here = step.far
    hydrated = {e.id: e for e in get_by_ids(ctx, scope, node_ids)}
    if any(i not in hydrated for i in node_ids):  # an entity deleted between the hops and now
        return PathResult()
    return PathResult(nodes=tuple(hydrated[i] for i in node_ids), edges=tuple(path_edges))
