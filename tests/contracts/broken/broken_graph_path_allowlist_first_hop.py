"""Broken on purpose: `graph.shortest_path` applies the edge allowlist to the first hop only (the
filter sits on the first step of a hand-built traversal); later hops walk every predicate. The
neighbourhood is right.
"""

from __future__ import annotations

from typing import Any

from _shared import HookedTraversal, InMemorySqlite, TestControlHookedTraversal, graph_factory  # noqa: F401

from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import templates as t


class PathAllowlistFirstHop(HookedTraversal):
    name = "sqlite-path-allowlist-first-hop"

    def hop_filters(self, p: Any, first_hop: bool) -> tuple[str, tuple[str, ...]]:
        if isinstance(p, t.ShortestPathParams) and not first_hop:
            return p.direction, ()  # the bug
        return super().hop_filters(p, first_hop)


class TestBrokenPathAllowlistFirstHop(InMemorySqlite, GraphStoreContract):
    store_class = PathAllowlistFirstHop


create_graph_store = graph_factory(PathAllowlistFirstHop)
