"""Broken on purpose: where two consecutive nodes of a shortest path are joined by several edges (of
several predicates, or in both directions), the path names the one of smallest fact id instead of the
first in catalogue edge order (what a Gremlin `path()` over edge ids would give).
"""

from __future__ import annotations

from _shared import HookedTraversal, InMemorySqlite, TestControlHookedTraversal, graph_factory  # noqa: F401

from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import walk


class ParallelEdgeById(HookedTraversal):
    name = "sqlite-path-parallel-edge-by-id"

    def next_step(self, steps: list[walk.Step]) -> walk.Step:
        return min(steps, key=lambda s: (s.far, s.fact.id))  # the bug: fact id, not catalogue order


class TestBrokenPathParallelEdgeById(InMemorySqlite, GraphStoreContract):
    store_class = ParallelEdgeById


create_graph_store = graph_factory(ParallelEdgeById)
