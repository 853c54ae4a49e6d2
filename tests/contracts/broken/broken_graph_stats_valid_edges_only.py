"""Broken on purpose: `scope.stats` counts as valid only the facts between two entities (the count
walks edges), so facts with a literal value and no object entity are counted in `facts` but never in
`valid_facts`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping

from _shared import InMemorySqlite, TestControlSqlite, graph_factory  # noqa: F401

from graphctx.adapters.sqlite import SqliteGraphStore, scopes
from graphctx.adapters.sqlite.db import Key
from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import templates as t
from graphctx.kernel.dispatch import Handler

_VALID = """SELECT COUNT(*) FROM facts WHERE tenant_id = ?1 AND namespace = ?2 AND graph_id = ?3
  AND object_id IS NOT NULL
  AND (valid_from IS NULL OR valid_from <= ?4) AND (valid_to IS NULL OR valid_to > ?4)"""


def stats(conn: sqlite3.Connection, key: Key, p: t.NoParams, now: str) -> t.ScopeStats:
    real = scopes.stats(conn, key, now)
    (valid,) = conn.execute(_VALID, (*key, now)).fetchone()  # the bug: value-only facts left out
    return real.model_copy(update={"valid_facts": valid})


class StatsValidEdgesOnly(SqliteGraphStore):
    name = "sqlite-stats-valid-edges-only"

    def handlers(self) -> Mapping[str, Handler]:
        return {**super().handlers(), t.SCOPE_STATS.name: self._bind(stats)}


class TestBrokenStatsValidEdgesOnly(InMemorySqlite, GraphStoreContract):
    store_class = StatsValidEdgesOnly


create_graph_store = graph_factory(StatsValidEdgesOnly)
