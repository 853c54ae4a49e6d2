"""The graph schema. Every table is keyed on the scope first, so every lookup is a scoped index seek."""

from __future__ import annotations

import sqlite3

from graphctx.errors import BackendError

SCHEMA_VERSION = 2

DDL = (
    """CREATE TABLE IF NOT EXISTS schema_version (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        version INTEGER NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS entities (
        tenant_id TEXT NOT NULL, namespace TEXT NOT NULL, graph_id TEXT NOT NULL,
        id TEXT NOT NULL,
        name TEXT NOT NULL,
        name_key TEXT NOT NULL,
        type TEXT NOT NULL,
        aliases TEXT NOT NULL,
        summary TEXT NOT NULL,
        qualified_name TEXT,
        path TEXT,
        line_start INTEGER,
        line_end INTEGER,
        signature TEXT,
        source TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        search_text TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (tenant_id, namespace, graph_id, id)
    ) WITHOUT ROWID""",
    "CREATE INDEX IF NOT EXISTS entities_name ON entities (tenant_id, namespace, graph_id, name_key)",
    """CREATE INDEX IF NOT EXISTS entities_qualified_name
        ON entities (tenant_id, namespace, graph_id, qualified_name)""",
    """CREATE TABLE IF NOT EXISTS aliases (
        tenant_id TEXT NOT NULL, namespace TEXT NOT NULL, graph_id TEXT NOT NULL,
        alias_key TEXT NOT NULL,
        entity_id TEXT NOT NULL,
        PRIMARY KEY (tenant_id, namespace, graph_id, alias_key, entity_id)
    ) WITHOUT ROWID""",
    "CREATE INDEX IF NOT EXISTS aliases_entity ON aliases (tenant_id, namespace, graph_id, entity_id)",
    """CREATE TABLE IF NOT EXISTS facts (
        tenant_id TEXT NOT NULL, namespace TEXT NOT NULL, graph_id TEXT NOT NULL,
        id TEXT NOT NULL,
        subject_id TEXT NOT NULL,
        predicate TEXT NOT NULL,
        object_id TEXT,
        value TEXT,
        source TEXT NOT NULL,
        confidence REAL NOT NULL,
        valid_from TEXT,
        valid_to TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (tenant_id, namespace, graph_id, id)
    ) WITHOUT ROWID""",
    """CREATE INDEX IF NOT EXISTS facts_out
        ON facts (tenant_id, namespace, graph_id, subject_id, predicate, object_id)""",
    """CREATE INDEX IF NOT EXISTS facts_in
        ON facts (tenant_id, namespace, graph_id, object_id, predicate, subject_id)""",
)


_MIGRATIONS = {
    # version 1 had no indexed-only search text; entities without one keep their content hash
    1: ("ALTER TABLE entities ADD COLUMN search_text TEXT NOT NULL DEFAULT ''",),
}


def ensure(conn: sqlite3.Connection) -> None:
    """Create what is missing; refuse a file written by another schema version."""
    for statement in DDL:
        conn.execute(statement)
    row = conn.execute("SELECT version FROM schema_version WHERE id = 1").fetchone()
    if row is None:
        conn.execute("INSERT INTO schema_version (id, version) VALUES (1, ?1)", (SCHEMA_VERSION,))
    elif row["version"] in _MIGRATIONS:
        for statement in _MIGRATIONS[row["version"]]:
            conn.execute(statement)
        conn.execute("UPDATE schema_version SET version = ?1 WHERE id = 1", (SCHEMA_VERSION,))
    check(conn)


def check(conn: sqlite3.Connection) -> None:
    """Refuse a file written by another schema version (or none: not a graphctx graph)."""
    try:
        row = conn.execute("SELECT version FROM schema_version WHERE id = 1").fetchone()
    except sqlite3.OperationalError as exc:
        raise BackendError(f"not a graphctx graph (no schema version): {exc}") from exc
    if row is None:
        raise BackendError("not a graphctx graph (no schema version)")
    if row["version"] in _MIGRATIONS:
        raise BackendError(
            f"sqlite graph has schema version {row['version']}; a read-only open cannot migrate it to "
            f"{SCHEMA_VERSION}: run any write command (or `graphctx serve`) once"
        )
    if row["version"] != SCHEMA_VERSION:
        raise BackendError(
            f"sqlite graph has schema version {row['version']}; this graphctx expects {SCHEMA_VERSION}"
        )
