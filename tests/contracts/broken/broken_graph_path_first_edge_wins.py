"""Broken on purpose: among shortest paths, `graph.shortest_path` takes at each step the first edge in
catalogue edge order (subject, predicate, object, id) instead of the smallest next node id. With one
predicate they agree; a `calls` edge to `b` then wins over a `uses` edge to `a`.
"""

from __future__ import annotations

from _shared import HookedTraversal, InMemorySqlite, TestControlHookedTraversal, graph_factory  # noqa: F401

from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import walk


class PathFirstEdgeWins(HookedTraversal):
    name = "sqlite-path-first-edge-wins"

    def next_step(self, steps: list[walk.Step]) -> walk.Step:
        return min(steps, key=walk.step_order)  # the bug: edge order, not the next node's id


class TestBrokenPathFirstEdgeWins(InMemorySqlite, GraphStoreContract):
    store_class = PathFirstEdgeWins


create_graph_store = graph_factory(PathFirstEdgeWins)
