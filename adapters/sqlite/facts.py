"""Fact templates: upsert, invalidate, facts from roots. Callers hold the transaction."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from graphctx.kernel.rules import check_owner, endpoints, fact_order, require_endpoints, unique
from graphctx.kernel.templates import (
    CountResult,
    FactInvalidateParams,
    FactList,
    FactsFromRootsParams,
    UpsertResult,
)
from graphctx.model import Fact

from . import codec
from .db import Key, json_list, ts
from .entities import existing_ids, stored_rows

_SELECT_ONE = "SELECT * FROM facts WHERE tenant_id = ?1 AND namespace = ?2 AND graph_id = ?3 AND id = ?4"
_SELECT_MANY = """
SELECT f.* FROM json_each(?4) AS j
CROSS JOIN facts AS f ON f.tenant_id = ?1 AND f.namespace = ?2 AND f.graph_id = ?3 AND f.id = j.value
"""


def by_ids(conn: sqlite3.Connection, key: Key, ids: Sequence[str]) -> dict[str, Fact]:
    """The stored facts among the ids, by id, in one query (absent ids are absent)."""
    return {row["id"]: codec.fact(row) for row in conn.execute(_SELECT_MANY, (*key, json_list(ids)))}


_REPLACE = """
INSERT OR REPLACE INTO facts (
    tenant_id, namespace, graph_id, id, subject_id, predicate, object_id, value, source, confidence,
    valid_from, valid_to, created_at, updated_at
) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)
"""


def upsert(conn: sqlite3.Connection, key: Key, facts: Sequence[Fact], now: str) -> UpsertResult:
    for f in facts:
        check_owner(f, key)
    require_endpoints(facts, existing_ids(conn, key, endpoints(facts)))
    created = updated = unchanged = 0
    stored = stored_rows(conn, key, _SELECT_MANY, [f.id for f in facts])
    rows: list[tuple[Any, ...]] = []  # every id once: written in one statement (a keyed table)
    for f in facts:
        row = stored[f.id] if stored is not None else conn.execute(_SELECT_ONE, (*key, f.id)).fetchone()
        if row is not None and codec.same_fact(row, f):
            unchanged += 1
            continue
        created_at = row["created_at"] if row is not None else ts(f.created_at) or now
        values = (*key, *codec.fact_row(f), created_at, ts(f.updated_at) or now)
        if stored is None:
            conn.execute(_REPLACE, values)
        else:
            rows.append(values)
        if row is None:
            created += 1
        else:
            updated += 1
    conn.executemany(_REPLACE, rows)
    return UpsertResult(created=created, updated=updated, unchanged=unchanged)


# Only ever shortens validity: re-invalidating with a later time must not revive a closed fact.
# Only ever shortens validity, and never ends a fact before it starts (one invalidated before its
# valid_from ends at its valid_from: it is valid at no instant). Stored instants are fixed-width ISO
# text, so text order is time order.
_INVALIDATE = """
UPDATE facts SET valid_to = MAX(?5, COALESCE(valid_from, ?5)), updated_at = ?6
WHERE tenant_id = ?1 AND namespace = ?2 AND graph_id = ?3
  AND id IN (SELECT value FROM json_each(?4))
  AND (valid_to IS NULL OR valid_to > MAX(?5, COALESCE(valid_from, ?5)))
"""


def invalidate(conn: sqlite3.Connection, key: Key, p: FactInvalidateParams, now: str) -> CountResult:
    cursor = conn.execute(_INVALIDATE, (*key, json_list(unique(p.ids)), ts(p.valid_to), now))
    return CountResult(count=cursor.rowcount)


# Both endpoints are joined to entities of the same scope: an edge is only seen if its ends are.
# One statement per direction, each through its own index; the caller merges them.
_FROM_SUBJECTS = """
SELECT f.* FROM facts AS f INDEXED BY facts_out
JOIN entities AS s ON s.tenant_id = ?1 AND s.namespace = ?2 AND s.graph_id = ?3 AND s.id = f.subject_id
LEFT JOIN entities AS o ON o.tenant_id = ?1 AND o.namespace = ?2 AND o.graph_id = ?3 AND o.id = f.object_id
WHERE f.tenant_id = ?1 AND f.namespace = ?2 AND f.graph_id = ?3
  AND f.subject_id IN (SELECT value FROM json_each(?4))
  AND (f.object_id IS NULL OR o.id IS NOT NULL)
  AND (?5 = 0 OR f.predicate IN (SELECT value FROM json_each(?6)))
  AND (?7 OR ((f.valid_from IS NULL OR f.valid_from <= ?8) AND (f.valid_to IS NULL OR f.valid_to > ?8)))
ORDER BY f.subject_id, f.predicate, f.object_id, f.id
LIMIT ?9
"""
_FROM_OBJECTS = """
SELECT f.* FROM facts AS f INDEXED BY facts_in
JOIN entities AS s ON s.tenant_id = ?1 AND s.namespace = ?2 AND s.graph_id = ?3 AND s.id = f.subject_id
JOIN entities AS o ON o.tenant_id = ?1 AND o.namespace = ?2 AND o.graph_id = ?3 AND o.id = f.object_id
WHERE f.tenant_id = ?1 AND f.namespace = ?2 AND f.graph_id = ?3
  AND f.object_id IN (SELECT value FROM json_each(?4))
  AND (?5 = 0 OR f.predicate IN (SELECT value FROM json_each(?6)))
  AND (?7 OR ((f.valid_from IS NULL OR f.valid_from <= ?8) AND (f.valid_to IS NULL OR f.valid_to > ?8)))
ORDER BY f.subject_id, f.predicate, f.object_id, f.id
LIMIT ?9
"""


def from_roots(conn: sqlite3.Connection, key: Key, p: FactsFromRootsParams, now: str) -> FactList:
    queries = {"out": (_FROM_SUBJECTS,), "in": (_FROM_OBJECTS,), "both": (_FROM_SUBJECTS, _FROM_OBJECTS)}
    bound = (
        *key,
        json_list(unique(p.roots)),
        len(p.predicates),
        json_list(p.predicates),
        p.include_invalid,
        ts(p.as_of) or now,
        p.limit + 1,  # one extra row tells whether the answer was cut
    )
    found: dict[str, Fact] = {}  # a fact between two roots comes back from both statements: built once
    for sql in queries[p.direction]:
        for row in conn.execute(sql, bound):
            if row["id"] not in found:
                found[row["id"]] = codec.fact(row)
    ordered = sorted(found.values(), key=fact_order)
    return FactList.trusted(facts=tuple(ordered[: p.limit]), truncated=len(ordered) > p.limit)
