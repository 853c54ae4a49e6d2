"""Broken on purpose: a graph store whose hydration and exact lookup forget `tenant_id`.

Every statement still binds the namespace and the graph id, so single-tenant tests pass; with two
tenants holding the same ids and names, `entity.get_by_ids` and `entity.find_exact` return the other
tenant's entities. The isolation tests must catch it (the scope re-check in core would drop the
foreign hits, but a graph store that needs that safety net is not certified).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping

from _shared import InMemorySqlite, TestControlSqlite  # noqa: F401  (the control runs here)

from graphctx.adapters.sqlite import SqliteGraphStore, codec
from graphctx.adapters.sqlite.db import Key, json_list
from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import templates as t
from graphctx.kernel.dispatch import Handler
from graphctx.kernel.rules import unique

# the reference statements with `e.tenant_id = ?1` left out (?1 is still bound, and ignored)
_GET = """
SELECT e.* FROM json_each(?4) AS j
CROSS JOIN entities AS e ON e.namespace = ?2 AND e.graph_id = ?3 AND e.id = j.value
WHERE ?1 IS NOT NULL ORDER BY j.key, e.tenant_id
"""
_FIND = {
    "id": "e.id",
    "qualified_name": "e.qualified_name",
    "name": "e.name_key",
}
_FIND_COLUMN = """
SELECT e.*, j.key AS vidx FROM json_each(?4) AS j
CROSS JOIN entities AS e ON e.namespace = ?2 AND e.graph_id = ?3 AND {column} = j.value
WHERE ?1 IS NOT NULL ORDER BY e.id, j.key
"""
_FIND_ALIAS = """
SELECT e.*, j.key AS vidx FROM json_each(?4) AS j
CROSS JOIN aliases AS a ON a.namespace = ?2 AND a.graph_id = ?3 AND a.alias_key = j.value
CROSS JOIN entities AS e ON e.tenant_id = a.tenant_id AND e.namespace = ?2 AND e.graph_id = ?3
  AND e.id = a.entity_id
WHERE ?1 IS NOT NULL ORDER BY e.id, j.key
"""


def get_by_ids(conn: sqlite3.Connection, key: Key, p: t.EntityGetParams, now: str) -> t.EntityList:
    return t.EntityList(
        entities=tuple(codec.entity(r) for r in conn.execute(_GET, (*key, json_list(unique(p.ids)))))
    )


def find_exact(conn: sqlite3.Connection, key: Key, p: t.EntityFindExactParams, now: str) -> t.ExactMatches:
    values = unique(p.values)
    folded: dict[str, str] = {}
    for v in values:
        folded.setdefault(v.casefold(), v)
    matches: list[t.ExactMatch] = []
    seen: set[tuple[str, str]] = set()
    for field in ("id", "qualified_name", "name", "alias"):
        if field not in p.fields:
            continue
        probes = list(folded) if field in ("name", "alias") else values
        sql = _FIND_ALIAS if field == "alias" else _FIND_COLUMN.format(column=_FIND[field])
        for row in conn.execute(sql, (*key, json_list(probes))):
            who = (row["tenant_id"], row["id"])
            if who in seen:
                continue
            seen.add(who)
            probe = probes[row["vidx"]]
            value = folded[probe] if field in ("name", "alias") else probe
            matches.append(t.ExactMatch(entity=codec.entity(row), field=field, value=value))
    return t.ExactMatches(matches=tuple(matches[: p.limit]))


class TenantBlindGraphStore(SqliteGraphStore):
    name = "sqlite-tenant-blind"

    def handlers(self) -> Mapping[str, Handler]:
        return {
            **super().handlers(),
            t.ENTITY_GET.name: self._bind(get_by_ids),
            t.ENTITY_FIND_EXACT.name: self._bind(find_exact),
        }


class TestBrokenTenantBlind(InMemorySqlite, GraphStoreContract):
    store_class = TenantBlindGraphStore
