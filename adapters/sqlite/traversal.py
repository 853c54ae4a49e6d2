"""Bounded traversals: neighbourhood and shortest path, one scoped SQL query per hop and direction.

Each hop binds the scope again and joins both endpoints of every edge to entities of the same
scope, so a traversal can never step onto another tenant's node even if ids collide.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import NamedTuple

from graphctx.model import Fact
from graphctx.templates import Direction, NeighbourhoodParams, Node, PathResult, ShortestPathParams, Subgraph

from . import codec
from .db import Key, json_list, ts
from .entities import get_by_ids

# ?4 frontier ids, ?5/?6 edge allowlist (count, list), ?7 as_of, ?8 edges kept per frontier node.
# The window keeps the first ?8 edges of each frontier node in catalogue order and counts the rest.
_HOP_OUT = """
SELECT * FROM (
  SELECT f.*, f.subject_id AS near, f.object_id AS far,
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
_HOP_IN = """
SELECT * FROM (
  SELECT f.*, f.object_id AS near, f.subject_id AS far,
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
_UNLIMITED = 2**62


class Step(NamedTuple):
    near: str  # the frontier endpoint
    far: str  # the endpoint the step reaches
    fact: Fact


def hop(
    conn: sqlite3.Connection,
    key: Key,
    frontier: Sequence[str],
    *,
    direction: Direction,
    edge_types: Sequence[str],
    as_of: str,
    per_node: int = _UNLIMITED,
) -> tuple[list[Step], int]:
    """Steps from the frontier in catalogue edge order, and how many edges the per-node cut left out."""
    steps: list[Step] = []
    cut = 0
    queries = {"out": (_HOP_OUT,), "in": (_HOP_IN,), "both": (_HOP_OUT, _HOP_IN)}[direction]
    bound = (*key, json_list(frontier), len(edge_types), json_list(edge_types), as_of, per_node)
    for sql in queries:
        for row in conn.execute(sql, bound):
            if row["rn"] == 1:
                cut += max(0, row["total"] - per_node)
            steps.append(Step(row["near"], row["far"], codec.fact(row)))
    steps.sort(key=lambda s: (codec.fact_order(s.fact), s.near))
    return steps, cut


def neighbourhood(conn: sqlite3.Connection, key: Key, p: NeighbourhoodParams, now: str) -> Subgraph:
    """BFS to `depth` hops. `limit` caps the nodes beyond the roots (roots do not count); at each hop
    the new nodes with the smallest ids are kept. `omitted` counts the steps (an edge followed from
    one frontier node) that a limit left out: the per-direction cut and edges to nodes over `limit`."""
    as_of = ts(p.as_of) or now
    roots = sorted(e.id for e in get_by_ids(conn, key, p.roots))
    depth_of = dict.fromkeys(roots, 0)
    edges: dict[str, Fact] = {}
    dropped: set[str] = set()
    cut = 0
    frontier = roots
    for depth in range(1, p.depth + 1):
        if not frontier:
            break
        steps, hop_cut = hop(
            conn,
            key,
            frontier,
            direction=p.direction,
            edge_types=p.edge_types,
            as_of=as_of,
            per_node=p.per_direction_limit,
        )
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
    omitted = cut + len(dropped - edges.keys())
    entities = {e.id: e for e in get_by_ids(conn, key, list(depth_of))}
    nodes = sorted((Node(entity=entities[i], depth=d) for i, d in depth_of.items()), key=_node_order)
    return Subgraph(
        nodes=tuple(nodes),
        edges=tuple(sorted(edges.values(), key=codec.fact_order)),
        truncated=omitted > 0,
        omitted=omitted,
    )


def _node_order(node: Node) -> tuple[int, str]:
    return (node.depth, node.entity.id)


def shortest_path(conn: sqlite3.Connection, key: Key, p: ShortestPathParams, now: str) -> PathResult:
    """Layered BFS from the source; among shortest paths, the smallest sequence of node ids wins."""
    as_of = ts(p.as_of) or now
    ends = {e.id: e for e in get_by_ids(conn, key, [p.source, p.target])}
    if p.source not in ends or p.target not in ends:
        return PathResult()
    if p.source == p.target:
        return PathResult(nodes=(ends[p.source],))
    dist = {p.source: 0}
    forward: dict[str, list[Step]] = {}  # steps from a node at distance d to one at d + 1
    frontier = [p.source]
    for depth in range(1, p.max_depth + 1):
        steps, _ = hop(conn, key, frontier, direction=p.direction, edge_types=p.edge_types, as_of=as_of)
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
    return _walk(conn, key, source=p.source, target=p.target, dist=dist, forward=forward)


def _walk(
    conn: sqlite3.Connection,
    key: Key,
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
    hydrated = {e.id: e for e in get_by_ids(conn, key, node_ids)}
    return PathResult(nodes=tuple(hydrated[i] for i in node_ids), edges=tuple(path_edges))
