"""Connections and transactions shared by the graph store and the journal.

Every statement in this package is a constant string with `?` / `?NNN` parameters; lists of values
are bound as one JSON array and unpacked with `json_each`, so no SQL text is ever built from data.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from graphctx import deadlines
from graphctx.scope import Scope

Key = tuple[str, str, str]
"""(tenant_id, namespace, graph_id): bound as ?1, ?2, ?3 in every scoped statement."""

MEMORY = ":memory:"

WRITER_CACHE_KIB = 65_536
"""Page cache of a connection that writes, used as it fills: hash-keyed ids land all over the
entity and fact B-trees and their indexes, and SQLite's 2 MiB default spilled their pages (50,000
code edges into a 20,000-entity scope: 1.33 s with the default, 0.97 s with this)."""


def connect(
    path: str | os.PathLike[str], *, durable_commits: bool, timeout_s: float, read_only: bool = False
) -> sqlite3.Connection:
    """One connection shared by threads; callers serialise access with their own lock.

    `read_only` opens an existing file without ever writing it (`mode=ro`); in a directory this
    process cannot write (no WAL index can be created there, and nobody can be writing) the file is
    opened `immutable`."""
    # isolation_level=None: we issue BEGIN/COMMIT ourselves so reads and writes get explicit transactions
    if read_only:
        conn = sqlite3.connect(
            _read_only_uri(path), uri=True, timeout=timeout_s, isolation_level=None, check_same_thread=False
        )
        conn.row_factory = sqlite3.Row
        return conn
    conn = sqlite3.connect(os.fspath(path), timeout=timeout_s, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute(f"PRAGMA cache_size = -{WRITER_CACHE_KIB:d}")
    if durable_commits:
        conn.execute("PRAGMA synchronous = FULL")
    else:
        conn.execute("PRAGMA synchronous = NORMAL")
    return conn


def _read_only_uri(path: str | os.PathLike[str]) -> str:
    target = Path(path).resolve()
    if not target.exists():
        raise sqlite3.OperationalError(f"{target} does not exist")
    mode = "ro" if os.access(target.parent, os.W_OK) else "ro&immutable=1"
    return f"{target.as_uri()}?mode={mode}"


@contextmanager
def locked(lock: deadlines.Lock, what: str) -> Iterator[None]:
    """Hold the store's thread lock, waited for within the operation's deadline."""
    deadlines.acquire(lock, what)
    try:
        yield
    finally:
        lock.release()


@contextmanager
def transaction(conn: sqlite3.Connection, *, write: bool, timeout_s: float | None = None) -> Iterator[None]:
    """One transaction. With `timeout_s` (the store's busy timeout), the wait for another process's
    lock is bounded by it or by what remains of the operation's deadline, whichever ends first (the
    connection is the caller's alone while it holds its lock, so setting it per transaction is safe;
    the PRAGMA's only variable is an integer computed here)."""
    if timeout_s is not None:
        what = "the sqlite database lock" if write else "a sqlite read"
        wait_ms = max(1, int(deadlines.budget(timeout_s, what) * 1000))
        conn.execute(f"PRAGMA busy_timeout = {wait_ms:d}")
    # IMMEDIATE takes the write lock up front, so a writer never fails half-way on a lock upgrade
    conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
    try:
        yield
    except BaseException:
        if conn.in_transaction:  # some errors (disk full, I/O) already rolled back
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def key(scope: Scope) -> Key:
    return (scope.tenant_id, scope.namespace, scope.graph_id)


def json_list(values: Iterable[object]) -> str:
    """Bind a list as one parameter; SQL reads it with json_each(?)."""
    return json.dumps(list(values), ensure_ascii=False)


def stamp(value: datetime) -> str:
    """ISO-8601 UTC with fixed width, so text comparison in SQL is time comparison. Naive means UTC."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).isoformat(timespec="microseconds")


def ts(value: datetime | None) -> str | None:
    return None if value is None else stamp(value)


def parse_ts(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value)
