"""Broken on purpose: `graph.neighbourhood`'s `limit` keeps the nodes a hop reached first, in the order
of the edges to them (catalogue edge order), instead of the nodes of smallest id. When every edge has
one predicate the two orders agree; with several they do not.
"""

from __future__ import annotations

from _shared import HookedTraversal, InMemorySqlite, TestControlHookedTraversal, graph_factory  # noqa: F401

from graphctx.contracts.graph import GraphStoreContract


class KeepsFirstReached(HookedTraversal):
    name = "sqlite-limit-keeps-first-reached"

    def keep(self, reached: list[str], room: int) -> list[str]:
        return reached[: max(0, room)]  # the bug: no sort by id


class TestBrokenLimitKeepsFirstReached(InMemorySqlite, GraphStoreContract):
    store_class = KeepsFirstReached


create_graph_store = graph_factory(KeepsFirstReached)
