"""Broken on purpose: `entity.upsert` and `fact.upsert` read the stored version of every id of a batch
once, before writing, and count each item against it: a batch that names one id twice counts both as
created (or the repeat of a new version as updated). What is stored is right (the last version wins).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from _shared import InMemorySqlite, TestControlSqlite, graph_factory  # noqa: F401

from graphctx.adapters.sqlite import SqliteGraphStore, codec
from graphctx.adapters.sqlite.db import json_list
from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import templates as t
from graphctx.kernel.dispatch import Handler

_STORED = """SELECT * FROM {} WHERE tenant_id = ?1 AND namespace = ?2 AND graph_id = ?3
  AND id IN (SELECT value FROM json_each(?4))"""


class CountsAgainstBatchStart(SqliteGraphStore):
    name = "sqlite-upsert-counts-against-batch-start"

    def handlers(self) -> Mapping[str, Handler]:
        real = super().handlers()

        def counting(template: str, table: str, field: str, same: Any) -> Handler:
            def upsert(scope: Any, p: Any) -> Any:
                conn, key = self._current(), tuple(scope.as_dict().values())
                items = getattr(p, field)
                before = {
                    r["id"]: r
                    for r in conn.execute(_STORED.format(table), (*key, json_list(x.id for x in items)))
                }
                real[template](scope, p)  # written right, one after the other
                created = sum(
                    1 for x in items if x.id not in before
                )  # the bug: counted against the batch's start
                unchanged = sum(1 for x in items if x.id in before and same(before[x.id], x))
                return t.UpsertResult(
                    created=created, updated=len(items) - created - unchanged, unchanged=unchanged
                )

            return upsert

        return {
            **real,
            t.ENTITY_UPSERT.name: counting(t.ENTITY_UPSERT.name, "entities", "entities", codec.same_entity),
            t.FACT_UPSERT.name: counting(t.FACT_UPSERT.name, "facts", "facts", codec.same_fact),
        }


class TestBrokenCountsAgainstBatchStart(InMemorySqlite, GraphStoreContract):
    store_class = CountsAgainstBatchStart


create_graph_store = graph_factory(CountsAgainstBatchStart)
