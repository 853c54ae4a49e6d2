"""Broken on purpose: answers come back in a random order (an unseeded RNG).

Stands in for a backend that returns rows in storage or hash order: the right entities and facts,
in an order that changes from call to call. Path answers are left alone (their order is the path).
The ordering tests must catch it.
"""

from __future__ import annotations

import random
from typing import Any

from _shared import InMemorySqlite, TestControlSqlite  # noqa: F401  (the control runs here)

from graphctx.adapters.sqlite import SqliteGraphStore
from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import templates as t
from graphctx.scope import Scope

# result field -> the list in it whose order the catalogue fixes
_LISTS = {
    t.EntityList: "entities",
    t.ExactMatches: "matches",
    t.HashPage: "items",
    t.FactList: "facts",
}


def _shuffled(items: tuple[Any, ...]) -> tuple[Any, ...]:
    out = list(items)
    random.SystemRandom().shuffle(out)  # the bug: no seed, no sort
    return tuple(out)


class ShufflingGraphStore(SqliteGraphStore):
    name = "sqlite-shuffling"

    def run(self, template: t.Template[Any, Any], scope: Scope, params: Any) -> Any:
        result = super().run(template, scope, params)
        if isinstance(result, t.Subgraph):
            return result.model_copy(
                update={"nodes": _shuffled(result.nodes), "edges": _shuffled(result.edges)}
            )
        field = _LISTS.get(type(result))
        if field is not None:
            return result.model_copy(update={field: _shuffled(getattr(result, field))})
        return result


class TestBrokenShuffling(InMemorySqlite, GraphStoreContract):
    store_class = ShufflingGraphStore
