"""Broken on purpose: a graph store that ignores the caller's limits.

`fact.from_roots`, `entity.find_exact` and `graph.neighbourhood` run as if `limit` (and the
neighbourhood's `per_direction_limit`) were unbounded: everything that matches comes back and
nothing is reported as truncated. Small answers are right, so only the tests that sit at a limit
-- the clamp and limit tests -- can catch it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from _shared import InMemorySqlite, TestControlSqlite  # noqa: F401  (the control runs here)

from graphctx.adapters.sqlite import SqliteGraphStore
from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import templates as t
from graphctx.kernel.dispatch import Handler
from graphctx.scope import Scope

UNBOUNDED = 1_000_000

# template -> the limit fields its handler forgets (model_copy skips validation, so no clamp applies)
_FORGOTTEN = {
    t.FACTS_FROM_ROOTS.name: ("limit",),
    t.ENTITY_FIND_EXACT.name: ("limit",),
    t.NEIGHBOURHOOD.name: ("limit", "per_direction_limit"),
}


class LimitlessGraphStore(SqliteGraphStore):
    name = "sqlite-limitless"

    def handlers(self) -> Mapping[str, Handler]:
        handlers = dict(super().handlers())
        for name, fields in _FORGOTTEN.items():
            handlers[name] = self._unbounded(handlers[name], fields)
        return handlers

    @staticmethod
    def _unbounded(handler: Handler, fields: tuple[str, ...]) -> Handler:
        def run(scope: Scope, params: Any) -> Any:
            return handler(scope, params.model_copy(update=dict.fromkeys(fields, UNBOUNDED)))

        return run


class TestBrokenLimitless(InMemorySqlite, GraphStoreContract):
    store_class = LimitlessGraphStore
