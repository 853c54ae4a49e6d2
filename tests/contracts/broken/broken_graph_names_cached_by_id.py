"""Broken on purpose: `entity.names` is served from a name cache keyed by entity id alone (added to
save round trips, forgetting that ids repeat across scopes and that entities are renamed): the first
scope to ask for an id fixes its name for every scope, for good.
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
from graphctx.scope import Scope


class NamesCachedById(SqliteGraphStore):
    name = "sqlite-names-cached-by-id"

    def handlers(self) -> Mapping[str, Handler]:
        real = super().handlers()
        cache: dict[str, t.EntityName] = self.__dict__.setdefault("_name_cache", {})

        def names(scope: Scope, p: t.EntityGetParams) -> Any:
            wanted = unique(p.ids)
            missing = tuple(i for i in wanted if i not in cache)
            if missing:
                for n in real[t.ENTITY_NAMES.name](scope, t.EntityGetParams(ids=missing)).names:  # type: ignore[attr-defined]
                    cache[n.id] = n
            return t.EntityNames(names=tuple(cache[i] for i in wanted if i in cache))

        return {**real, t.ENTITY_NAMES.name: names}


class TestBrokenNamesCachedById(InMemorySqlite, GraphStoreContract):
    store_class = NamesCachedById


create_graph_store = graph_factory(NamesCachedById)
