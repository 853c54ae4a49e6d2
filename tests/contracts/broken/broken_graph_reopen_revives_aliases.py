"""Broken on purpose: the alias index is rebuilt at open from a log that never records removals.

Every alias ever written is appended to a side table; `ensure_schema` (run at every open) re-adds
them all to the alias index. Within one open store everything is right -- a replace drops old
aliases -- but after `close()` and a reopen an alias the entity no longer has finds it again. Only the
reopen test covering every kind of write sees it (the store is on disk, with the reopen hook).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from _shared import OnDiskSqlite, TestControlSqliteOnDisk, graph_factory  # noqa: F401

from graphctx.adapters.sqlite import SqliteGraphStore
from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import templates as t
from graphctx.kernel.dispatch import Handler
from graphctx.scope import Scope

_LOG = """CREATE TABLE IF NOT EXISTS alias_log (
    tenant_id TEXT, namespace TEXT, graph_id TEXT, alias_key TEXT, entity_id TEXT,
    PRIMARY KEY (tenant_id, namespace, graph_id, alias_key, entity_id))"""
_APPEND = "INSERT OR IGNORE INTO alias_log VALUES (?1, ?2, ?3, ?4, ?5)"
_REBUILD = """INSERT OR IGNORE INTO aliases (tenant_id, namespace, graph_id, alias_key, entity_id)
SELECT l.* FROM alias_log AS l JOIN entities AS e
  ON e.tenant_id = l.tenant_id AND e.namespace = l.namespace AND e.graph_id = l.graph_id
  AND e.id = l.entity_id"""


class RevivesAliases(SqliteGraphStore):
    name = "sqlite-revives-aliases"

    def ensure_schema(self) -> None:
        super().ensure_schema()
        conn = self._writer()
        conn.execute(_LOG)
        conn.execute(_REBUILD)  # the bug: the log never forgets an alias

    def handlers(self) -> Mapping[str, Handler]:
        real = super().handlers()

        def upsert(scope: Scope, p: t.EntityUpsertParams) -> Any:
            result = real[t.ENTITY_UPSERT.name](scope, p)
            rows = [(*scope.as_dict().values(), a.casefold(), e.id) for e in p.entities for a in e.aliases]
            self._current().executemany(_APPEND, rows)
            return result

        return {**real, t.ENTITY_UPSERT.name: upsert}


class TestBrokenReopenRevivesAliases(OnDiskSqlite, GraphStoreContract):
    store_class = RevivesAliases


create_graph_store = graph_factory(RevivesAliases)
