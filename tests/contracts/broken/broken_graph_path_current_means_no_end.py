"""Broken on purpose: without `as_of`, `graph.shortest_path` takes "current" to mean "not ended"
(`valid_to IS NULL`): it walks facts that start in the future and skips facts that end in the future.
With `as_of` it is right, and so is the neighbourhood.
"""

from __future__ import annotations

from typing import Any

from _shared import HookedTraversal, InMemorySqlite, TestControlHookedTraversal, graph_factory  # noqa: F401

from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import templates as t

_END_OF_TIME = "9999-12-31T23:59:59.999999+00:00"  # valid_from <= it always; valid_to > it only when unset


class PathCurrentMeansNoEnd(HookedTraversal):
    name = "sqlite-path-current-means-no-end"

    def instant(self, p: Any, now: str) -> str:
        if isinstance(p, t.ShortestPathParams) and p.as_of is None:
            return _END_OF_TIME  # the bug
        return super().instant(p, now)


class TestBrokenPathCurrentMeansNoEnd(InMemorySqlite, GraphStoreContract):
    store_class = PathCurrentMeansNoEnd


create_graph_store = graph_factory(PathCurrentMeansNoEnd)
