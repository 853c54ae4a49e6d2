"""Broken: entity.delete drops the id filter when the id list is empty (a query builder that adds
`AND id IN (...)` only for a non-empty list): delete([]) empties the scope."""

from __future__ import annotations

from typing import Any

from _shared import InMemorySqlite, TestControlSqlite, graph_factory  # noqa: F401

from graphctx.adapters.sqlite import SqliteGraphStore
from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import templates as t
from graphctx.scope import Scope


class DeleteEmptyWipes(SqliteGraphStore):
    name = "sqlite-delete-empty-wipes"

    def run(self, template: t.Template[Any, Any], scope: Scope, params: Any) -> Any:
        if getattr(template, "name", None) == t.ENTITY_DELETE.name and not params.ids:
            ids: list[str] = []
            after = ""
            while True:
                page = (
                    super().run(t.ENTITY_HASHES, scope, t.EntityHashesParams(after=after, limit=5000)).items
                )
                ids += [h.id for h in page]
                if len(page) < 5000:
                    break
                after = page[-1].id
            total = t.DeleteResult()
            for i in range(0, len(ids), 1000):
                r = super().run(template, scope, t.EntityDeleteParams(ids=tuple(ids[i : i + 1000])))
                total = t.DeleteResult(
                    deleted=total.deleted + r.deleted, facts_removed=total.facts_removed + r.facts_removed
                )
            return total
        return super().run(template, scope, params)


class TestBrokenDeleteEmptyWipes(InMemorySqlite, GraphStoreContract):
    store_class = DeleteEmptyWipes


create_graph_store = graph_factory(DeleteEmptyWipes)
