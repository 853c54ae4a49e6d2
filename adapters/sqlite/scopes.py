"""Scope-wide templates: statistics and clear."""

from __future__ import annotations

import sqlite3

from graphctx.kernel.templates import CountResult, ScopeStats

from .db import Key

_BY_TYPE = """
SELECT type, COUNT(*) AS n FROM entities WHERE tenant_id = ?1 AND namespace = ?2 AND graph_id = ?3
GROUP BY type ORDER BY type
"""
_FACTS = """
SELECT COUNT(*) AS n,
       COALESCE(SUM((valid_from IS NULL OR valid_from <= ?4)
                    AND (valid_to IS NULL OR valid_to > ?4)), 0) AS valid
FROM facts WHERE tenant_id = ?1 AND namespace = ?2 AND graph_id = ?3
"""


def stats(conn: sqlite3.Connection, key: Key, now: str) -> ScopeStats:
    by_type = {r["type"]: r["n"] for r in conn.execute(_BY_TYPE, key)}
    facts = conn.execute(_FACTS, (*key, now)).fetchone()
    return ScopeStats(
        entities=sum(by_type.values()), facts=facts["n"], valid_facts=facts["valid"], by_type=by_type
    )


def clear(conn: sqlite3.Connection, key: Key) -> CountResult:
    """Count is the entities plus the facts removed; only rows of this scope are touched."""
    facts = conn.execute("DELETE FROM facts WHERE tenant_id = ?1 AND namespace = ?2 AND graph_id = ?3", key)
    conn.execute("DELETE FROM aliases WHERE tenant_id = ?1 AND namespace = ?2 AND graph_id = ?3", key)
    entities = conn.execute(
        "DELETE FROM entities WHERE tenant_id = ?1 AND namespace = ?2 AND graph_id = ?3", key
    )
    return CountResult(count=facts.rowcount + entities.rowcount)
