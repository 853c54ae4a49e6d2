"""Bounded traversals: neighbourhood and shortest path, one scoped request per hop.

The breadth-first bookkeeping (which nodes a limit keeps, tie-breaking, the path walk) is
graphctx.kernel.walk, shared with every store; the server does each hop: from the frontier
vertices of the scope, along allowed, valid, non-literal fact edges of the scope, to entity
vertices of the scope, with the per-node cut (ordered by the catalogue edge order) and its count
done server-side.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from graphctx.kernel import walk as graph_walk
from graphctx.kernel.rules import unique
from graphctx.kernel.templates import Direction, NeighbourhoodParams, PathResult, ShortestPathParams, Subgraph
from graphctx.kernel.walk import Hop, Step, step_order
from graphctx.scope import Scope

from . import codec, keys
from .binding import Binder
from .context import Ctx
from .entities import get_by_ids
from .facts import fact_edges_from


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
) -> Hop:
    """Steps from the frontier in catalogue edge order, how many edges the per-node cut left out
    and which frontier ids exist in the scope (every one gets a row, with or without edges). One
    request for the whole frontier, both directions."""
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
    found: set[str] = set()
    for row in ctx.read(t, b, what):
        near = row["near"]
        found.add(near)
        for dir_ in dirs:
            if per_node is not None:
                cut += max(0, row[f"{dir_}_total"] - per_node)
            for props in row[dir_]:
                f = codec.fact(codec.flat(props), d)
                far = f.object_id if dir_ == "out" else f.subject_id
                steps.append(Step(near, far or "", f))
    steps.sort(key=step_order)
    return Hop(steps, cut, found)


def _hop_fn(
    ctx: Ctx,
    scope: Scope,
    p: NeighbourhoodParams | ShortestPathParams,
    now: datetime,
    what: str,
    per_node: int | None = None,
) -> graph_walk.HopFn:
    when = ctx.dialect.encode_time(p.as_of or now)
    return lambda frontier: hop(
        ctx,
        scope,
        frontier,
        direction=p.direction,
        edge_types=p.edge_types,
        when=when,
        per_node=per_node,
        what=what,
    )


def neighbourhood(ctx: Ctx, scope: Scope, p: NeighbourhoodParams, now: datetime) -> Subgraph:
    """BFS to `depth` hops (graph_walk.neighbourhood). Requests: one per hop (the first also tells
    which roots exist), the hydration of the nodes."""
    return graph_walk.neighbourhood(
        unique(p.roots),
        depth=p.depth,
        limit=p.limit,
        hop=_hop_fn(ctx, scope, p, now, "graph.neighbourhood", p.per_direction_limit),
        hydrate=lambda ids: get_by_ids(ctx, scope, ids),
    )


def shortest_path(ctx: Ctx, scope: Scope, p: ShortestPathParams, now: datetime) -> PathResult:
    """Layered BFS from the source (graph_walk.shortest_path). Requests: the two ends, one per
    layer (at most max_depth), the hydration of the path."""
    return graph_walk.shortest_path(
        p.source,
        p.target,
        max_depth=p.max_depth,
        hop=_hop_fn(ctx, scope, p, now, "graph.shortest_path"),
        hydrate=lambda ids: get_by_ids(ctx, scope, ids),
    )
