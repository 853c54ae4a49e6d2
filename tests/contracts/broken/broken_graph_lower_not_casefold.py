"""Broken on purpose: names and aliases are folded with `str.lower()` instead of `str.casefold()`.

Both sides of the comparison are lowered, so ASCII and most letters match; `Straße` and `STRASSE`,
`ﬁle` and `file`, final `ς` and `σ` do not. (Many SQL collations and `ILIKE` behave like this.)
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Any

from _shared import InMemorySqlite, TestControlSqlite, graph_factory  # noqa: F401

from graphctx.adapters.sqlite import SqliteGraphStore, codec
from graphctx.adapters.sqlite.db import Key
from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import templates as t
from graphctx.kernel.dispatch import Handler
from graphctx.kernel.rules import unique
from graphctx.model import Entity

_IN = "e.tenant_id = ?1 AND e.namespace = ?2 AND e.graph_id = ?3"
_SCOPE = f"SELECT * FROM entities AS e WHERE {_IN} ORDER BY e.id"


def find(conn: sqlite3.Connection, key: Key, p: t.EntityFindExactParams, now: str) -> Any:
    """Compares in Python, field by field, with lower(): the fold is the defect."""
    values = unique(p.values)
    lowered = {v.lower(): v for v in reversed(values)}
    rows = [codec.entity(r) for r in conn.execute(_SCOPE, key)]
    matches: list[t.ExactMatch] = []
    seen: set[str] = set()
    checks = {
        "id": lambda e: next((v for v in values if v == e.id), None),
        "qualified_name": lambda e: next(
            (v for v in values if e.qualified_name and v == e.qualified_name), None
        ),
        "name": lambda e: lowered.get(e.name.lower()),
        "alias": lambda e: next((lowered[a.lower()] for a in e.aliases if a.lower() in lowered), None),
    }
    for field in ("id", "qualified_name", "name", "alias"):
        if field not in p.fields:
            continue
        for e in rows:
            hit = checks[field](e)
            if hit is not None and e.id not in seen:
                seen.add(e.id)
                matches.append(t.ExactMatch(entity=e, field=field, value=hit))
    return t.ExactMatches(matches=tuple(matches[: p.limit]))


class LowerNotCasefold(SqliteGraphStore):
    name = "sqlite-lower-not-casefold"

    def handlers(self) -> Mapping[str, Handler]:
        return {**super().handlers(), t.ENTITY_FIND_EXACT.name: self._bind(find)}


class TestBrokenLowerNotCasefold(InMemorySqlite, GraphStoreContract):
    store_class = LowerNotCasefold


create_graph_store = graph_factory(LowerNotCasefold)
_ = Entity
