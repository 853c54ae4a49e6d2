"""Rows to domain models and back."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from graphctx.model import Entity, Fact

from .db import parse_ts, ts

_ENTITY_FIELDS = (
    "name",
    "type",
    "summary",
    "qualified_name",
    "path",
    "line_start",
    "line_end",
    "signature",
    "source",
    "search_text",
)
_FACT_FIELDS = ("subject_id", "predicate", "object_id", "value", "source", "confidence")


def entity_row(e: Entity) -> tuple[Any, ...]:
    """Values for the columns id .. content_hash and search_text, in _REPLACE's order."""
    return (
        e.id,
        e.name,
        e.name.casefold(),
        e.type,
        json.dumps(list(e.aliases), ensure_ascii=False),
        e.summary,
        e.qualified_name,
        e.path,
        e.line_start,
        e.line_end,
        e.signature,
        e.source,
        e.content_hash,
        e.search_text,
    )


def same_entity(row: sqlite3.Row, e: Entity) -> bool:
    return (
        row["content_hash"] == e.content_hash
        and all(row[f] == getattr(e, f) for f in _ENTITY_FIELDS)
        and json.loads(row["aliases"]) == list(e.aliases)
    )


def entity(row: sqlite3.Row) -> Entity:
    """The entity of a row this adapter wrote from a validated Entity (no second validation)."""
    return Entity.from_store(
        id=row["id"],
        name=row["name"],
        type=row["type"],
        aliases=tuple(json.loads(row["aliases"])),
        summary=row["summary"],
        qualified_name=row["qualified_name"],
        path=row["path"],
        line_start=row["line_start"],
        line_end=row["line_end"],
        signature=row["signature"],
        source=row["source"],
        search_text=row["search_text"],
        content_hash=row["content_hash"],
        created_at=parse_ts(row["created_at"]),
        updated_at=parse_ts(row["updated_at"]),
        tenant_id=row["tenant_id"],
        namespace=row["namespace"],
        graph_id=row["graph_id"],
    )


def fact_row(f: Fact) -> tuple[Any, ...]:
    """Values for the columns id .. valid_to, in schema order."""
    return (
        f.id,
        f.subject_id,
        f.predicate,
        f.object_id,
        f.value,
        f.source,
        f.confidence,
        ts(f.valid_from),
        ts(f.valid_to),
    )


def same_fact(row: sqlite3.Row, f: Fact) -> bool:
    return (
        all(row[name] == getattr(f, name) for name in _FACT_FIELDS)
        and row["valid_from"] == ts(f.valid_from)
        and row["valid_to"] == ts(f.valid_to)
    )


def fact(row: sqlite3.Row) -> Fact:
    """The fact of a row this adapter wrote from a validated Fact (no second validation)."""
    return Fact.from_store(
        id=row["id"],
        subject_id=row["subject_id"],
        predicate=row["predicate"],
        object_id=row["object_id"],
        value=row["value"],
        source=row["source"],
        confidence=row["confidence"],
        valid_from=parse_ts(row["valid_from"]),
        valid_to=parse_ts(row["valid_to"]),
        created_at=parse_ts(row["created_at"]),
        updated_at=parse_ts(row["updated_at"]),
        tenant_id=row["tenant_id"],
        namespace=row["namespace"],
        graph_id=row["graph_id"],
    )
