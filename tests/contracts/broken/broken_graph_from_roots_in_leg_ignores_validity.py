"""Broken on purpose: `fact.from_roots` checks validity on the facts leaving the roots but not on the
facts entering them (the incoming statement lost its `valid_from`/`valid_to` clause): ended and future
facts pointing at a root come back as current.
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

_VALIDITY = (
    "AND (?7 OR ((f.valid_from IS NULL OR f.valid_from <= ?8) AND (f.valid_to IS NULL OR f.valid_to > ?8)))"
)
assert _VALIDITY in facts._FROM_OBJECTS
_FROM_OBJECTS = facts._FROM_OBJECTS.replace(_VALIDITY, "")  # the bug


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


class InLegIgnoresValidity(SqliteGraphStore):
    name = "sqlite-from-roots-in-leg-ignores-validity"

    def handlers(self) -> Mapping[str, Handler]:
        return {**super().handlers(), t.FACTS_FROM_ROOTS.name: self._bind(from_roots)}


class TestBrokenFromRootsInLegIgnoresValidity(InMemorySqlite, GraphStoreContract):
    store_class = InLegIgnoresValidity


create_graph_store = graph_factory(InLegIgnoresValidity)
