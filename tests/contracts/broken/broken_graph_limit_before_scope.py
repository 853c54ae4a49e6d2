"""Broken on purpose: the per-node edge limit is applied before the scope filter.

The hop query numbers each node's edges across every scope (a window or a `limit()` placed before the
scope's `has()`s), then keeps the scope's: another tenant's edges that sort first use up the
scope's `per_direction_limit` and are counted as cut. Without a limit nothing is wrong.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from typing import Any

from _shared import InMemorySqlite, TestControlSqlite, graph_factory  # noqa: F401

from graphctx.adapters.sqlite import SqliteGraphStore, codec
from graphctx.adapters.sqlite.db import Key, json_list, ts
from graphctx.adapters.sqlite.entities import get_by_ids
from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import templates as t
from graphctx.kernel import walk
from graphctx.kernel.dispatch import Handler

_HOP = """
SELECT * FROM (
  SELECT f.*, f.{near} AS near, f.{far} AS far,
         ROW_NUMBER() OVER (PARTITION BY f.{near} ORDER BY {order}) AS rn,
         COUNT(*) OVER (PARTITION BY f.{near}) AS total
  FROM facts AS f
  WHERE f.{near} IN (SELECT value FROM json_each(?4))
    AND (?5 = 0 OR f.predicate IN (SELECT value FROM json_each(?6)))
    AND (f.valid_from IS NULL OR f.valid_from <= ?7) AND (f.valid_to IS NULL OR f.valid_to > ?7)
) AS f
JOIN entities AS s ON s.tenant_id = ?1 AND s.namespace = ?2 AND s.graph_id = ?3 AND s.id = f.subject_id
JOIN entities AS o ON o.tenant_id = ?1 AND o.namespace = ?2 AND o.graph_id = ?3 AND o.id = f.object_id
WHERE f.tenant_id = ?1 AND f.namespace = ?2 AND f.graph_id = ?3 AND f.rn <= ?8
"""


def _sql(direction: str) -> str:
    if direction == "out":
        return _HOP.format(near="subject_id", far="object_id", order="f.predicate, f.object_id, f.id")
    return _HOP.format(near="object_id", far="subject_id", order="f.subject_id, f.predicate, f.id")


def neighbourhood(conn: sqlite3.Connection, key: Key, p: t.NeighbourhoodParams, now: str) -> Any:
    as_of = ts(p.as_of) or now

    def hop(frontier: Sequence[str]) -> walk.Hop:
        steps, cut = [], 0
        bound = (
            *key,
            json_list(frontier),
            len(p.edge_types),
            json_list(p.edge_types),
            as_of,
            p.per_direction_limit,
        )
        for d in {"out": ("out",), "in": ("in",), "both": ("out", "in")}[p.direction]:
            for row in conn.execute(_sql(d), bound):
                cut += 1 if row["rn"] == 1 and row["total"] > p.per_direction_limit else 0
                steps.append(walk.Step(row["near"], row["far"], codec.fact(row)))
        steps.sort(key=walk.step_order)
        return walk.Hop(steps, cut)

    roots = [e.id for e in get_by_ids(conn, key, p.roots)]
    return walk.neighbourhood(
        roots, depth=p.depth, limit=p.limit, hop=hop, hydrate=lambda ids: get_by_ids(conn, key, ids)
    )


class LimitBeforeScope(SqliteGraphStore):
    name = "sqlite-limit-before-scope"

    def handlers(self) -> Mapping[str, Handler]:
        return {**super().handlers(), t.NEIGHBOURHOOD.name: self._bind(neighbourhood)}


class TestBrokenLimitBeforeScope(InMemorySqlite, GraphStoreContract):
    store_class = LimitBeforeScope


create_graph_store = graph_factory(LimitBeforeScope)
