"""The GraphStore contract against the reference SQLite adapter, on disk and in memory."""

from __future__ import annotations

from collections.abc import Iterator
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


class TestSqliteGraphStoreInMemory(GraphStoreContract):
    """The in-memory store the congruence run uses as a candidate must pass the contract too."""

    @pytest.fixture
    def graph_store(self) -> Iterator[SqliteGraphStore]:
        store = SqliteGraphStore(":memory:")
        store.ensure_schema()
        yield store
        store.close()
