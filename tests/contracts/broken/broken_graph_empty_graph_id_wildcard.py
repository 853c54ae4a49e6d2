"""Broken on purpose: `graph_id` "" is treated as "any graph" in hydration and exact lookup.

A store that maps the empty graph id to NULL, or writes `(?3 = '' OR graph_id = ?3)`, lets a tenant's
memory (graph_id "") see every shared code graph of the tenant. Graph-scoped reads are right.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping

from _shared import InMemorySqlite, TestControlSqlite, graph_factory  # noqa: F401

from graphctx.adapters.sqlite import SqliteGraphStore, codec
from graphctx.adapters.sqlite.db import Key, json_list
from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import rules
from graphctx.kernel import templates as t
from graphctx.kernel.dispatch import Handler
from graphctx.kernel.rules import unique

_GRAPH = "(?3 = '' OR e.graph_id = ?3)"  # the bug: '' matches every graph
_GET = f"""
SELECT e.* FROM json_each(?4) AS j
CROSS JOIN entities AS e ON e.tenant_id = ?1 AND e.namespace = ?2 AND {_GRAPH} AND e.id = j.value
ORDER BY j.key, e.graph_id
"""
_COLUMNS = {"id": "e.id", "qualified_name": "e.qualified_name", "name": "e.name_key"}
_FIND = f"""
SELECT e.*, MIN(j.key) AS vidx FROM json_each(?4) AS j
CROSS JOIN entities AS e ON e.tenant_id = ?1 AND e.namespace = ?2 AND {_GRAPH} AND {{column}} = j.value
GROUP BY e.graph_id, e.id ORDER BY e.id LIMIT ?5"""
_FIND_ALIAS = f"""
SELECT e.*, MIN(j.key) AS vidx FROM json_each(?4) AS j
CROSS JOIN aliases AS a ON a.tenant_id = ?1 AND a.namespace = ?2 AND a.alias_key = j.value
CROSS JOIN entities AS e ON e.tenant_id = ?1 AND e.namespace = ?2 AND {_GRAPH}
  AND e.graph_id = a.graph_id AND e.id = a.entity_id
GROUP BY e.graph_id, e.id ORDER BY e.id LIMIT ?5"""


def get(conn: sqlite3.Connection, key: Key, p: t.EntityGetParams, now: str) -> t.EntityList:
    rows = conn.execute(_GET, (*key, json_list(unique(p.ids))))
    return t.EntityList(entities=tuple(codec.entity(r) for r in rows))


def find(conn: sqlite3.Connection, key: Key, p: t.EntityFindExactParams, now: str) -> t.ExactMatches:
    def lookup(field: t.ExactField, probes: list[str], limit: int) -> list[tuple[t.Entity, int]]:
        sql = _FIND_ALIAS if field == "alias" else _FIND.format(column=_COLUMNS[field])
        return [(codec.entity(r), r["vidx"]) for r in conn.execute(sql, (*key, json_list(probes), limit))]

    return rules.find_exact(p, lookup)


class EmptyGraphIdWildcard(SqliteGraphStore):
    name = "sqlite-empty-graph-id-wildcard"

    def handlers(self) -> Mapping[str, Handler]:
        return {
            **super().handlers(),
            t.ENTITY_GET.name: self._bind(get),
            t.ENTITY_FIND_EXACT.name: self._bind(find),
        }


class TestBrokenEmptyGraphIdWildcard(InMemorySqlite, GraphStoreContract):
    store_class = EmptyGraphIdWildcard


create_graph_store = graph_factory(EmptyGraphIdWildcard)
