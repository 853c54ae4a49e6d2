"""The GraphStore contract against the reference SQLite adapter, on disk and in memory."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from graphctx import registry
from graphctx.adapters.sqlite import SqliteGraphStore
from graphctx.contracts.graph import GraphStoreContract
from graphctx.settings import Settings


class TestSqliteGraphStore(GraphStoreContract):
    """The file-based store, created the way the service creates it (entry point `sqlite`)."""

    @pytest.fixture
    def graph_store(self, tmp_path: Path) -> Iterator[Any]:
        store = registry.factory("graph", "sqlite")(Settings(data_dir=tmp_path / "graph"))
        yield store
        store.close()

    @pytest.fixture
    def reopen_graph_store(self, tmp_path: Path) -> Callable[[Any], Any]:
        """The same data directory opened again, as the service would after a restart."""
        return lambda store: registry.factory("graph", "sqlite")(Settings(data_dir=tmp_path / "graph"))


class TestSqliteGraphStoreInMemory(GraphStoreContract):
    """The in-memory store the congruence run uses as a candidate must pass the contract too. It
    declares durable=False, so it has no `reopen_graph_store` hook (the reopen test skips)."""

    @pytest.fixture
    def graph_store(self) -> Iterator[SqliteGraphStore]:
        store = SqliteGraphStore(":memory:")
        store.ensure_schema()
        yield store
        store.close()
