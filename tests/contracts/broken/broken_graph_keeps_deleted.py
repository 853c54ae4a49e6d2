"""Broken on purpose: `entity.delete` removes the facts and aliases but forgets the entity rows.

It still reports the right `deleted` count, and the deleted entity's facts and aliases are gone,
but the entity itself stays visible to hydration (`entity.get_by_ids`), to lookups by id and name,
to hash pages and statistics: a deleted entity comes back. The delete tests must catch it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping

from _shared import InMemorySqlite, TestControlSqlite  # noqa: F401  (the control runs here)

from graphctx.adapters.sqlite import SqliteGraphStore
from graphctx.adapters.sqlite.db import Key, json_list
from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import templates as t
from graphctx.kernel.dispatch import Handler
from graphctx.kernel.rules import unique

_IN_SCOPE = "tenant_id = ?1 AND namespace = ?2 AND graph_id = ?3"
_DELETE_FACTS = f"""
DELETE FROM facts WHERE {_IN_SCOPE}
  AND (subject_id IN (SELECT value FROM json_each(?4)) OR object_id IN (SELECT value FROM json_each(?4)))
"""
_DELETE_ALIASES = f"DELETE FROM aliases WHERE {_IN_SCOPE} AND entity_id IN (SELECT value FROM json_each(?4))"
_COUNT_ENTITIES = (
    f"SELECT COUNT(*) FROM entities WHERE {_IN_SCOPE} AND id IN (SELECT value FROM json_each(?4))"
)


def delete_keeping_rows(
    conn: sqlite3.Connection, key: Key, p: t.EntityDeleteParams, now: str
) -> t.DeleteResult:
    bound = (*key, json_list(unique(p.ids)))
    facts = conn.execute(_DELETE_FACTS, bound).rowcount
    conn.execute(_DELETE_ALIASES, bound)
    deleted = conn.execute(_COUNT_ENTITIES, bound).fetchone()[0]
    # the bug: no DELETE FROM entities
    return t.DeleteResult(deleted=deleted, facts_removed=facts)


class KeepsDeletedGraphStore(SqliteGraphStore):
    name = "sqlite-keeps-deleted"

    def handlers(self) -> Mapping[str, Handler]:
        return {**super().handlers(), t.ENTITY_DELETE.name: self._bind(delete_keeping_rows)}


class TestBrokenKeepsDeleted(InMemorySqlite, GraphStoreContract):
    store_class = KeepsDeletedGraphStore
