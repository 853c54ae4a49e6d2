"""Broken on purpose: a replace keeps the stored `updated_at` as it keeps the stored `created_at` (both
columns left out of the UPDATE): an entity or fact changed later still says it was last updated when it
was created.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from _shared import InMemorySqlite, TestControlSqlite, graph_factory  # noqa: F401

from graphctx.adapters.sqlite import SqliteGraphStore
from graphctx.adapters.sqlite.db import json_list
from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import templates as t
from graphctx.kernel.dispatch import Handler

_IN = "tenant_id = ?1 AND namespace = ?2 AND graph_id = ?3"
_IDS = "(SELECT value FROM json_each(?4))"


class ReplaceKeepsUpdatedAt(SqliteGraphStore):
    name = "sqlite-replace-keeps-updated-at"

    def handlers(self) -> Mapping[str, Handler]:
        real = super().handlers()

        def keeping(template: str, table: str, field: str) -> Handler:
            def upsert(scope: Any, p: Any) -> Any:
                conn, key = self._current(), tuple(scope.as_dict().values())
                ids = json_list(x.id for x in getattr(p, field))
                select = f"SELECT id, updated_at FROM {table} WHERE {_IN} AND id IN {_IDS}"
                stored = list(conn.execute(select, (*key, ids)))
                result = real[template](scope, p)
                update = f"UPDATE {table} SET updated_at = ?5 WHERE {_IN} AND id = ?4"
                for row in stored:  # the bug: the old stamp is written back
                    conn.execute(update, (*key, row["id"], row["updated_at"]))
                return result

            return upsert

        return {
            **real,
            t.ENTITY_UPSERT.name: keeping(t.ENTITY_UPSERT.name, "entities", "entities"),
            t.FACT_UPSERT.name: keeping(t.FACT_UPSERT.name, "facts", "facts"),
        }


class TestBrokenReplaceKeepsUpdatedAt(InMemorySqlite, GraphStoreContract):
    store_class = ReplaceKeepsUpdatedAt


create_graph_store = graph_factory(ReplaceKeepsUpdatedAt)
