"""Broken: instants are stamped by their wall clock, the UTC offset dropped (`strftime` without
`astimezone(UTC)`): as_of, invalidate's valid_to and a fact's valid_from/valid_to given as
10:00+02:00 are kept as 10:00Z."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from _shared import InMemorySqlite, TestControlSqlite, graph_factory  # noqa: F401

from graphctx.adapters.sqlite import SqliteGraphStore
from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import templates as t
from graphctx.scope import Scope


def wall(d: datetime | None) -> datetime | None:
    return None if d is None or d.tzinfo is None else d.replace(tzinfo=UTC)


class WallClockStore(SqliteGraphStore):
    name = "sqlite-wall-clock"

    def run(self, template: t.Template[Any, Any], scope: Scope, params: Any) -> Any:
        upd: dict[str, Any] = {}
        if hasattr(params, "as_of"):
            upd["as_of"] = wall(params.as_of)
        if isinstance(params, t.FactInvalidateParams):
            upd["valid_to"] = wall(params.valid_to)
        if isinstance(params, t.FactUpsertParams):
            upd["facts"] = tuple(
                f.model_copy(update={"valid_from": wall(f.valid_from), "valid_to": wall(f.valid_to)})
                for f in params.facts
            )
        if upd:
            params = params.model_copy(update=upd)
        return super().run(template, scope, params)


class TestBrokenWallClock(InMemorySqlite, GraphStoreContract):
    store_class = WallClockStore


create_graph_store = graph_factory(WallClockStore)
