"""Broken on purpose: the neighbourhood's visited set holds only the roots, so a depth-1 node reached
again from another depth-1 node at the second hop is taken as new there: it moves to depth 2 (and
counts against `limit` a second time).
"""

from __future__ import annotations

from _shared import HookedTraversal, InMemorySqlite, TestControlHookedTraversal, graph_factory  # noqa: F401

from graphctx.contracts.graph import GraphStoreContract


class LaterHopMovesDepth(HookedTraversal):
    name = "sqlite-later-hop-moves-depth"

    def is_new(self, node: str, depth_of: dict[str, int], roots: list[str]) -> bool:
        return node not in roots  # the bug: nodes of earlier hops are not remembered


class TestBrokenLaterHopMovesDepth(InMemorySqlite, GraphStoreContract):
    store_class = LaterHopMovesDepth


create_graph_store = graph_factory(LaterHopMovesDepth)
