"""The GraphStore contract, congruence with SQLite, and the read-trunk contract against a live TinkerPop
Gremlin Server (TinkerGraph) at GRAPHCTX_TEST_GREMLIN_URL. Collected only when that is set (see
conftest.py); the native server: compose/native/up gremlin-server."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from graphctx import registry
from graphctx.adapters.gremlin import ConnectionConfig, GremlinGraphStore
from graphctx.contracts.congruence import GraphCongruenceContract
from graphctx.contracts.graph import GraphStoreContract
from graphctx.contracts.retrieval import RetrievalContract
from graphctx.kernel import templates as t
from graphctx.kernel.stores import Stores, open_stores
from graphctx.scope import Scope
from graphctx.settings import Settings

URL = os.environ.get("GRAPHCTX_TEST_GREMLIN_URL", "ws://127.0.0.1:18183/gremlin")


def _open() -> GremlinGraphStore:
    store = GremlinGraphStore(ConnectionConfig(url=URL, pool_size=2))
    store.ensure_schema()
    return store


@pytest.fixture
def wipe_after(scope: Scope, other_scope: Scope, sibling_scope: Scope, graph_scope: Scope) -> Iterator[None]:
    """Clear the test's scopes afterwards: TinkerGraph has no indexes, so every scope-wide read scans
    the whole server and leftovers of earlier tests would slow every later one."""
    yield
    store = _open()
    try:
        for s in (scope, other_scope, sibling_scope, graph_scope):
            store.run(t.SCOPE_CLEAR, s, t.NoParams())
    finally:
        store.close()


class TestGremlinGraphStore(GraphStoreContract):
    """The store as the service opens it: entry point `gremlin`, GRAPHCTX_GREMLIN_URL. Scopes are
    unique per test, so the shared server needs no wiping."""

    @pytest.fixture
    def graph_store(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, wipe_after: None) -> Iterator[Any]:
        monkeypatch.setenv("GRAPHCTX_GREMLIN_URL", URL)
        store = registry.factory("graph", "gremlin")(Settings(data_dir=tmp_path))
        yield store
        store.close()

    @pytest.fixture
    def reopen_graph_store(self) -> Callable[[Any], Any]:
        """A new client on the same server: the data lives in the server, not in the client."""
        return lambda store: _open()


class TestGremlinCongruence(GraphCongruenceContract):
    @pytest.fixture
    def graph_store(self, wipe_after: None) -> Iterator[GremlinGraphStore]:
        store = _open()
        yield store
        store.close()


class TestGremlinRetrieval(RetrievalContract):
    """The read trunk over a Gremlin graph with the embedded lexical and vector indexes."""

    @pytest.fixture
    def stores(self, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, wipe_after: None) -> Stores:
        monkeypatch.setenv("GRAPHCTX_GREMLIN_URL", URL)
        return open_stores(Settings(data_dir=tmp_path / "data", embedder="hashing", graph_backend="gremlin"))
