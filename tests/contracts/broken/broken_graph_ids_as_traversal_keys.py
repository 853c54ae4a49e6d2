"""Broken on purpose: the store keys a write's side effects by the raw entity id (as a Gremlin
traversal that selects `row`, `ends` or `a` from a map it builds per request does): an entity whose
id is one of those words resolves to the store's own variable, and the write fails with a server
error. Every other id works, so every dataset of the 1.4 suite passes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from _shared import InMemorySqlite, TestControlSqlite, graph_factory  # noqa: F401

from graphctx.adapters.sqlite import SqliteGraphStore
from graphctx.contracts.graph import GraphStoreContract
from graphctx.errors import BackendError
from graphctx.kernel import templates as t
from graphctx.kernel.dispatch import Handler
from graphctx.scope import Scope

TRAVERSAL_KEYS = frozenset({"row", "rows", "ends", "a", "x", "it", "key", "value", "values", "label"})


class IdsAsTraversalKeys(SqliteGraphStore):
    name = "sqlite-ids-as-traversal-keys"

    def handlers(self) -> Mapping[str, Handler]:
        real = super().handlers()

        def upsert(scope: Scope, p: t.EntityUpsertParams) -> Any:
            clash = [e.id for e in p.entities if e.id in TRAVERSAL_KEYS]
            if clash:
                raise BackendError(f"server error: {clash[0]!r} resolved to a side-effect, not a vertex")
            return real[t.ENTITY_UPSERT.name](scope, p)

        return {**real, t.ENTITY_UPSERT.name: upsert}


class TestBrokenIdsAsTraversalKeys(InMemorySqlite, GraphStoreContract):
    store_class = IdsAsTraversalKeys


create_graph_store = graph_factory(IdsAsTraversalKeys)
