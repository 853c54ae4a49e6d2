"""Durable journal of index work the graph has committed and the indexes may not have yet."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import get_args

from graphctx.errors import BackendError, BackendUnavailable, InputError, ScopeError
from graphctx.kernel.ports import JournalEntry, JournalOp, PendingWrite
from graphctx.kernel.rules import usable
from graphctx.scope import Scope

from .db import connect, json_list, locked, stamp, transaction

# AUTOINCREMENT: a seq is never reused after completion, so a late complete() cannot drop new work.
_DDL = """
CREATE TABLE IF NOT EXISTS journal (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id TEXT NOT NULL, namespace TEXT NOT NULL, graph_id TEXT NOT NULL,
    entity_id TEXT NOT NULL,
    op TEXT NOT NULL CHECK (op IN ('upsert', 'delete')),
    recorded_at TEXT NOT NULL
)
"""
_RECORD = """
INSERT INTO journal (tenant_id, namespace, graph_id, entity_id, op, recorded_at)
VALUES (?1, ?2, ?3, ?4, ?5, ?6)
"""
_WRITES_DDL = """
CREATE TABLE IF NOT EXISTS writes (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id TEXT NOT NULL, namespace TEXT NOT NULL, graph_id TEXT NOT NULL,
    plan TEXT NOT NULL,
    recorded_at TEXT NOT NULL
)
"""
_PENDING_WRITES = "SELECT seq, tenant_id, namespace, graph_id, plan FROM writes ORDER BY seq LIMIT ?1"
_PENDING = "SELECT seq, tenant_id, namespace, graph_id, entity_id, op FROM journal ORDER BY seq LIMIT ?1"
_OPS: frozenset[str] = frozenset(get_args(JournalOp))


class SqliteJournal:
    """IndexJournal on its own SQLite file. Commits use synchronous=FULL: `record` returning means
    the entries survive a crash or power loss."""

    def __init__(
        self, path: str | os.PathLike[str], *, timeout_s: float = 5.0, read_only: bool = False
    ) -> None:
        self.path = os.fspath(path)
        self._lock = threading.RLock()
        self._timeout_s = timeout_s
        try:
            conn = connect(self.path, durable_commits=True, timeout_s=timeout_s, read_only=read_only)
        except sqlite3.Error as exc:
            raise BackendUnavailable(f"sqlite journal cannot open {self.path!r}: {exc}") from exc
        self._conn: sqlite3.Connection | None = conn
        try:
            if not read_only:
                with transaction(conn, write=True):
                    conn.execute(_DDL)
                    conn.execute(_WRITES_DDL)
        except sqlite3.Error as exc:
            self.close()
            raise BackendUnavailable(f"sqlite journal cannot set up {self.path!r}: {exc}") from exc

    def record(self, scope: Scope, entity_ids: Sequence[str], op: JournalOp) -> list[int]:
        if not isinstance(scope, Scope):
            raise ScopeError("the journal needs a Scope")
        if op not in _OPS:
            raise InputError(f"journal op must be one of {sorted(_OPS)}, got {str(op)[:40]!r}", field="op")
        if isinstance(entity_ids, str) or not all(usable(i) and i for i in entity_ids):
            raise InputError("journal entity ids must be a list of non-empty text ids", field="entity_ids")
        if not entity_ids:
            return []
        now = stamp(datetime.now(UTC))
        row = (scope.tenant_id, scope.namespace, scope.graph_id)
        with self._tx(write=True) as conn:
            return [_insert(conn, (*row, i, op, now)) for i in entity_ids]

    def complete(self, seqs: Sequence[int]) -> None:
        """Idempotent: completing an unknown or already completed seq is a no-op."""
        if isinstance(seqs, str) or not all(isinstance(s, int) and not isinstance(s, bool) for s in seqs):
            raise InputError("journal seqs must be a list of integers", field="seqs")
        if not seqs:
            return
        with self._tx(write=True) as conn:
            conn.execute(
                "DELETE FROM journal WHERE seq IN (SELECT value FROM json_each(?1))", (json_list(seqs),)
            )

    def pending(self, limit: int) -> list[JournalEntry]:
        """Oldest first."""
        if limit < 1:
            return []
        with self._tx(write=False) as conn:
            if not _has_tables(conn):
                return []
            rows = conn.execute(_PENDING, (limit,)).fetchall()
        return [JournalEntry(**dict(r)) for r in rows]

    def count_pending(self) -> int:
        """Entities awaiting index work plus write batches awaiting completion."""
        with self._tx(write=False) as conn:
            if not _has_tables(conn):
                return 0
            entries = int(conn.execute("SELECT COUNT(*) FROM journal").fetchone()[0])
            return entries + int(conn.execute("SELECT COUNT(*) FROM writes").fetchone()[0])

    def record_write(self, scope: Scope, plan: str) -> int:
        if not isinstance(scope, Scope):
            raise ScopeError("the journal needs a Scope")
        if not isinstance(plan, str) or not plan:
            raise InputError("a journaled write needs its plan as text", field="plan")
        row = (scope.tenant_id, scope.namespace, scope.graph_id, plan, stamp(datetime.now(UTC)))
        with self._tx(write=True) as conn:
            seq = conn.execute(
                "INSERT INTO writes (tenant_id, namespace, graph_id, plan, recorded_at) "
                "VALUES (?1, ?2, ?3, ?4, ?5)",
                row,
            ).lastrowid
        if seq is None:  # pragma: no cover - an INSERT into a rowid table always sets it
            raise BackendError("sqlite journal did not return a sequence number")
        return seq

    def complete_write(self, seq: int) -> None:
        if isinstance(seq, bool) or not isinstance(seq, int):
            raise InputError("a journaled write's seq is an integer", field="seq")
        with self._tx(write=True) as conn:
            conn.execute("DELETE FROM writes WHERE seq = ?1", (seq,))

    def pending_writes(self, limit: int) -> list[PendingWrite]:
        if limit < 1:
            return []
        with self._tx(write=False) as conn:
            if not _has_tables(conn):
                return []
            rows = conn.execute(_PENDING_WRITES, (limit,)).fetchall()
        return [PendingWrite(**dict(r)) for r in rows]

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    @contextmanager
    def _tx(self, *, write: bool) -> Iterator[sqlite3.Connection]:
        with locked(self._lock, "the sqlite journal"):
            if self._conn is None:
                raise BackendUnavailable(f"sqlite journal {self.path!r} is closed")
            try:
                with transaction(self._conn, write=write, timeout_s=self._timeout_s):
                    yield self._conn
            except sqlite3.Error as exc:
                raise BackendError(f"sqlite journal failed: {exc}") from exc


def _has_tables(conn: sqlite3.Connection) -> bool:
    """A read-only open of a journal no writer has set up yet sees no tables: nothing pending."""
    row = conn.execute("SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'writes'")
    return bool(row.fetchone()[0])


def _insert(conn: sqlite3.Connection, values: tuple[str, ...]) -> int:
    seq = conn.execute(_RECORD, values).lastrowid
    if seq is None:  # pragma: no cover - an INSERT into a rowid table always sets it
        raise BackendError("sqlite journal did not return a sequence number")
    return seq
