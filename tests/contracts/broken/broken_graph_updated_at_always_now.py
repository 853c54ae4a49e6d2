"""Broken on purpose: the store ignores the `updated_at` it is given and stamps every row it writes
with its own clock (entities and facts). `updated_at` is set, later than `created_at` -- what the
timestamp tests checked before 1.5 -- but not the one the caller gave.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from _shared import InMemorySqlite, TestControlSqlite, graph_factory  # noqa: F401

from graphctx.adapters.sqlite import SqliteGraphStore
from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import templates as t
from graphctx.kernel.dispatch import Handler


class UpdatedAtAlwaysNow(SqliteGraphStore):
    name = "sqlite-updated-at-always-now"

    def handlers(self) -> Mapping[str, Handler]:
        real = super().handlers()

        def entities(scope: Any, p: t.EntityUpsertParams) -> Any:
            unstamped = tuple(e.model_copy(update={"updated_at": None}) for e in p.entities)  # the bug
            return real[t.ENTITY_UPSERT.name](scope, p.model_copy(update={"entities": unstamped}))

        def facts(scope: Any, p: t.FactUpsertParams) -> Any:
            unstamped = tuple(f.model_copy(update={"updated_at": None}) for f in p.facts)  # the bug
            return real[t.FACT_UPSERT.name](scope, p.model_copy(update={"facts": unstamped}))

        return {**real, t.ENTITY_UPSERT.name: entities, t.FACT_UPSERT.name: facts}


class TestBrokenUpdatedAtAlwaysNow(InMemorySqlite, GraphStoreContract):
    store_class = UpdatedAtAlwaysNow


create_graph_store = graph_factory(UpdatedAtAlwaysNow)
