"""Broken: entity.find_exact de-duplicates its probe values by casefold once, for every field: ids
and qualified names are compared exactly, but `Foo` then `foo` probes only `Foo`."""

from __future__ import annotations

from collections.abc import Mapping

from _shared import InMemorySqlite, TestControlSqlite, graph_factory  # noqa: F401

from graphctx.adapters.sqlite import SqliteGraphStore, entities
from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import templates as t
from graphctx.kernel.dispatch import Handler


def find_exact(conn, key, p, now):  # type: ignore[no-untyped-def]
    firsts: dict[str, str] = {}
    for v in p.values:
        firsts.setdefault(v.casefold(), v)
    return entities.find_exact(conn, key, p.model_copy(update={"values": tuple(firsts.values())}))


class FindExactIdProbesFolded(SqliteGraphStore):
    name = "sqlite-find-exact-id-probes-folded"

    def handlers(self) -> Mapping[str, Handler]:
        return {**super().handlers(), t.ENTITY_FIND_EXACT.name: self._bind(find_exact)}


class TestBrokenFindExactIdProbesFolded(InMemorySqlite, GraphStoreContract):
    store_class = FindExactIdProbesFolded


create_graph_store = graph_factory(FindExactIdProbesFolded)
