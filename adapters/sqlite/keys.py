"""API keys on their own SQLite file: only a hash of each secret is stored."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from datetime import UTC, datetime

from graphctx.auth import AuthError, IssuedKey, Principal, hash_secret, new_key, parse_token, secret_matches
from graphctx.errors import BackendUnavailable

from .db import connect, transaction

_DDL = """
CREATE TABLE IF NOT EXISTS api_keys (
    key_id TEXT PRIMARY KEY,
    secret_hash TEXT NOT NULL,
    name TEXT NOT NULL,
    tenant_id TEXT NOT NULL,
    namespaces TEXT NOT NULL,
    graph_ids TEXT NOT NULL,
    created_at TEXT NOT NULL,
    revoked_at TEXT
)
"""
_SELECT = "SELECT key_id, secret_hash, name, tenant_id, namespaces, graph_ids, revoked_at FROM api_keys"
_BY_ID = _SELECT + " WHERE key_id = ?"
_ACTIVE = _SELECT + " WHERE revoked_at IS NULL ORDER BY key_id"
_INSERT = (
    "INSERT INTO api_keys (key_id, secret_hash, name, tenant_id, namespaces, graph_ids, created_at) "
    "VALUES (?, ?, ?, ?, ?, ?, ?)"
)


def _principal(row: sqlite3.Row) -> Principal:
    return Principal(
        name=row["name"],
        tenant_id=row["tenant_id"],
        namespaces=tuple(json.loads(row["namespaces"])),
        graph_ids=tuple(json.loads(row["graph_ids"])),
        key_id=row["key_id"],
    )


class SqliteKeyStore:
    """KeyStore (graphctx.kernel.ports). One message for every failed verification, so a caller cannot
    tell an unknown key from a revoked one or a wrong secret."""

    verify_in_loop = True
    """`verify` is one primary-key read of a local WAL database (a reader never waits for a writer,
    even another process's `keys revoke`) and a hash: tens of microseconds, less than handing the
    check to a worker thread and back (serve: 0.08 ms of CPU a request, 1.7 %)."""

    def __init__(self, path: str | os.PathLike[str], *, timeout_s: float = 5.0) -> None:
        self.path = os.fspath(path)
        self._lock = threading.Lock()
        try:
            self._conn = connect(self.path, durable_commits=True, timeout_s=timeout_s)
            with transaction(self._conn, write=True):
                self._conn.execute(_DDL)
        except sqlite3.Error as exc:
            raise BackendUnavailable(f"sqlite key store cannot open {self.path!r}: {exc}") from exc

    def create(self, principal: Principal) -> IssuedKey:
        issued = new_key()
        _, secret = parse_token(issued.token)
        now = datetime.now(UTC).isoformat()
        with self._lock, transaction(self._conn, write=True):
            self._conn.execute(
                _INSERT,
                (issued.key_id, hash_secret(secret), principal.name, principal.tenant_id,
                 json.dumps(list(principal.namespaces)), json.dumps(list(principal.graph_ids)), now),
            )  # fmt: skip
        return issued

    def verify(self, token: str) -> Principal:
        key_id, secret = parse_token(token)
        with self._lock:
            row = self._conn.execute(_BY_ID, (key_id,)).fetchone()
        if row is None or row["revoked_at"] is not None or not secret_matches(secret, row["secret_hash"]):
            raise AuthError("missing or invalid API key")
        return _principal(row)

    def revoke(self, key_id: str) -> bool:
        now = datetime.now(UTC).isoformat()
        with self._lock, transaction(self._conn, write=True):
            cur = self._conn.execute(
                "UPDATE api_keys SET revoked_at = ? WHERE key_id = ? AND revoked_at IS NULL", (now, key_id)
            )
        return cur.rowcount == 1

    def list(self) -> list[Principal]:
        with self._lock:
            rows = self._conn.execute(_ACTIVE).fetchall()
        return [_principal(r) for r in rows]

    def close(self) -> None:
        with self._lock:
            self._conn.close()
