"""Broken on purpose: `fact.upsert` writes fact by fact and checks each endpoint as it goes: a batch with a
dangling endpoint raises `NotFound` -- after writing the facts before it.
"""

from __future__ import annotations

from typing import Any

from _shared import InMemorySqlite, TestControlSqlite, graph_factory  # noqa: F401

from graphctx.adapters.sqlite import SqliteGraphStore
from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import templates as t
from graphctx.scope import Scope


class PartialBatches(SqliteGraphStore):
    name = "sqlite-partial-batches"

    def run(self, template: t.Template[Any, Any], scope: Scope, params: Any) -> Any:
        if getattr(template, "name", None) != t.FACT_UPSERT.name or not isinstance(
            params, t.FactUpsertParams
        ):
            return super().run(template, scope, params)
        total = t.UpsertResult()
        for fact in params.facts:  # the bug: one transaction per fact, so a failure keeps the ones before
            one = super().run(template, scope, t.FactUpsertParams(facts=(fact,)))
            total = t.UpsertResult(
                created=total.created + one.created,
                updated=total.updated + one.updated,
                unchanged=total.unchanged + one.unchanged,
            )
        return total


class TestBrokenFactBatchNotAtomic(InMemorySqlite, GraphStoreContract):
    store_class = PartialBatches


create_graph_store = graph_factory(PartialBatches)
