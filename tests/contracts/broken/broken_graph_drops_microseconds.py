"""Broken on purpose: instants are stored to the second (a DATETIME column, an epoch in seconds).

Every write truncates
`created_at`, `valid_from` and `valid_to` to whole seconds: validity is off by up to a second and
nothing round-trips. BoundaryTests must catch it.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from _shared import InMemorySqlite, TestControlSqlite, graph_factory  # noqa: F401

from graphctx.adapters.sqlite import SqliteGraphStore
from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import templates as t
from graphctx.kernel.dispatch import Handler
from graphctx.scope import Scope


class SecondsOnly(SqliteGraphStore):
    name = "sqlite-seconds-only"

    def handlers(self) -> Mapping[str, Handler]:
        real = super().handlers()
        return {
            **real,
            t.ENTITY_UPSERT.name: lambda scope, p: self._entities(real, scope, p),
            t.FACT_UPSERT.name: lambda scope, p: self._facts(real, scope, p),
            t.FACT_INVALIDATE.name: lambda scope, p: real[t.FACT_INVALIDATE.name](
                scope, p.model_copy(update={"valid_to": _s(p.valid_to)})
            ),
        }

    def _entities(self, real: Mapping[str, Handler], scope: Scope, p: t.EntityUpsertParams) -> Any:
        cut = tuple(
            e.model_copy(update={"created_at": _s(e.created_at), "updated_at": _s(e.updated_at)})
            for e in p.entities
        )
        return real[t.ENTITY_UPSERT.name](scope, p.model_copy(update={"entities": cut}))

    def _facts(self, real: Mapping[str, Handler], scope: Scope, p: t.FactUpsertParams) -> Any:
        cut = tuple(
            f.model_copy(
                update={k: _s(getattr(f, k)) for k in ("valid_from", "valid_to", "created_at", "updated_at")}
            )
            for f in p.facts
        )
        return real[t.FACT_UPSERT.name](scope, p.model_copy(update={"facts": cut}))


def _s(value: datetime | None) -> datetime | None:
    return None if value is None else value.replace(microsecond=0)


class TestBrokenDropsMicroseconds(InMemorySqlite, GraphStoreContract):
    store_class = SecondsOnly


create_graph_store = graph_factory(SecondsOnly)
