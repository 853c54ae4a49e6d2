"""Broken on purpose: `entity.find_exact` reports, as the `value` of a match, the last of the given
values that matched the entity (a dict from value to entity overwritten value by value; SQL's `MAX`
where the reference has `MIN`), not the first. One value per entity -- every test before 1.5 -- looks
right.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from _shared import InMemorySqlite, TestControlSqlite, graph_factory  # noqa: F401

from graphctx.adapters.sqlite import SqliteGraphStore
from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import templates as t
from graphctx.kernel.dispatch import Handler
from graphctx.kernel.rules import unique
from graphctx.model import Entity


def _matches(field: str, e: Entity, value: str) -> bool:
    if field == "id":
        return e.id == value
    if field == "qualified_name":
        return e.qualified_name == value
    if field == "name":
        return e.name.casefold() == value.casefold()
    return value.casefold() in {a.casefold() for a in e.aliases}


class ReportsLastValue(SqliteGraphStore):
    name = "sqlite-find-exact-reports-last-value"

    def handlers(self) -> Mapping[str, Handler]:
        real = super().handlers()

        def find(scope: Any, p: t.EntityFindExactParams) -> Any:
            found = real[t.ENTITY_FIND_EXACT.name](scope, p)
            values = unique(p.values)[::-1]  # the bug: the last given value wins
            return found.model_copy(
                update={
                    "matches": tuple(
                        m.model_copy(
                            update={"value": next(v for v in values if _matches(m.field, m.entity, v))}
                        )
                        for m in found.matches
                    )
                }
            )

        return {**real, t.ENTITY_FIND_EXACT.name: find}


class TestBrokenFindExactReportsLastValue(InMemorySqlite, GraphStoreContract):
    store_class = ReportsLastValue


create_graph_store = graph_factory(ReportsLastValue)
