"""Entity templates: upsert, hydrate, exact lookup, delete, hash pages. Callers hold the transaction."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from graphctx.errors import InputError
from graphctx.kernel import rules as store_rules
from graphctx.kernel.rules import check_owner, unique, usable
from graphctx.kernel.templates import (
    DeleteResult,
    EntityFindExactParams,
    EntityHashesParams,
    EntityList,
    EntityName,
    EntityNames,
    ExactField,
    ExactMatches,
    HashPage,
    UpsertResult,
)
from graphctx.model import Entity, IndexedHash

from . import codec
from .db import Key, json_list, ts

_SELECT_ONE = "SELECT * FROM entities WHERE tenant_id = ?1 AND namespace = ?2 AND graph_id = ?3 AND id = ?4"
_REPLACE = """
INSERT OR REPLACE INTO entities (
    tenant_id, namespace, graph_id, id, name, name_key, type, aliases, summary, qualified_name, path,
    line_start, line_end, signature, source, content_hash, search_text, created_at, updated_at
) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19)
"""
_DROP_ALIASES = """
DELETE FROM aliases INDEXED BY aliases_entity
WHERE tenant_id = ?1 AND namespace = ?2 AND graph_id = ?3 AND entity_id = ?4
"""
_ADD_ALIAS = """
INSERT OR IGNORE INTO aliases (tenant_id, namespace, graph_id, alias_key, entity_id)
VALUES (?1, ?2, ?3, ?4, ?5)
"""


def upsert(conn: sqlite3.Connection, key: Key, entities: Sequence[Entity], now: str) -> UpsertResult:
    """Insert or replace by id. An entity equal in every stored field is left untouched, timestamps
    included, so re-indexing the same content is a no-op that reports `unchanged`."""
    created = updated = unchanged = 0
    for e in entities:
        check_owner(e, key)
    stored = stored_rows(conn, key, _GET, [e.id for e in entities])
    # with every id once (stored is not None), the rows are written together: three statements for
    # the whole batch instead of three per entity (the tables are keyed, WITHOUT ROWID, so the
    # order of the writes changes nothing); a batch that names an id twice goes one by one
    rows: list[tuple[Any, ...]] = []
    for e in entities:
        row = stored[e.id] if stored is not None else conn.execute(_SELECT_ONE, (*key, e.id)).fetchone()
        if row is not None and codec.same_entity(row, e):
            unchanged += 1
            continue
        # created_at survives a replace; only a new entity takes the given (or current) time
        created_at = row["created_at"] if row is not None else ts(e.created_at) or now
        values = (*key, *codec.entity_row(e), created_at, ts(e.updated_at) or now)
        if stored is None:
            _write(conn, key, [values], [e])
        else:
            rows.append(values)
        if row is None:
            created += 1
        else:
            updated += 1
    if rows:
        written = {r[3] for r in rows}
        _write(conn, key, rows, [e for e in entities if e.id in written])
    return UpsertResult(created=created, updated=updated, unchanged=unchanged)


def _write(conn: sqlite3.Connection, key: Key, rows: list[tuple[Any, ...]], entities: list[Entity]) -> None:
    """Replace the rows, then each entity's aliases."""
    conn.executemany(_REPLACE, rows)
    conn.executemany(_DROP_ALIASES, [(*key, e.id) for e in entities])
    conn.executemany(_ADD_ALIAS, [(*key, a.casefold(), e.id) for e in entities for a in e.aliases])


_GET = """
SELECT e.* FROM json_each(?4) AS j
CROSS JOIN entities AS e ON e.tenant_id = ?1 AND e.namespace = ?2 AND e.graph_id = ?3 AND e.id = j.value
ORDER BY j.key
"""


def stored_rows(
    conn: sqlite3.Connection, key: Key, query: str, ids: Sequence[str]
) -> dict[str, sqlite3.Row | None] | None:
    """The stored row of every id (None where there is none), read in one query; None when an id
    repeats (each occurrence must then see what the one before it wrote: read them one at a time)."""
    if len(set(ids)) != len(ids):
        return None
    found: dict[str, sqlite3.Row | None] = dict.fromkeys(ids)
    found.update((r["id"], r) for r in conn.execute(query, (*key, json_list(ids))))
    return found


def get_by_ids(conn: sqlite3.Connection, key: Key, ids: Sequence[str]) -> list[Entity]:
    """In the order given, each once; ids absent from the scope are absent from the answer."""
    return [codec.entity(r) for r in conn.execute(_GET, (*key, json_list(unique(ids))))]


def entity_list(conn: sqlite3.Connection, key: Key, ids: Sequence[str]) -> EntityList:
    """entity.get_by_ids's answer: entities this adapter just decoded, not validated again."""
    return EntityList.trusted(entities=tuple(get_by_ids(conn, key, ids)))


_NAMES = """
SELECT e.id, e.name, e.qualified_name, e.tenant_id, e.namespace, e.graph_id FROM json_each(?4) AS j
CROSS JOIN entities AS e ON e.tenant_id = ?1 AND e.namespace = ?2 AND e.graph_id = ?3 AND e.id = j.value
ORDER BY j.key
"""


def names(conn: sqlite3.Connection, key: Key, ids: Sequence[str]) -> EntityNames:
    """get_by_ids narrowed to what a name needs: no row is decoded into an Entity."""
    rows = conn.execute(_NAMES, (*key, json_list(unique(ids))))
    return EntityNames(
        names=tuple(
            EntityName(id=i, name=n, qualified_name=q, tenant_id=tn, namespace=ns, graph_id=g)
            for i, n, q, tn, ns, g in rows
        )
    )


