"""Broken: scope.clear removes at most 1,000 entities (and the facts touching them) per call -- a
`DELETE ... LIMIT 1000` / `g.V().has(scope).limit(1000).drop()` meant to keep transactions small,
without the loop: a large scope is only partly cleared, and the count says so only implicitly."""

from __future__ import annotations

from typing import Any

from _shared import InMemorySqlite, TestControlSqlite, graph_factory  # noqa: F401

from graphctx.adapters.sqlite import SqliteGraphStore
from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import templates as t
from graphctx.scope import Scope


class ClearOneBatch(SqliteGraphStore):
    name = "sqlite-clear-one-batch"

    def run(self, template: t.Template[Any, Any], scope: Scope, params: Any) -> Any:
        if getattr(template, "name", None) == t.SCOPE_CLEAR.name:
            page = super().run(t.ENTITY_HASHES, scope, t.EntityHashesParams(limit=1000)).items
            r = super().run(t.ENTITY_DELETE, scope, t.EntityDeleteParams(ids=tuple(h.id for h in page)))
            return t.CountResult(count=r.deleted + r.facts_removed)
        return super().run(template, scope, params)


class TestBrokenClearOneBatch(InMemorySqlite, GraphStoreContract):
    store_class = ClearOneBatch


create_graph_store = graph_factory(ClearOneBatch)
