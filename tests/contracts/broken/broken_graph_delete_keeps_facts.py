"""Broken on purpose: `entity.delete` removes the entity and its aliases but leaves its facts. While the id is
gone, reads join facts to existing entities and hide them; re-create the id and its old facts
come back. The counts are still right.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Any

from _shared import InMemorySqlite, TestControlSqlite, graph_factory  # noqa: F401

from graphctx.adapters.sqlite import SqliteGraphStore
from graphctx.adapters.sqlite.db import Key, json_list
from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import templates as t
from graphctx.kernel.dispatch import Handler
from graphctx.kernel.rules import unique

_IN = "tenant_id = ?1 AND namespace = ?2 AND graph_id = ?3"
_COUNT_FACTS = f"""
SELECT COUNT(*) FROM facts WHERE {_IN}
  AND (subject_id IN (SELECT value FROM json_each(?4)) OR object_id IN (SELECT value FROM json_each(?4)))
"""
_ALIASES = f"DELETE FROM aliases WHERE {_IN} AND entity_id IN (SELECT value FROM json_each(?4))"
_ENTITIES = f"DELETE FROM entities WHERE {_IN} AND id IN (SELECT value FROM json_each(?4))"


def delete(conn: sqlite3.Connection, key: Key, p: t.EntityDeleteParams, now: str) -> Any:
    bound = (*key, json_list(unique(p.ids)))
    facts = conn.execute(_COUNT_FACTS, bound).fetchone()[0]  # the bug: counted, never deleted
    conn.execute(_ALIASES, bound)
    deleted = conn.execute(_ENTITIES, bound).rowcount
    return t.DeleteResult(deleted=deleted, facts_removed=facts)


class KeepsFacts(SqliteGraphStore):
    name = "sqlite-delete-keeps-facts"

    def handlers(self) -> Mapping[str, Handler]:
        return {**super().handlers(), t.ENTITY_DELETE.name: self._bind(delete)}


class TestBrokenDeleteKeepsFacts(InMemorySqlite, GraphStoreContract):
    store_class = KeepsFacts


create_graph_store = graph_factory(KeepsFacts)
