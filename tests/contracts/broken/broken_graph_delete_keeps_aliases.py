"""Broken on purpose: `entity.delete` removes the entity and its facts but not its alias rows, and
creating an entity only adds its aliases (only a replace clears the old ones): the deleted entity's
aliases lead to whatever entity later takes the same id (alias vertices left behind in a graph
database behave the same way).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Any

from _shared import InMemorySqlite, TestControlSqlite, graph_factory  # noqa: F401

from graphctx.adapters.sqlite import SqliteGraphStore, codec
from graphctx.adapters.sqlite.db import Key, json_list, stamp, ts
from graphctx.adapters.sqlite.entities import _REPLACE
from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import templates as t
from graphctx.kernel.dispatch import Handler
from graphctx.kernel.rules import unique

_IN = "tenant_id = ?1 AND namespace = ?2 AND graph_id = ?3"
_FACTS_OUT = f"DELETE FROM facts WHERE {_IN} AND subject_id IN (SELECT value FROM json_each(?4))"
_FACTS_IN = f"DELETE FROM facts WHERE {_IN} AND object_id IN (SELECT value FROM json_each(?4))"
_ENTITIES = f"DELETE FROM entities WHERE {_IN} AND id IN (SELECT value FROM json_each(?4))"


def delete(conn: sqlite3.Connection, key: Key, p: t.EntityDeleteParams, now: str) -> Any:
    bound = (*key, json_list(unique(p.ids)))
    facts = conn.execute(_FACTS_OUT, bound).rowcount + conn.execute(_FACTS_IN, bound).rowcount
    deleted = conn.execute(_ENTITIES, bound).rowcount  # the bug: the aliases table is left as it was
    return t.DeleteResult(deleted=deleted, facts_removed=facts)


_EXISTS = f"SELECT 1 FROM entities WHERE {_IN} AND id = ?4"
_ADD_ALIAS = "INSERT OR IGNORE INTO aliases VALUES (?1, ?2, ?3, ?4, ?5)"


class KeepsAliases(SqliteGraphStore):
    name = "sqlite-delete-keeps-aliases"

    def handlers(self) -> Mapping[str, Handler]:
        real = super().handlers()

        def upsert(scope: Any, p: t.EntityUpsertParams) -> Any:
            conn, key = self._current(), tuple(scope.as_dict().values())
            new = [e for e in p.entities if conn.execute(_EXISTS, (*key, e.id)).fetchone() is None]
            replaced = [e for e in p.entities if e not in new]
            result = real[t.ENTITY_UPSERT.name](scope, p.model_copy(update={"entities": tuple(replaced)}))
            for e in new:  # the create path: insert, add aliases, clear nothing
                created = ts(e.created_at) or stamp(self._clock())
                conn.execute(_REPLACE, (*key, *codec.entity_row(e), created, ts(e.updated_at) or created))
                conn.executemany(_ADD_ALIAS, [(*key, a.casefold(), e.id) for a in e.aliases])
            return result.model_copy(update={"created": result.created + len(new)})

        return {**real, t.ENTITY_DELETE.name: self._bind(delete), t.ENTITY_UPSERT.name: upsert}


class TestBrokenDeleteKeepsAliases(InMemorySqlite, GraphStoreContract):
    store_class = KeepsAliases


create_graph_store = graph_factory(KeepsAliases)
