"""Certifying dictgraph: one fixture, two contract classes, nothing else.

Run it with `python -m pytest docs/examples/dictgraph` (graphctx's contract plugin is loaded
automatically through its `pytest11` entry point).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from dictgraph import DictGraphStore

from graphctx.contracts.congruence import GraphCongruenceContract
from graphctx.contracts.graph import GraphStoreContract


@pytest.fixture
def dict_graph() -> Iterator[DictGraphStore]:
    """A fresh, empty store for every test (the contract writes to scopes unique to each test)."""
    store = DictGraphStore()
    store.ensure_schema()
    yield store
    store.close()


class TestDictGraph(GraphStoreContract):
    """Every template's semantics, isolation, injection, ordering, clamps and errors.

    The store lives in memory and declares `durable=False`, so it writes no `reopen_graph_store`
    hook: the reopen test skips, naming the capability and the hook. A store that keeps its data
    would add that fixture (open the same location again) next to `graph_store`."""

    @pytest.fixture
    def graph_store(self, dict_graph: DictGraphStore) -> DictGraphStore:
        return dict_graph


class TestDictGraphCongruence(GraphCongruenceContract):
    """The same answers as the reference SQLite store, probe for probe, on identical data."""

    @pytest.fixture
    def graph_store(self, dict_graph: DictGraphStore) -> DictGraphStore:
        return dict_graph
