"""Broken on purpose: `scope.clear` removes the scope's entities and facts but not its alias rows, and
creating an entity only adds its aliases (only a replace clears the old ones): after a clear, the old
aliases lead to whatever entity takes the same id again (alias vertices left behind by a clear behave
the same way). `entity.delete` is right.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Any

from _shared import InMemorySqlite, TestControlSqlite, graph_factory  # noqa: F401
from broken_graph_delete_keeps_aliases import KeepsAliases

from graphctx.adapters.sqlite import SqliteGraphStore
from graphctx.adapters.sqlite.db import Key
from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import templates as t
from graphctx.kernel.dispatch import Handler

_IN = "tenant_id = ?1 AND namespace = ?2 AND graph_id = ?3"


def clear(conn: sqlite3.Connection, key: Key, p: t.NoParams, now: str) -> t.CountResult:
    facts = conn.execute(f"DELETE FROM facts WHERE {_IN}", key).rowcount
    entities = conn.execute(f"DELETE FROM entities WHERE {_IN}", key).rowcount  # the bug: aliases stay
    return t.CountResult(count=facts + entities)


class ClearKeepsAliases(KeepsAliases):
    """KeepsAliases' create path (aliases only added); its delete is put right again."""

    name = "sqlite-clear-keeps-aliases"

    def handlers(self) -> Mapping[str, Handler]:
        real_delete = SqliteGraphStore.handlers(self)[t.ENTITY_DELETE.name]
        broken: dict[str, Any] = dict(super().handlers())
        return {**broken, t.ENTITY_DELETE.name: real_delete, t.SCOPE_CLEAR.name: self._bind(clear)}


class TestBrokenClearKeepsAliases(InMemorySqlite, GraphStoreContract):
    store_class = ClearKeepsAliases


create_graph_store = graph_factory(ClearKeepsAliases)
