"""Broken on purpose: `fact.invalidate` sets `valid_to` whatever it was: a second invalidation with a later
instant lengthens validity, and invalidating an ended fact revives it until the new end.
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
"""


def invalidate(conn: sqlite3.Connection, key: Key, p: t.FactInvalidateParams, now: str) -> Any:
    cursor = conn.execute(_INVALIDATE, (*key, json_list(unique(p.ids)), ts(p.valid_to), now))
    return t.CountResult(count=cursor.rowcount)


class LengtheningInvalidate(SqliteGraphStore):
    name = "sqlite-invalidate-lengthens"

    def handlers(self) -> Mapping[str, Handler]:
        return {**super().handlers(), t.FACT_INVALIDATE.name: self._bind(invalidate)}


class TestBrokenInvalidateLengthens(InMemorySqlite, GraphStoreContract):
    store_class = LengtheningInvalidate


create_graph_store = graph_factory(LengtheningInvalidate)
