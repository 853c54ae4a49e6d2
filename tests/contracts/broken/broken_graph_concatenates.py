"""Broken on purpose: `entity.find_exact` builds its SQL by string concatenation.

The values (and the scope) are pasted into the statement between quotes. Ordinary names work, so
every non-adversarial lookup passes; a payload with a quote either breaks the statement (a
`BackendError` instead of a match) or rewrites it: `x' OR tenant_id='other` widens the lookup to
another tenant. The injection tests must catch it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping

from _shared import InMemorySqlite, TestControlSqlite  # noqa: F401  (the control runs here)

from graphctx.adapters.sqlite import SqliteGraphStore, codec
from graphctx.adapters.sqlite.db import Key
from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import templates as t
from graphctx.kernel.dispatch import Handler
from graphctx.kernel.rules import unique

_COLUMN = {"id": "e.id", "qualified_name": "e.qualified_name", "name": "e.name_key", "alias": "a.alias_key"}


def _statement(key: Key, field: str, probes: list[str]) -> str:
    tenant, namespace, graph = key
    listed = ", ".join(f"'{v}'" for v in probes)  # the bug: values pasted into the text
    where = f"e.tenant_id = '{tenant}' AND e.namespace = '{namespace}' AND e.graph_id = '{graph}'"
    if field == "alias":
        return (
            f"SELECT e.*, a.alias_key AS matched FROM entities AS e JOIN aliases AS a "
            f"ON a.tenant_id = e.tenant_id AND a.namespace = e.namespace AND a.graph_id = e.graph_id "
            f"AND a.entity_id = e.id WHERE {where} AND a.alias_key IN ({listed}) ORDER BY e.id"
        )
    column = _COLUMN[field]
    return (
        f"SELECT e.*, {column} AS matched FROM entities AS e "
        f"WHERE {where} AND {column} IN ({listed}) ORDER BY e.id"
    )


def find_exact(conn: sqlite3.Connection, key: Key, p: t.EntityFindExactParams, now: str) -> t.ExactMatches:
    values = unique(p.values)
    folded: dict[str, str] = {}
    for v in values:
        folded.setdefault(v.casefold(), v)
    matches: list[t.ExactMatch] = []
    seen: set[str] = set()
    for field in ("id", "qualified_name", "name", "alias"):
        if field not in p.fields:
            continue
        probes = list(folded) if field in ("name", "alias") else values
        best: dict[str, tuple[int, sqlite3.Row]] = {}
        for row in conn.execute(_statement(key, field, probes)):
            rank = probes.index(row["matched"]) if row["matched"] in probes else len(probes)
            if row["id"] not in best or rank < best[row["id"]][0]:
                best[row["id"]] = (rank, row)
        for entity_id in sorted(best):
            if entity_id in seen:
                continue
            seen.add(entity_id)
            rank, row = best[entity_id]
            probe = probes[min(rank, len(probes) - 1)]
            value = folded[probe] if field in ("name", "alias") else probe
            matches.append(t.ExactMatch(entity=codec.entity(row), field=field, value=value))
    return t.ExactMatches(matches=tuple(matches[: p.limit]))


class ConcatenatingGraphStore(SqliteGraphStore):
    name = "sqlite-concatenating"

    def handlers(self) -> Mapping[str, Handler]:
        return {**super().handlers(), t.ENTITY_FIND_EXACT.name: self._bind(find_exact)}


class TestBrokenConcatenating(InMemorySqlite, GraphStoreContract):
    store_class = ConcatenatingGraphStore