_IDS = """
SELECT e.id FROM json_each(?4) AS j
CROSS JOIN entities AS e ON e.tenant_id = ?1 AND e.namespace = ?2 AND e.graph_id = ?3 AND e.id = j.value
ORDER BY j.key
"""


def ids_in_scope(conn: sqlite3.Connection, key: Key, ids: Sequence[str]) -> list[str]:
    """The ids get_by_ids would answer, in its order, without reading or decoding the entities."""
    return [r[0] for r in conn.execute(_IDS, (*key, json_list(unique(ids))))]


def existing_ids(conn: sqlite3.Connection, key: Key, ids: Sequence[str]) -> set[str]:
    return set(ids_in_scope(conn, key, ids))


# One query per field, driven by the probe list (CROSS JOIN fixes the join order) through the field's
# index (INDEXED BY: without statistics SQLite would rather scan the scope's primary-key range).
# MIN(j.key) picks the first given value that matched; GROUP BY lists each entity once.
_FIND: dict[ExactField, str] = {
    "id": """
SELECT e.*, MIN(j.key) AS vidx FROM json_each(?4) AS j
CROSS JOIN entities AS e ON e.tenant_id = ?1 AND e.namespace = ?2 AND e.graph_id = ?3 AND e.id = j.value
GROUP BY e.id ORDER BY e.id LIMIT ?5""",
    "qualified_name": """
SELECT e.*, MIN(j.key) AS vidx FROM json_each(?4) AS j
CROSS JOIN entities AS e INDEXED BY entities_qualified_name
  ON e.tenant_id = ?1 AND e.namespace = ?2 AND e.graph_id = ?3 AND e.qualified_name = j.value
GROUP BY e.id ORDER BY e.id LIMIT ?5""",
    "name": """
SELECT e.*, MIN(j.key) AS vidx FROM json_each(?4) AS j
CROSS JOIN entities AS e INDEXED BY entities_name
  ON e.tenant_id = ?1 AND e.namespace = ?2 AND e.graph_id = ?3 AND e.name_key = j.value
GROUP BY e.id ORDER BY e.id LIMIT ?5""",
    "alias": """
SELECT e.*, MIN(j.key) AS vidx FROM json_each(?4) AS j
CROSS JOIN aliases AS a
  ON a.tenant_id = ?1 AND a.namespace = ?2 AND a.graph_id = ?3 AND a.alias_key = j.value
CROSS JOIN entities AS e ON e.tenant_id = ?1 AND e.namespace = ?2 AND e.graph_id = ?3 AND e.id = a.entity_id
GROUP BY e.id ORDER BY e.id LIMIT ?5""",
}


def find_exact(conn: sqlite3.Connection, key: Key, p: EntityFindExactParams) -> ExactMatches:
    """Each entity once, under its best field (store_rules.find_exact); one query per field."""

    def lookup(field: ExactField, probes: list[str], limit: int) -> list[tuple[Entity, int]]:
        rows = conn.execute(_FIND[field], (*key, json_list(probes), limit))
        return [(codec.entity(row), row["vidx"]) for row in rows]

    return store_rules.find_exact(p, lookup)


# One statement per index: an OR of the two endpoints would scan the whole scope.
_DELETE_FACTS_OUT = """
DELETE FROM facts INDEXED BY facts_out WHERE tenant_id = ?1 AND namespace = ?2 AND graph_id = ?3
  AND subject_id IN (SELECT value FROM json_each(?4))
"""
_DELETE_FACTS_IN = """
DELETE FROM facts INDEXED BY facts_in WHERE tenant_id = ?1 AND namespace = ?2 AND graph_id = ?3
  AND object_id IN (SELECT value FROM json_each(?4))
"""
_DELETE_ALIASES = """
DELETE FROM aliases INDEXED BY aliases_entity WHERE tenant_id = ?1 AND namespace = ?2 AND graph_id = ?3
  AND entity_id IN (SELECT value FROM json_each(?4))
"""
_DELETE_ENTITIES = """
DELETE FROM entities WHERE tenant_id = ?1 AND namespace = ?2 AND graph_id = ?3
  AND id IN (SELECT value FROM json_each(?4))
"""


def delete(conn: sqlite3.Connection, key: Key, ids: Sequence[str]) -> DeleteResult:
    bound = (*key, json_list(unique(ids)))
    facts = conn.execute(_DELETE_FACTS_OUT, bound).rowcount + conn.execute(_DELETE_FACTS_IN, bound).rowcount
    conn.execute(_DELETE_ALIASES, bound)
    deleted = conn.execute(_DELETE_ENTITIES, bound).rowcount
    return DeleteResult(deleted=deleted, facts_removed=facts)


_HASHES = """
SELECT id, content_hash FROM entities
WHERE tenant_id = ?1 AND namespace = ?2 AND graph_id = ?3 AND id > ?4
ORDER BY id LIMIT ?5
"""


def hashes(conn: sqlite3.Connection, key: Key, p: EntityHashesParams) -> HashPage:
    if not usable(p.after):
        raise InputError("entity.hashes `after` must be valid text without NUL", field="after")
    rows = conn.execute(_HASHES, (*key, p.after, p.limit))
    return HashPage(items=tuple(IndexedHash(id=r["id"], content_hash=r["content_hash"]) for r in rows))
