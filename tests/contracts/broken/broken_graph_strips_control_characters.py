"""Broken on purpose: text is "sanitised" on write: C0 control characters (but tab and newline) are removed
from names, summaries and fact values. Printable text round-trips; BoundaryTests must catch it.
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


class SanitisingStore(SqliteGraphStore):
    name = "sqlite-sanitises"

    def handlers(self) -> Mapping[str, Handler]:
        real = super().handlers()
        return {
            **real,
            t.ENTITY_UPSERT.name: lambda scope, p: self._entities(real, scope, p),
            t.FACT_UPSERT.name: lambda scope, p: self._facts(real, scope, p),
        }

    def _entities(self, real: Mapping[str, Handler], scope: Scope, p: t.EntityUpsertParams) -> Any:
        clean = tuple(
            e.model_copy(
                update={
                    "name": _clean(e.name),
                    "summary": _clean(e.summary),
                    "aliases": tuple(_clean(a) for a in e.aliases),
                }
            )
            for e in p.entities
        )
        return real[t.ENTITY_UPSERT.name](scope, p.model_copy(update={"entities": clean}))

    def _facts(self, real: Mapping[str, Handler], scope: Scope, p: t.FactUpsertParams) -> Any:
        clean = tuple(
            f.model_copy(update={"value": _clean(f.value) if f.value else f.value}) for f in p.facts
        )
        return real[t.FACT_UPSERT.name](scope, p.model_copy(update={"facts": clean}))


def _clean(value: str) -> str:
    return "".join(c for c in value if c in "\t\n" or not (ord(c) < 32 or ord(c) == 127)) or value


class TestBrokenStripsControlCharacters(InMemorySqlite, GraphStoreContract):
    store_class = SanitisingStore


create_graph_store = graph_factory(SanitisingStore)
