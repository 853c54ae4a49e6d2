"""Broken on purpose: `fact.invalidate` ends a fact at the instant given even when that is before the fact's
`valid_from`: the row now holds `valid_to < valid_from`, which no reader can turn back into a
fact -- every read touching it fails. (The reference store did this before contract 1.2.)
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Any

from _shared import InMemorySqlite, TestControlSqlite, graph_factory  # noqa: F401

from graphctx.adapters.sqlite import SqliteGraphStore
from graphctx.adapters.sqlite.db import Key, json_list, ts
from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import templates as t
from graphctx.kernel.dispatch import Handler
from graphctx.kernel.rules import unique

_INVALIDATE = """
UPDATE facts SET valid_to = ?5, updated_at = ?6
WHERE tenant_id = ?1 AND namespace = ?2 AND graph_id = ?3 AND id IN (SELECT value FROM json_each(?4))
  AND (valid_to IS NULL OR valid_to > ?5)
"""


def invalidate(conn: sqlite3.Connection, key: Key, p: t.FactInvalidateParams, now: str) -> Any:
    cursor = conn.execute(_INVALIDATE, (*key, json_list(unique(p.ids)), ts(p.valid_to), now))
    return t.CountResult(count=cursor.rowcount)


class EndsBeforeStart(SqliteGraphStore):
    name = "sqlite-invalidate-before-start"

    def handlers(self) -> Mapping[str, Handler]:
        return {**super().handlers(), t.FACT_INVALIDATE.name: self._bind(invalidate)}


class TestBrokenInvalidateBeforeStart(InMemorySqlite, GraphStoreContract):
    store_class = EndsBeforeStart


create_graph_store = graph_factory(EndsBeforeStart)
