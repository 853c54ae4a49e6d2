"""Broken on purpose: `entity.find_exact` asks each later field for only as many entities as the page
still lacks (`limit - matches so far`); when the first of those were already listed under a better
field, the page stays short although more entities match.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping

from _shared import InMemorySqlite, TestControlSqlite, graph_factory  # noqa: F401

from graphctx.adapters.sqlite import SqliteGraphStore, codec
from graphctx.adapters.sqlite.db import Key, json_list
from graphctx.adapters.sqlite.entities import _FIND
from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import templates as t
from graphctx.kernel.dispatch import Handler
from graphctx.kernel.rules import unique

_RANK = ("id", "qualified_name", "name", "alias")


def find_exact(conn: sqlite3.Connection, key: Key, p: t.EntityFindExactParams, now: str) -> t.ExactMatches:
    values = unique(p.values)
    folded: dict[str, str] = {}
    for v in values:
        folded.setdefault(v.casefold(), v)
    matches: list[t.ExactMatch] = []
    seen: set[str] = set()
    for field in (f for f in _RANK if f in p.fields):
        probes = list(folded) if field in ("name", "alias") else values
        if len(matches) >= p.limit or not probes:
            continue
        rows = conn.execute(_FIND[field], (*key, json_list(probes), p.limit - len(matches)))  # the bug
        for row in rows:
            if row["id"] not in seen:
                seen.add(row["id"])
                probe = probes[row["vidx"]]
                value = folded[probe] if field in ("name", "alias") else probe
                matches.append(t.ExactMatch(entity=codec.entity(row), field=field, value=value))
    return t.ExactMatches(matches=tuple(matches[: p.limit]))


class FillsByRemainder(SqliteGraphStore):
    name = "sqlite-find-exact-fills-by-remainder"

    def handlers(self) -> Mapping[str, Handler]:
        return {**super().handlers(), t.ENTITY_FIND_EXACT.name: self._bind(find_exact)}


class TestBrokenFindExactFillsByRemainder(InMemorySqlite, GraphStoreContract):
    store_class = FillsByRemainder


create_graph_store = graph_factory(FillsByRemainder)
