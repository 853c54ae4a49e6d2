"""The GraphStore contract, congruence with SQLite and the read-trunk contract against Apache HugeGraph 1.5
in distributed mode: one PD, three store nodes (3 Raft replicas per partition) and two graph servers on
the hstore backend (`compose/native/up hugegraph-cluster`, then `source
compose/native/hugegraph-cluster/env.sh`). Collected only when GRAPHCTX_TEST_HGCLUSTER_URL is set (see
conftest.py).

Each contract runs through server 1 as the service opens it; the GraphStore contract runs a second
time with every write sent through server 1 and every read through server 2, so nothing a contract
test checks may depend on one server's memory. The cluster is shared: every test works in its own
unique scopes."""

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
from tests.contracts.split_store import SplitGraphStore

URL = os.environ.get("GRAPHCTX_TEST_HGCLUSTER_URL", "http://127.0.0.1:18641")
GREMLIN_URL = os.environ.get("GRAPHCTX_TEST_HGCLUSTER_GREMLIN_URL", "ws://127.0.0.1:18651/gremlin")
URL_2 = os.environ.get("GRAPHCTX_TEST_HGCLUSTER_URL_2", "http://127.0.0.1:18642")
GREMLIN_URL_2 = os.environ.get("GRAPHCTX_TEST_HGCLUSTER_GREMLIN_URL_2", "ws://127.0.0.1:18652/gremlin")


def _open(url: str = URL, gremlin_url: str = GREMLIN_URL) -> HugeGraphStore:
    store = HugeGraphStore(HugeGraphSettings(url=url, gremlin_url=gremlin_url, pool_size=2))
    store.ensure_schema()
    return store


@pytest.fixture
def cluster_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The adapter reads its own GRAPHCTX_HUGEGRAPH_* variables, as in a deployment."""
    monkeypatch.setenv("GRAPHCTX_HUGEGRAPH_URL", URL)
    monkeypatch.setenv("GRAPHCTX_HUGEGRAPH_GREMLIN_URL", GREMLIN_URL)
    monkeypatch.setenv("GRAPHCTX_HUGEGRAPH_POOL_SIZE", "2")


class TestHugeGraphClusterStore(GraphStoreContract):
    """The store as the service opens it (entry point `hugegraph`), on server 1 of the cluster."""

    @pytest.fixture
    def graph_store(self, cluster_env: None, tmp_path: Path) -> Iterator[Any]:
        store = registry.factory("graph", "hugegraph")(Settings(data_dir=tmp_path))
        yield store
        store.close()

    @pytest.fixture
    def reopen_graph_store(self) -> Callable[[Any], Any]:
        """A new client on the other server: the data lives in the cluster, not in a server."""
        return lambda store: _open(URL_2, GREMLIN_URL_2)


class TestHugeGraphClusterWriteOneReadOther(GraphStoreContract):
    """Every write through server 1, every read through server 2."""

    @pytest.fixture
    def graph_store(self) -> Iterator[SplitGraphStore]:
        store = SplitGraphStore(writer=_open(), reader=_open(URL_2, GREMLIN_URL_2))
        yield store
        store.close()

    @pytest.fixture
    def reopen_graph_store(self) -> Callable[[Any], Any]:
        return lambda store: SplitGraphStore(writer=_open(URL_2, GREMLIN_URL_2), reader=_open())


class TestHugeGraphClusterCongruence(GraphCongruenceContract):
    @pytest.fixture
    def graph_store(self) -> Iterator[HugeGraphStore]:
        store = _open()
        yield store
        store.close()


class TestHugeGraphClusterRetrieval(RetrievalContract):
    """The read trunk over the cluster, with embedded lexical (tantivy) and vector (qdrant-edge) indexes."""

    @pytest.fixture
    def stores(self, cluster_env: None, tmp_path: Path) -> Stores:
        return open_stores(
            Settings(data_dir=tmp_path / "data", embedder="hashing", graph_backend="hugegraph")
        )
