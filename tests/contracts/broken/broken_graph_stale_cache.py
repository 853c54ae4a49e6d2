"""Broken on purpose: a hydration cache in front of the graph that deletes never invalidate.

Only the tests that read an entity *before* deleting it can catch this (a test that loads, deletes
and then reads never fills the cache): `test_entity_delete_visible_to_reads_made_before` and
`test_scope_clear_visible_to_reads_made_before`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from _shared import InMemorySqlite

from graphctx.adapters.sqlite import SqliteGraphStore
from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import templates as t
from graphctx.kernel.ports import Capabilities
from graphctx.model import Entity
from graphctx.scope import Scope


class CachingGraphStore:
    """A GraphStore (the port is a Protocol) delegating to another one, with a read-through cache."""

    name = "sqlite+cache"

    def __init__(self, inner: SqliteGraphStore) -> None:
        self._inner = inner
        self._cache: dict[tuple[Scope, str], Entity] = {}

    @property
    def capabilities(self) -> Capabilities:
        return self._inner.capabilities

    def ensure_schema(self) -> None:
        self._inner.ensure_schema()

    def close(self) -> None:
        self._cache.clear()
        self._inner.close()

    def run(self, template: t.Template[Any, Any], scope: Scope, params: Any) -> Any:
        if template == t.ENTITY_GET and isinstance(scope, Scope) and isinstance(params, t.EntityGetParams):
            wanted = list(dict.fromkeys(params.ids))
            missing = tuple(i for i in wanted if (scope, i) not in self._cache)
            if missing:
                fetched = self._inner.run(t.ENTITY_GET, scope, t.EntityGetParams(ids=missing))
                self._cache.update({(scope, e.id): e for e in fetched.entities})
            return t.EntityList(
                entities=tuple(self._cache[scope, i] for i in wanted if (scope, i) in self._cache)
            )
        result = self._inner.run(template, scope, params)
        if template == t.ENTITY_UPSERT:
            for e in params.entities:
                self._cache.pop((scope, e.id), None)
        # the bug: entity.delete and scope.clear leave the cached entities in place
        return result


class TestBrokenStaleCache(GraphStoreContract):
    @pytest.fixture
    def graph_store(self) -> Iterator[CachingGraphStore]:
        store = CachingGraphStore(SqliteGraphStore(":memory:"))
        store.ensure_schema()
        yield store
        store.close()


class TestControlCacheless(InMemorySqlite, GraphStoreContract):
    """The same contract on the store without the cache."""
