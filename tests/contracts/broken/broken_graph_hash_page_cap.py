"""Broken on purpose: `entity.hashes` returns at most 1,000 items whatever `limit` asks (a server-side page
size): reconcile's scan with 5,000 per page stops after the first short page and never sees the
rest of a large scope. BoundaryTests must catch it.
"""

from __future__ import annotations

from collections.abc import Mapping

from _shared import InMemorySqlite, TestControlSqlite, graph_factory  # noqa: F401

from graphctx.adapters.sqlite import SqliteGraphStore
from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import templates as t
from graphctx.kernel.dispatch import Handler


class PageCapped(SqliteGraphStore):
    name = "sqlite-hash-page-1000"

    def handlers(self) -> Mapping[str, Handler]:
        real = super().handlers()
        return {
            **real,
            t.ENTITY_HASHES.name: lambda scope, p: real[t.ENTITY_HASHES.name](
                scope, p.model_copy(update={"limit": min(p.limit, 1000)})
            ),
        }


class TestBrokenHashPageCap(InMemorySqlite, GraphStoreContract):
    store_class = PageCapped


create_graph_store = graph_factory(PageCapped)
