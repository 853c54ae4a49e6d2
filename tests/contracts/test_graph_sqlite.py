"""The GraphStore contract under plain pytest against the reference SQLite adapter in memory (the
file-based store, as the service opens it, is certified by `graphctx certify` in test_certificates.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from graphctx.adapters.sqlite import SqliteGraphStore
from graphctx.contracts.graph import GraphStoreContract


class TestSqliteGraphStoreInMemory(GraphStoreContract):
    """The in-memory store the congruence run uses as a candidate must pass the contract too. It
    declares durable=False, so it has no `reopen_graph_store` hook (the reopen test skips)."""

    @pytest.fixture
    def graph_store(self) -> Iterator[SqliteGraphStore]:
        store = SqliteGraphStore(":memory:")
        store.ensure_schema()
        yield store
        store.close()
