"""Broken on purpose: `entity.get_by_ids` hydrates at most 500 ids per call (an `IN (...)` list cut to the
driver's limit) and drops the rest without a word.
"""

from __future__ import annotations

from collections.abc import Mapping

from _shared import InMemorySqlite, TestControlSqlite, graph_factory  # noqa: F401

from graphctx.adapters.sqlite import SqliteGraphStore
from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import templates as t
from graphctx.kernel.dispatch import Handler


class HydrationCapped(SqliteGraphStore):
    name = "sqlite-in-list-500"

    def handlers(self) -> Mapping[str, Handler]:
        real = super().handlers()
        return {
            **real,
            t.ENTITY_GET.name: lambda scope, p: real[t.ENTITY_GET.name](
                scope, p.model_copy(update={"ids": p.ids[:500]})
            ),
        }


class TestBrokenGetByIdsCap(InMemorySqlite, GraphStoreContract):
    store_class = HydrationCapped


create_graph_store = graph_factory(HydrationCapped)
