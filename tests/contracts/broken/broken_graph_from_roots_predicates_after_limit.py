"""Broken: fact.from_roots reads `limit + 1` facts of the roots with no predicate clause, then keeps
the requested predicates in Python: a filter applied after the cut (short page, wrong truncated)."""

from __future__ import annotations

from collections.abc import Mapping

from _shared import InMemorySqlite, TestControlSqlite, graph_factory  # noqa: F401

from graphctx.adapters.sqlite import SqliteGraphStore, facts
from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import templates as t
from graphctx.kernel.dispatch import Handler


def from_roots(conn, key, p, now):  # type: ignore[no-untyped-def]
    got = facts.from_roots(conn, key, p.model_copy(update={"predicates": ()}), now)
    kept = tuple(f for f in got.facts if not p.predicates or f.predicate in p.predicates)
    return t.FactList.trusted(facts=kept, truncated=got.truncated)


class FromRootsPredicatesAfterLimit(SqliteGraphStore):
    name = "sqlite-from-roots-predicates-after-limit"

    def handlers(self) -> Mapping[str, Handler]:
        return {**super().handlers(), t.FACTS_FROM_ROOTS.name: self._bind(from_roots)}


class TestBrokenFromRootsPredicatesAfterLimit(InMemorySqlite, GraphStoreContract):
    store_class = FromRootsPredicatesAfterLimit


create_graph_store = graph_factory(FromRootsPredicatesAfterLimit)
