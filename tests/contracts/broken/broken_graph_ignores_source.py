"""Broken on purpose: `unchanged` is decided without `source`: re-writing an entity or fact with only a new
source is reported unchanged and the new source is dropped. LifecycleTests must catch it.
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


class SourceBlind(SqliteGraphStore):
    name = "sqlite-source-blind"

    def handlers(self) -> Mapping[str, Handler]:
        real = super().handlers()
        return {
            **real,
            t.ENTITY_UPSERT.name: lambda scope, p: self._entities(real, scope, p),
            t.FACT_UPSERT.name: lambda scope, p: self._facts(real, scope, p),
        }

    def _entities(self, real: Mapping[str, Handler], scope: Scope, p: t.EntityUpsertParams) -> Any:
        stored = {
            e.id: e
            for e in real[t.ENTITY_GET.name](
                scope, t.EntityGetParams(ids=tuple(e.id for e in p.entities[:1000]))
            ).entities
        }
        same = tuple(
            e.model_copy(update={"source": stored[e.id].source}) if e.id in stored else e for e in p.entities
        )
        return real[t.ENTITY_UPSERT.name](scope, p.model_copy(update={"entities": same}))

    def _facts(self, real: Mapping[str, Handler], scope: Scope, p: t.FactUpsertParams) -> Any:
        roots = tuple(dict.fromkeys(f.subject_id for f in p.facts))[:64]
        stored = (
            {
                f.id: f
                for f in real[t.FACTS_FROM_ROOTS.name](
                    scope, t.FactsFromRootsParams(roots=roots, include_invalid=True, direction="out")
                ).facts
            }
            if roots
            else {}
        )
        same = tuple(
            f.model_copy(update={"source": stored[f.id].source}) if f.id in stored else f for f in p.facts
        )
        return real[t.FACT_UPSERT.name](scope, p.model_copy(update={"facts": same}))


class TestBrokenIgnoresSource(InMemorySqlite, GraphStoreContract):
    store_class = SourceBlind


create_graph_store = graph_factory(SourceBlind)
