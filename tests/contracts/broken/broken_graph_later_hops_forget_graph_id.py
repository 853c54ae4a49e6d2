"""Broken on purpose: after the first hop, traversals bind the tenant and the namespace but not the
graph id -- so a shared code graph (or the tenant's memory, seen from a code graph) leaks at the
second hop.
"""

from __future__ import annotations

from typing import ClassVar

from _shared import InMemorySqlite, LaterHopsBind, TestControlSqlite, graph_factory  # noqa: F401

from graphctx.contracts.graph import GraphStoreContract


class GraphIdBlindLaterHops(LaterHopsBind):
    name = "sqlite-later-hops-forget-graph-id"
    later_hops_bind: ClassVar[frozenset[str]] = frozenset({"tenant_id", "namespace"})


class TestBrokenLaterHopsForgetGraphId(InMemorySqlite, GraphStoreContract):
    store_class = GraphIdBlindLaterHops


create_graph_store = graph_factory(GraphIdBlindLaterHops)
