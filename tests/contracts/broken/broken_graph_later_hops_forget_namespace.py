"""Broken on purpose: after the first hop, traversals bind the tenant and the graph id but not the
namespace -- so a sibling namespace of the same tenant leaks at the second hop.
"""

from __future__ import annotations

from typing import ClassVar

from _shared import InMemorySqlite, LaterHopsBind, TestControlSqlite, graph_factory  # noqa: F401

from graphctx.contracts.graph import GraphStoreContract


class NamespaceBlindLaterHops(LaterHopsBind):
    name = "sqlite-later-hops-forget-namespace"
    later_hops_bind: ClassVar[frozenset[str]] = frozenset({"tenant_id", "graph_id"})


class TestBrokenLaterHopsForgetNamespace(InMemorySqlite, GraphStoreContract):
    store_class = NamespaceBlindLaterHops


create_graph_store = graph_factory(NamespaceBlindLaterHops)
