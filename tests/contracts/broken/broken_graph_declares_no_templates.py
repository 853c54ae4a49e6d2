"""Broken on purpose: the store translates every template but declares none (`Capabilities()` left
empty): every contract test skips by capability. The error tests (declared = translated) and the
verdict's minimum template set must catch it.
"""

from __future__ import annotations

from _shared import InMemorySqlite, TestControlSqlite, graph_factory  # noqa: F401

from graphctx.adapters.sqlite import SqliteGraphStore
from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel.ports import Capabilities


class DeclaresNothing(SqliteGraphStore):
    name = "sqlite-declares-nothing"

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(durable=False, concurrent_readers=False)


class TestBrokenDeclaresNoTemplates(InMemorySqlite, GraphStoreContract):
    store_class = DeclaresNothing


create_graph_store = graph_factory(DeclaresNothing)
