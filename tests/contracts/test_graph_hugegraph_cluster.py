"""The GraphStore contract, congruence with SQLite and the retrieval contract against Apache HugeGraph 1.5
in distributed mode: one PD, three store nodes (3 Raft replicas per partition) and two graph servers on
the hstore backend (`compose/native/up hugegraph-cluster`, then `source
compose/native/hugegraph-cluster/env.sh`). Collected only when GRAPHCTX_TEST_HGCLUSTER_URL is set (see
conftest.py).

The GraphStore contract's families that write and read back run with every write sent through
server 1 and every read through server 2, so nothing a contract test checks may depend on one
server's memory. The certificate of the cluster (`graphctx certify hugegraph` on server 1) is
test_certify_hugegraph_cluster.py, collected only when asked: it takes 20-60 minutes here. The
cluster is shared: every test works in its own unique scopes."""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from graphctx.adapters.hugegraph import HugeGraphSettings, HugeGraphStore
from graphctx.contracts.graph import GraphStoreContract
from graphctx.contracts.graph.durability import DurabilityTests
from graphctx.contracts.graph.entities import (
    EntityDeleteTests,
    EntityHashesTests,
    EntityUpsertTests,
    FindExactTests,
    GetByIdsTests,
)
from graphctx.contracts.graph.facts import FactInvalidateTests, FactsFromRootsTests, FactUpsertTests
from graphctx.contracts.graph.isolation import IsolationTests
from graphctx.contracts.graph.path import ShortestPathTests
from graphctx.contracts.graph.stats import ScopeStatsTests
from graphctx.contracts.graph.traversal import NeighbourhoodTests
from tests.contracts.split_store import SplitGraphStore

URL = os.environ.get("GRAPHCTX_TEST_HGCLUSTER_URL", "http://127.0.0.1:18641")
GREMLIN_URL = os.environ.get("GRAPHCTX_TEST_HGCLUSTER_GREMLIN_URL", "ws://127.0.0.1:18651/gremlin")
URL_2 = os.environ.get("GRAPHCTX_TEST_HGCLUSTER_URL_2", "http://127.0.0.1:18642")
GREMLIN_URL_2 = os.environ.get("GRAPHCTX_TEST_HGCLUSTER_GREMLIN_URL_2", "ws://127.0.0.1:18652/gremlin")
READ_TIMEOUT_S = 120.0
"""Requests wait as long as the cluster's servers let them run (evaluationTimeout 120 s in
compose/native/hugegraph-cluster): on two cores shared by six JVMs a scan took over 30 s under load."""


SCHEMA_LOCK = Path(tempfile.gettempdir()) / "graphctx-hugegraph-cluster-schema.lock"
"""Held while a test process makes sure of the schema: on a fresh cluster two xdist workers creating
it at once each keep index builds in flight, and past the 4 schema workers of HugeGraph's distributed
task scheduler a build stays NEW for good (docs/operations.md, "Index builds"; CI on 2026-12-02)."""


def _open(url: str = URL, gremlin_url: str = GREMLIN_URL) -> HugeGraphStore:
    settings = HugeGraphSettings(url=url, gremlin_url=gremlin_url, pool_size=2, read_timeout_s=READ_TIMEOUT_S)
    store = HugeGraphStore(settings)
    with SCHEMA_LOCK.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        store.ensure_schema()
    return store


SPLIT_FAMILIES: tuple[type, ...] = (
    EntityUpsertTests,
    GetByIdsTests,
    FindExactTests,
    EntityDeleteTests,
    EntityHashesTests,
    FactUpsertTests,
    FactInvalidateTests,
    FactsFromRootsTests,
    IsolationTests,
    NeighbourhoodTests,
    ShortestPathTests,
    ScopeStatsTests,
    DurabilityTests,
)
"""The contract families whose tests write and then read back: what one server's memory could fake.
The rest (injection, ordering, errors, boundaries, clamps, lifecycle, a fresh store, clear) checks one
server's answer to one request; the certificate above runs all of it on server 1. For CI time the
split run is this subset; GRAPHCTX_CLUSTER_SPLIT=all runs the whole contract split (by hand). Being a
subset, the plugin's verdict line calls this class partial ("FAIL ...: not a whole contract bundle")
while every test passes: it is not a certification, the certificate above is."""
if os.environ.get("GRAPHCTX_CLUSTER_SPLIT") == "all":
    SPLIT_FAMILIES = (GraphStoreContract,)


class TestHugeGraphClusterWriteOneReadOther(*SPLIT_FAMILIES):  # type: ignore[misc]
    """Every write through server 1, every read through server 2."""

    @pytest.fixture
    def graph_store(self) -> Iterator[SplitGraphStore]:
        store = SplitGraphStore(writer=_open(), reader=_open(URL_2, GREMLIN_URL_2))
        yield store
        store.close()

    @pytest.fixture
    def reopen_graph_store(self) -> Callable[[Any], Any]:
        return lambda store: SplitGraphStore(writer=_open(URL_2, GREMLIN_URL_2), reader=_open())
