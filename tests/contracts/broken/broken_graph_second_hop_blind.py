"""Broken on purpose: traversals bind the scope on the first hop only.

The roots and their edges are the scope's; from the second hop on, the hop query joins facts and
entities of every tenant, namespace and graph (a Gremlin `both()` after the first step without the
scope's `has()`s). Single-hop answers are right; at depth 2 and in paths another scope's edges (and,
through them, the scope's own nodes it should not reach) leak. IsolationDepthTests must catch it.
"""

from __future__ import annotations

from typing import ClassVar

from _shared import InMemorySqlite, LaterHopsBind, TestControlSqlite, graph_factory  # noqa: F401

from graphctx.contracts.graph import GraphStoreContract


class SecondHopBlindGraphStore(LaterHopsBind):
    name = "sqlite-second-hop-blind"
    later_hops_bind: ClassVar[frozenset[str]] = frozenset()


class TestBrokenSecondHopBlind(InMemorySqlite, GraphStoreContract):
    store_class = SecondHopBlindGraphStore


create_graph_store = graph_factory(SecondHopBlindGraphStore)
