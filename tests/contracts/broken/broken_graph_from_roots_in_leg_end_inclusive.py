"""Broken on purpose: `fact.from_roots` compares the end of the facts entering the roots inclusively
(`valid_to >= as_of` in the incoming statement only): at the instant an incoming fact ends it is still
returned. Outgoing facts, traversals and every instant but the end itself are right.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping

from _shared import InMemorySqlite, TestControlSqlite, graph_factory  # noqa: F401

from graphctx.adapters.sqlite import SqliteGraphStore, codec, facts
from graphctx.adapters.sqlite.db import Key, json_list, ts
from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import templates as t
from graphctx.kernel.dispatch import Handler
from graphctx.kernel.rules import fact_order, unique

assert "f.valid_to > ?8" in facts._FROM_OBJECTS
_FROM_OBJECTS = facts._FROM_OBJECTS.replace("f.valid_to > ?8", "f.valid_to >= ?8")  # the bug


def from_roots(conn: sqlite3.Connection, key: Key, p: t.FactsFromRootsParams, now: str) -> t.FactList:
    queries = {
        "out": (facts._FROM_SUBJECTS,),
        "in": (_FROM_OBJECTS,),
        "both": (facts._FROM_SUBJECTS, _FROM_OBJECTS),
    }
    bound = (
        *key, json_list(unique(p.roots)), len(p.predicates), json_list(p.predicates), p.include_invalid,
        ts(p.as_of) or now, p.limit + 1,
    )  # fmt: skip
    found = {row["id"]: codec.fact(row) for sql in queries[p.direction] for row in conn.execute(sql, bound)}
    ordered = sorted(found.values(), key=fact_order)
    return t.FactList(facts=tuple(ordered[: p.limit]), truncated=len(ordered) > p.limit)


class InLegEndInclusive(SqliteGraphStore):
    name = "sqlite-from-roots-in-leg-end-inclusive"

    def handlers(self) -> Mapping[str, Handler]:
        return {**super().handlers(), t.FACTS_FROM_ROOTS.name: self._bind(from_roots)}


class TestBrokenFromRootsInLegEndInclusive(InMemorySqlite, GraphStoreContract):
    store_class = InLegEndInclusive


create_graph_store = graph_factory(InLegEndInclusive)
