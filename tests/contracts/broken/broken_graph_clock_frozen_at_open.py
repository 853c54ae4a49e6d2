"""Broken on purpose: "now" is read once, when the store opens (a clock captured in the constructor, a
session-level timestamp): `as_of=None` and `valid_facts` keep answering for that instant.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from _shared import InMemorySqlite, TestControlSqlite, graph_factory  # noqa: F401

from graphctx.adapters.sqlite import SqliteGraphStore
from graphctx.contracts.graph import GraphStoreContract


class FrozenClock(SqliteGraphStore):
    name = "sqlite-frozen-clock"

    def __init__(self, path: Any, **kwargs: Any) -> None:
        opened = datetime.now(UTC)
        super().__init__(path, clock=lambda: opened, **kwargs)


class TestBrokenClockFrozenAtOpen(InMemorySqlite, GraphStoreContract):
    store_class = FrozenClock


create_graph_store = graph_factory(FrozenClock)
