"""Broken on purpose: `fact.from_roots` cuts each statement at `limit` in an order that leaves out the
subject (`ORDER BY predicate, object_id, id LIMIT ?`), then sorts what it kept in catalogue order. With
one root (every limit test before 1.5) that is the catalogue order; with several roots the cut keeps
the wrong facts.
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

_ORDER = "ORDER BY f.subject_id, f.predicate, f.object_id, f.id"
assert _ORDER in facts._FROM_SUBJECTS and _ORDER in facts._FROM_OBJECTS
_SUBJECTS, _OBJECTS = (
    sql.replace(_ORDER, "ORDER BY f.predicate, f.object_id, f.id")  # the bug
    for sql in (facts._FROM_SUBJECTS, facts._FROM_OBJECTS)
)


def from_roots(conn: sqlite3.Connection, key: Key, p: t.FactsFromRootsParams, now: str) -> t.FactList:
    queries = {"out": (_SUBJECTS,), "in": (_OBJECTS,), "both": (_SUBJECTS, _OBJECTS)}
    bound = (
        *key, json_list(unique(p.roots)), len(p.predicates), json_list(p.predicates), p.include_invalid,
        ts(p.as_of) or now, p.limit + 1,
    )  # fmt: skip
    found = {row["id"]: codec.fact(row) for sql in queries[p.direction] for row in conn.execute(sql, bound)}
    ordered = sorted(found.values(), key=fact_order)
    return t.FactList(facts=tuple(ordered[: p.limit]), truncated=len(ordered) > p.limit)


class CutWithoutSubject(SqliteGraphStore):
    name = "sqlite-from-roots-cut-without-subject"

    def handlers(self) -> Mapping[str, Handler]:
        return {**super().handlers(), t.FACTS_FROM_ROOTS.name: self._bind(from_roots)}


class TestBrokenFromRootsCutWithoutSubject(InMemorySqlite, GraphStoreContract):
    store_class = CutWithoutSubject


create_graph_store = graph_factory(CutWithoutSubject)
