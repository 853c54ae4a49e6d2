"""Broken on purpose: text columns hold 1,000 characters (a `VARCHAR(1000)`): longer summaries, fact values
and selectors are cut on write, silently. BoundaryTests must catch it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from _shared import InMemorySqlite, TestControlSqlite, graph_factory  # noqa: F401

from graphctx.adapters.sqlite import SqliteGraphStore
from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import templates as t
from graphctx.kernel.dispatch import Handler
from graphctx.scope import Scope


class TruncatingStore(SqliteGraphStore):
    name = "sqlite-varchar-1000"

    def handlers(self) -> Mapping[str, Handler]:
        real = super().handlers()
        return {
            **real,
            t.ENTITY_UPSERT.name: lambda scope, p: self._entities(real, scope, p),
            t.FACT_UPSERT.name: lambda scope, p: self._facts(real, scope, p),
        }

    def _entities(self, real: Mapping[str, Handler], scope: Scope, p: t.EntityUpsertParams) -> Any:
        cut = tuple(
            e.model_copy(
                update={
                    k: _cut(getattr(e, k))
                    for k in ("summary", "qualified_name", "path", "signature", "source")
                }
            )
            for e in p.entities
        )
        return real[t.ENTITY_UPSERT.name](scope, p.model_copy(update={"entities": cut}))

    def _facts(self, real: Mapping[str, Handler], scope: Scope, p: t.FactUpsertParams) -> Any:
        cut = tuple(f.model_copy(update={"value": _cut(f.value), "source": _cut(f.source)}) for f in p.facts)
        return real[t.FACT_UPSERT.name](scope, p.model_copy(update={"facts": cut}))


def _cut(value: Any) -> Any:
    return value[:1000] if isinstance(value, str) else value


class TestBrokenTruncatesText(InMemorySqlite, GraphStoreContract):
    store_class = TruncatingStore


create_graph_store = graph_factory(TruncatingStore)
