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
from graphctx.kernel.ports import CacheSizes, Capabilities
from graphctx.scope import Scope

from . import entities, facts, schema, scopes, traversal
from .db import MEMORY, WRITER_CACHE_KIB, Key, connect, key, locked, stamp, transaction
from .pool import ReadPool

# (connection, scope key, params, now as stored text) -> result
_Impl = Callable[[sqlite3.Connection, Key, Any, str], BaseModel]

_IMPLS: dict[str, _Impl] = {
    t.ENTITY_UPSERT.name: lambda c, k, p, now: entities.upsert(c, k, p.entities, now),
    t.ENTITY_GET.name: lambda c, k, p, now: entities.entity_list(c, k, p.ids),
    t.ENTITY_NAMES.name: lambda c, k, p, now: entities.names(c, k, p.ids),
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
READ_CONNECTIONS = 8
"""Most pooled read connections per store: enough for the threads of one serving process."""
PAGE_CACHE_BYTES = 2000 * 1024
"""SQLite's default page cache per reading connection (cache_size = -2000: 2000 KiB), an upper bound;
the writing connection's is WRITER_CACHE_KIB."""
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
    in its own transaction (writes BEGIN IMMEDIATE, reads one consistent snapshot).

    Writes go through one connection, one at a time. Reads of a file run in parallel, each on a
    connection of a pool (at most `read_connections`, opened on demand): WAL readers never wait for
    the writer nor for each other, and a read started after a write committed sees it. Waiting for a
    pooled connection held by another thread is queueing, in turn and bounded by the operation's
    deadline (ReadPool); waiting for a lock held by another process is bounded by `timeout_s` (SQLite's
    busy timeout) too. ":memory:" is one connection for everything.

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
        read_connections: int = READ_CONNECTIONS,
    ) -> None:
        self.path = os.fspath(path)
        self._clock = clock
        self._lock = threading.RLock()
        self._timeout_s = timeout_s
        self.read_only = read_only
        self._local = threading.local()
        self._closed = False
        self._max_readers = 0 if self.path == MEMORY else max(1, read_connections)
        self._readers = ReadPool(self._max_readers, f"sqlite graph store {self.path!r}")
        self._handlers = {name: self._bind(impl) for name, impl in _IMPLS.items()}
        try:
            self._conn: sqlite3.Connection | None = connect(
                self.path, durable_commits=False, timeout_s=timeout_s, read_only=read_only
            )
        except sqlite3.Error as exc:
            raise BackendUnavailable(f"sqlite graph store cannot open {self.path!r}: {exc}") from exc

    @property
    def capabilities(self) -> Capabilities:
        on_disk = self.path != MEMORY
        return Capabilities(
            templates=self.supported_templates(), durable=on_disk, concurrent_readers=on_disk, in_process=True
        )

    def ensure_schema(self) -> None:
        """Create what is missing (read-only: check the version only)."""
        with self._lock:
            conn = self._writer()
            try:
                with transaction(conn, write=not self.read_only):
                    schema.check(conn) if self.read_only else schema.ensure(conn)
            except sqlite3.Error as exc:
                raise BackendError(f"sqlite graph store cannot create its schema: {exc}") from exc

    def close(self) -> None:
        with self._lock:
            self._closed = True
            # readers first: the last connection to close checkpoints the WAL into the file, and a
            # read-only one cannot (an `immutable` open of a read-only volume reads the file alone)
            self._readers.close_all()
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def run(self, template: t.Template[Any, Any], scope: Scope, params: Any) -> Any:
        if self._closed:
            raise BackendUnavailable(f"sqlite graph store {self.path!r} is closed")
        write = getattr(template, "name", None) in _WRITES
        if write and self.read_only:
            raise ReadOnly(f"sqlite graph store {self.path!r} is open read-only; {template} is a write")
        if write or self._max_readers == 0:
            with locked(self._lock, "the sqlite graph store"):
                return self._run_on(self._writer(), template, scope, params, write)
        conn = self._borrow()
        try:
            return self._run_on(conn, template, scope, params, False)
        finally:
            self._readers.give_back(conn)

    def _run_on(self, conn: sqlite3.Connection, template: Any, scope: Scope, params: Any, write: bool) -> Any:
        self._local.conn = conn
        try:
            with transaction(conn, write=write, timeout_s=self._timeout_s):
                return super().run(template, scope, params)
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):  # another process holds the database
                raise BackendUnavailable(
                    f"sqlite graph store {self.path!r} is locked by another writer ({template}): {exc}"
                ) from exc
            raise BackendError(f"sqlite graph store failed on {template}: {exc}") from exc
        except sqlite3.Error as exc:
            raise BackendError(f"sqlite graph store failed on {template}: {exc}") from exc
        finally:
            self._local.conn = None

    def _borrow(self) -> sqlite3.Connection:
        """A pooled read connection, waited for in turn within the operation's deadline (ReadPool)."""

        def open_one() -> sqlite3.Connection:
            try:
                return connect(self.path, durable_commits=False, timeout_s=self._timeout_s, read_only=True)
            except sqlite3.Error as exc:
                raise BackendUnavailable(f"sqlite graph store cannot open {self.path!r}: {exc}") from exc

        return self._readers.borrow(open_one)

    def caches(self) -> CacheSizes:
        """Pooled read connections (each with SQLite's page cache, 2 MiB by default) and the main
        connection's (WRITER_CACHE_KIB when it writes): their bounds, filled as pages are read."""
        readers = len(self._readers)
        main = PAGE_CACHE_BYTES if self.read_only else WRITER_CACHE_KIB * 1024
        return {
            "sqlite_read_connections": {"entries": readers, "max_entries": self._max_readers},
            "sqlite_page_cache": {
                "bytes": readers * PAGE_CACHE_BYTES + (main if self._conn is not None else 0),
                "max_bytes": self._max_readers * PAGE_CACHE_BYTES + main,
            },
        }

    def handlers(self) -> Mapping[str, Handler]:
        return self._handlers

    def _bind(self, impl: _Impl) -> Handler:
        return lambda scope, params: impl(self._current(), key(scope), params, stamp(self._clock()))

    def _current(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            raise BackendUnavailable(f"sqlite graph store {self.path!r} is closed")
        return conn

    def _writer(self) -> sqlite3.Connection:
        if self._conn is None:
            raise BackendUnavailable(f"sqlite graph store {self.path!r} is closed")
        return self._conn
