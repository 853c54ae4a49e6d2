"""The embedded SQLite graph store: the reference GraphStore, translating every catalogue template."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel

from graphctx.clock import Clock, utc_now
from graphctx.errors import BackendError, BackendUnavailable, ReadOnly
from graphctx.kernel import templates as t
from graphctx.kernel.dispatch import Handler, TemplateDispatch
from graphctx.kernel.ports import Capabilities
from graphctx.scope import Scope

from . import entities, facts, schema, scopes, traversal
from .db import MEMORY, Key, connect, key, stamp, transaction

# (connection, scope key, params, now as stored text) -> result
_Impl = Callable[[sqlite3.Connection, Key, Any, str], BaseModel]

_IMPLS: dict[str, _Impl] = {
    t.ENTITY_UPSERT.name: lambda c, k, p, now: entities.upsert(c, k, p.entities, now),
    t.ENTITY_GET.name: lambda c, k, p, now: t.EntityList(entities=tuple(entities.get_by_ids(c, k, p.ids))),
    t.ENTITY_FIND_EXACT.name: lambda c, k, p, now: entities.find_exact(c, k, p),
    t.ENTITY_DELETE.name: lambda c, k, p, now: entities.delete(c, k, p.ids),
    t.ENTITY_HASHES.name: lambda c, k, p, now: entities.hashes(c, k, p),
    t.FACT_UPSERT.name: lambda c, k, p, now: facts.upsert(c, k, p.facts, now),
    t.FACT_INVALIDATE.name: facts.invalidate,
    t.FACTS_FROM_ROOTS.name: facts.from_roots,
    t.NEIGHBOURHOOD.name: traversal.neighbourhood,
    t.SHORTEST_PATH.name: traversal.shortest_path,
    t.SCOPE_STATS.name: lambda c, k, p, now: scopes.stats(c, k, now),
    t.SCOPE_CLEAR.name: lambda c, k, p, now: scopes.clear(c, k),
}
_WRITES = frozenset(
    {
        t.ENTITY_UPSERT.name,
        t.ENTITY_DELETE.name,
        t.FACT_UPSERT.name,
        t.FACT_INVALIDATE.name,
        t.SCOPE_CLEAR.name,
    }
)


class SqliteGraphStore(TemplateDispatch):
    """One SQLite file (WAL) or ":memory:". One object may be shared by threads: every template runs
    under a lock in its own transaction (writes BEGIN IMMEDIATE, reads one consistent snapshot).

    `clock` returns the current time; tests pass a fixed one for reproducible timestamps.
    """

    name = "sqlite"

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        timeout_s: float = 5.0,
        clock: Clock = utc_now,
        read_only: bool = False,
    ) -> None:
        self.path = os.fspath(path)
        self._clock = clock
        self._lock = threading.RLock()
        self.read_only = read_only
        try:
            self._conn: sqlite3.Connection | None = connect(
                self.path, durable_commits=False, timeout_s=timeout_s, read_only=read_only
            )
        except sqlite3.Error as exc:
            raise BackendUnavailable(f"sqlite graph store cannot open {self.path!r}: {exc}") from exc

    @property
    def capabilities(self) -> Capabilities:
        on_disk = self.path != MEMORY
        return Capabilities(templates=self.supported_templates(), durable=on_disk, concurrent_readers=on_disk)

    def ensure_schema(self) -> None:
        """Create what is missing (read-only: check the version only)."""
        with self._lock:
            conn = self._open()
            try:
                with transaction(conn, write=not self.read_only):
                    schema.check(conn) if self.read_only else schema.ensure(conn)
            except sqlite3.Error as exc:
                raise BackendError(f"sqlite graph store cannot create its schema: {exc}") from exc

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def run(self, template: t.Template[Any, Any], scope: Scope, params: Any) -> Any:
        with self._lock:
            conn = self._open()
            write = getattr(template, "name", None) in _WRITES
            if write and self.read_only:
                raise ReadOnly(f"sqlite graph store {self.path!r} is open read-only; {template} is a write")
            try:
                with transaction(conn, write=write):
                    return super().run(template, scope, params)
            except sqlite3.Error as exc:
                raise BackendError(f"sqlite graph store failed on {template}: {exc}") from exc

    def handlers(self) -> Mapping[str, Handler]:
        return {name: self._bind(impl) for name, impl in _IMPLS.items()}

    def _bind(self, impl: _Impl) -> Handler:
        return lambda scope, params: impl(self._open(), key(scope), params, stamp(self._clock()))

    def _open(self) -> sqlite3.Connection:
        if self._conn is None:
            raise BackendUnavailable(f"sqlite graph store {self.path!r} is closed")
        return self._conn
