"""Broken: fact.invalidate drops the id filter when the id list is empty: invalidate([], t) ends
every current fact of the scope."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping

from _shared import InMemorySqlite, TestControlSqlite, graph_factory  # noqa: F401

from graphctx.adapters.sqlite import SqliteGraphStore, facts
from graphctx.adapters.sqlite.db import Key, ts
from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import templates as t
from graphctx.kernel.dispatch import Handler

_ALL = """
UPDATE facts SET valid_to = MAX(?4, COALESCE(valid_from, ?4)), updated_at = ?5
WHERE tenant_id = ?1 AND namespace = ?2 AND graph_id = ?3
  AND (valid_to IS NULL OR valid_to > MAX(?4, COALESCE(valid_from, ?4)))
"""


def invalidate(conn: sqlite3.Connection, key: Key, p: t.FactInvalidateParams, now: str) -> t.CountResult:
    if not p.ids:
        return t.CountResult(count=conn.execute(_ALL, (*key, ts(p.valid_to), now)).rowcount)
    return facts.invalidate(conn, key, p, now)


class InvalidateEmptyEndsAll(SqliteGraphStore):
    name = "sqlite-invalidate-empty"

    def handlers(self) -> Mapping[str, Handler]:
        return {**super().handlers(), t.FACT_INVALIDATE.name: self._bind(invalidate)}


class TestBrokenInvalidateEmptyEndsAll(InMemorySqlite, GraphStoreContract):
    store_class = InvalidateEmptyEndsAll


create_graph_store = graph_factory(InvalidateEmptyEndsAll)
