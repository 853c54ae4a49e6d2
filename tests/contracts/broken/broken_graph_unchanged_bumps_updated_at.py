"""Broken on purpose: every upsert writes the row's `updated_at` (the given one, or now), also for an
entity or fact it reports `unchanged`: re-indexing the same content moves every timestamp although
nothing changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from _shared import InMemorySqlite, TestControlSqlite, graph_factory  # noqa: F401

from graphctx.adapters.sqlite import SqliteGraphStore
from graphctx.adapters.sqlite.db import stamp, ts
from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import templates as t
from graphctx.kernel.dispatch import Handler

_IN = "tenant_id = ?1 AND namespace = ?2 AND graph_id = ?3"


class UnchangedBumpsUpdatedAt(SqliteGraphStore):
    name = "sqlite-unchanged-bumps-updated-at"

    def handlers(self) -> Mapping[str, Handler]:
        real = super().handlers()

        def stamping(template: str, table: str, field: str) -> Handler:
            def upsert(scope: Any, p: Any) -> Any:
                conn, key = self._current(), tuple(scope.as_dict().values())
                result = real[template](scope, p)
                now = stamp(self._clock())
                update = f"UPDATE {table} SET updated_at = ?5 WHERE {_IN} AND id = ?4"
                for x in getattr(p, field):  # the bug: unchanged rows are stamped too
                    conn.execute(update, (*key, x.id, ts(x.updated_at) or now))
                return result

            return upsert

        return {
            **real,
            t.ENTITY_UPSERT.name: stamping(t.ENTITY_UPSERT.name, "entities", "entities"),
            t.FACT_UPSERT.name: stamping(t.FACT_UPSERT.name, "facts", "facts"),
        }


class TestBrokenUnchangedBumpsUpdatedAt(InMemorySqlite, GraphStoreContract):
    store_class = UnchangedBumpsUpdatedAt


create_graph_store = graph_factory(UnchangedBumpsUpdatedAt)
