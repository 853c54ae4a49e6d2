"""Bounded traversals: neighbourhood and shortest path, one scoped SQL query per hop and direction.

Each hop binds the scope again and joins both endpoints of every edge to entities of the same
scope, so a traversal can never step onto another tenant's node even if ids collide.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from graphctx.kernel import walk as graph_walk
from graphctx.kernel.templates import Direction, NeighbourhoodParams, PathResult, ShortestPathParams, Subgraph
from graphctx.kernel.walk import Hop, Step, step_order
from graphctx.model import Fact

from . import codec, facts
from .db import Key, json_list, ts
from .entities import get_by_ids, ids_in_scope

# ?4 frontier ids, ?5/?6 edge allowlist (count, list), ?7 as_of, ?8 edges kept per frontier node.
# The window keeps the first ?8 edges of each frontier node in catalogue order and counts the rest.
_OUT_STEPS = """
SELECT * FROM (
  SELECT {columns}, f.subject_id AS near, f.object_id AS far,
         ROW_NUMBER() OVER (PARTITION BY f.subject_id ORDER BY f.predicate, f.object_id, f.id) AS rn,
         COUNT(*) OVER (PARTITION BY f.subject_id) AS total
  FROM facts AS f INDEXED BY facts_out
  JOIN entities AS s ON s.tenant_id = ?1 AND s.namespace = ?2 AND s.graph_id = ?3 AND s.id = f.subject_id
  JOIN entities AS o ON o.tenant_id = ?1 AND o.namespace = ?2 AND o.graph_id = ?3 AND o.id = f.object_id
  WHERE f.tenant_id = ?1 AND f.namespace = ?2 AND f.graph_id = ?3
    AND f.subject_id IN (SELECT value FROM json_each(?4))
    AND (?5 = 0 OR f.predicate IN (SELECT value FROM json_each(?6)))
    AND (f.valid_from IS NULL OR f.valid_from <= ?7) AND (f.valid_to IS NULL OR f.valid_to > ?7)
) WHERE rn <= ?8
"""
_IN_STEPS = """
SELECT * FROM (
  SELECT {columns}, f.object_id AS near, f.subject_id AS far,
         ROW_NUMBER() OVER (PARTITION BY f.object_id ORDER BY f.subject_id, f.predicate, f.id) AS rn,
         COUNT(*) OVER (PARTITION BY f.object_id) AS total
  FROM facts AS f INDEXED BY facts_in
  JOIN entities AS s ON s.tenant_id = ?1 AND s.namespace = ?2 AND s.graph_id = ?3 AND s.id = f.subject_id
  JOIN entities AS o ON o.tenant_id = ?1 AND o.namespace = ?2 AND o.graph_id = ?3 AND o.id = f.object_id
  WHERE f.tenant_id = ?1 AND f.namespace = ?2 AND f.graph_id = ?3
    AND f.object_id IN (SELECT value FROM json_each(?4))
    AND (?5 = 0 OR f.predicate IN (SELECT value FROM json_each(?6)))
    AND (f.valid_from IS NULL OR f.valid_from <= ?7) AND (f.valid_to IS NULL OR f.valid_to > ?7)
) WHERE rn <= ?8
"""
_HOP_OUT, _HOP_IN = _OUT_STEPS.format(columns="f.*"), _IN_STEPS.format(columns="f.*")
_HOPS = {"out": (_HOP_OUT,), "in": (_HOP_IN,), "both": (_HOP_OUT, _HOP_IN)}
# A keeping hop (every hop after the first) reads the id and ends of every step; whole rows come after,
# only for the steps the walk keeps.
_THIN_OUT, _THIN_IN = _OUT_STEPS.format(columns="f.id"), _IN_STEPS.format(columns="f.id")
_THIN_HOPS = {"out": (_THIN_OUT,), "in": (_THIN_IN,), "both": (_THIN_OUT, _THIN_IN)}
_UNLIMITED = 2**62


def hop(
    conn: sqlite3.Connection,
    key: Key,
    frontier: Sequence[str],
    *,
    direction: Direction,
    edge_types: Sequence[str],
    as_of: str,
    per_node: int = _UNLIMITED,
    built: dict[str, Fact] | None = None,
) -> Hop:
    """Steps from the frontier in catalogue edge order, and how many edges the per-node cut left out.

    `built` holds the facts a traversal already decoded, by id: an edge met again (from its other
    end, in the other direction or on the next hop) is the same fact, not decoded a second time."""
    built = {} if built is None else built
    steps: list[Step] = []
    cut = 0
    bound = (*key, json_list(frontier), len(edge_types), json_list(edge_types), as_of, per_node)
    for sql in _HOPS[direction]:
        for row in conn.execute(sql, bound):
            if row["rn"] == 1:
                cut += max(0, row["total"] - per_node)
            fact = built.get(row["id"])
            if fact is None:
                fact = built[row["id"]] = codec.fact(row)
            steps.append(Step(row["near"], row["far"], fact))
    steps.sort(key=step_order)
    return Hop(steps, cut)


def hop_keeping(
    conn: sqlite3.Connection,
    key: Key,
    frontier: Sequence[str],
    keep: graph_walk.Keep,
    *,
    direction: Direction,
    edge_types: Sequence[str],
    as_of: str,
    per_node: int,
    built: dict[str, Fact],
) -> Hop:
    """`hop` returning whole steps only to the far ends `keep` names (graph_walk.KeepingHopFn): the
    same rows, read thin (id and ends); the kept facts are then read whole in the same transaction."""
    rows: list[tuple[str, str, str]] = []
    cut = 0
    bound = (*key, json_list(frontier), len(edge_types), json_list(edge_types), as_of, per_node)
    for sql in _THIN_HOPS[direction]:
        for fact_id, near, far, rn, total in conn.execute(sql, bound).fetchall():
            if rn == 1:
                cut += max(0, total - per_node)
            rows.append((fact_id, near, far))
    kept_ends = keep({far for _, _, far in rows})
    kept = [r for r in rows if r[2] in kept_ends]
    outside = frozenset(i for i, _, far in rows if far not in kept_ends)
    missing = list(dict.fromkeys(i for i, _, _ in kept if i not in built))
    if missing:
        built.update(facts.by_ids(conn, key, missing))
    steps = [Step(near, far, built[i]) for i, near, far in kept]
    steps.sort(key=step_order)
    return Hop(steps, cut, outside=outside)


def neighbourhood(conn: sqlite3.Connection, key: Key, p: NeighbourhoodParams, now: str) -> Subgraph:
    """BFS to `depth` hops (graph_walk.neighbourhood), from the roots that exist in the scope."""
    built: dict[str, Fact] = {}
    rules = {
        "direction": p.direction,
        "edge_types": p.edge_types,
        "as_of": ts(p.as_of) or now,
        "per_node": p.per_direction_limit,
        "built": built,
    }
    return graph_walk.neighbourhood(
        ids_in_scope(conn, key, p.roots),  # every root the first hop gets exists
        depth=p.depth,
        limit=p.limit,
        hop=lambda frontier: hop(conn, key, frontier, **rules),  # type: ignore[arg-type]
        hydrate=lambda ids: get_by_ids(conn, key, ids),
        keeping_hop=lambda frontier, keep: hop_keeping(conn, key, frontier, keep, **rules),  # type: ignore[arg-type]
    )


def shortest_path(conn: sqlite3.Connection, key: Key, p: ShortestPathParams, now: str) -> PathResult:
    """Layered BFS from the source (graph_walk.shortest_path), one query per layer and direction."""
    as_of = ts(p.as_of) or now
    built: dict[str, Fact] = {}
    return graph_walk.shortest_path(
        p.source,
        p.target,
        max_depth=p.max_depth,
        hop=lambda frontier: hop(
            conn, key, frontier, direction=p.direction, edge_types=p.edge_types, as_of=as_of, built=built
        ),
        hydrate=lambda ids: get_by_ids(conn, key, ids),
    )
