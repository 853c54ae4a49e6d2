"""Broken on purpose: `graph.shortest_path` follows the direction on the first hop only (`out()` on
the first step, `both()` after it); later hops walk edges either way. The neighbourhood is right.
"""

from __future__ import annotations

from typing import Any

from _shared import HookedTraversal, InMemorySqlite, TestControlHookedTraversal, graph_factory  # noqa: F401

from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import templates as t


class PathDirectionFirstHop(HookedTraversal):
    name = "sqlite-path-direction-first-hop"

    def hop_filters(self, p: Any, first_hop: bool) -> tuple[str, tuple[str, ...]]:
        if isinstance(p, t.ShortestPathParams) and not first_hop:
            return "both", p.edge_types  # the bug
        return super().hop_filters(p, first_hop)


class TestBrokenPathDirectionFirstHop(InMemorySqlite, GraphStoreContract):
    store_class = PathDirectionFirstHop


create_graph_store = graph_factory(PathDirectionFirstHop)
