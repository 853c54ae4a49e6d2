"""The GraphStore contract, congruence with SQLite, and the read-trunk contract against a live Apache
HugeGraph 1.5 server: REST at GRAPHCTX_TEST_HUGEGRAPH_URL, Gremlin at GRAPHCTX_TEST_HUGEGRAPH_GREMLIN_URL.
Collected only when the REST URL is set (see conftest.py); the native server: compose/native/up hugegraph.

The server is shared: every test works in its own unique scopes, so nothing is wiped between tests."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from graphctx import registry
from graphctx.adapters.hugegraph import HugeGraphSettings, HugeGraphStore
from graphctx.contracts.congruence import GraphCongruenceContract
from graphctx.contracts.graph import GraphStoreContract
from graphctx.contracts.retrieval import RetrievalContract
from graphctx.kernel.stores import Stores, open_stores
from graphctx.settings import Settings

URL = os.environ.get("GRAPHCTX_TEST_HUGEGRAPH_URL", "http://127.0.0.1:18080")
GREMLIN_URL = os.environ.get("GRAPHCTX_TEST_HUGEGRAPH_GREMLIN_URL", "ws://127.0.0.1:18182/gremlin")


def _open() -> HugeGraphStore:
    store = HugeGraphStore(HugeGraphSettings(url=URL, gremlin_url=GREMLIN_URL, pool_size=2))
    store.ensure_schema()
    return store


@pytest.fixture
def hugegraph_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The adapter reads its own GRAPHCTX_HUGEGRAPH_* variables, as in a deployment."""
    monkeypatch.setenv("GRAPHCTX_HUGEGRAPH_URL", URL)
    monkeypatch.setenv("GRAPHCTX_HUGEGRAPH_GREMLIN_URL", GREMLIN_URL)
    monkeypatch.setenv("GRAPHCTX_HUGEGRAPH_POOL_SIZE", "2")


class TestHugeGraphStore(GraphStoreContract):
    """The store as the service opens it: entry point `hugegraph`, schema bootstrapped over REST."""

    @pytest.fixture
    def graph_store(self, hugegraph_env: None, tmp_path: Path) -> Iterator[Any]:
        store = registry.factory("graph", "hugegraph")(Settings(data_dir=tmp_path))
        yield store
        store.close()

    @pytest.fixture
    def reopen_graph_store(self) -> Callable[[Any], Any]:
        """A new client on the same server: the data lives in the server, not in the client."""
        return lambda store: _open()


class TestHugeGraphCongruence(GraphCongruenceContract):
    @pytest.fixture
    def graph_store(self) -> Iterator[HugeGraphStore]:
        store = _open()
        yield store
        store.close()


class TestHugeGraphRetrieval(RetrievalContract):
    """The read trunk over HugeGraph with the embedded lexical (tantivy) and vector (qdrant-edge) indexes."""

    @pytest.fixture
    def stores(self, hugegraph_env: None, tmp_path: Path) -> Stores:
        return open_stores(
            Settings(data_dir=tmp_path / "data", embedder="hashing", graph_backend="hugegraph")
        )
