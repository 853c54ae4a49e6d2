"""Broken: entity.find_exact walks the fields in the order the caller listed them (not the catalogue
rank id, qualified_name, name, alias): with fields=("alias", "id") an entity matching both is
reported under alias and alias matches come first."""

from __future__ import annotations

from collections.abc import Mapping

from _shared import InMemorySqlite, TestControlSqlite, graph_factory  # noqa: F401

from graphctx.adapters.sqlite import SqliteGraphStore, entities
from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import rules
from graphctx.kernel import templates as t
from graphctx.kernel.dispatch import Handler


def find_exact(conn, key, p, now):  # type: ignore[no-untyped-def]
    saved = rules._RANK
    rules._RANK = tuple(dict.fromkeys(p.fields))
    try:
        return entities.find_exact(conn, key, p)
    finally:
        rules._RANK = saved


class FindExactGivenOrder(SqliteGraphStore):
    name = "sqlite-find-exact-given-order"

    def handlers(self) -> Mapping[str, Handler]:
        return {**super().handlers(), t.ENTITY_FIND_EXACT.name: self._bind(find_exact)}


class TestBrokenFindExactGivenOrder(InMemorySqlite, GraphStoreContract):
    store_class = FindExactGivenOrder


create_graph_store = graph_factory(FindExactGivenOrder)
