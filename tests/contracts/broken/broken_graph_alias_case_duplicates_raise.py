"""Broken: aliases are inserted with a plain INSERT into a table unique on the casefolded alias
key: an entity whose aliases differ only in case (`PayGW`, `paygw`) fails to write (BackendError)."""

from __future__ import annotations

from collections.abc import Mapping

from _shared import InMemorySqlite, TestControlSqlite, graph_factory  # noqa: F401

from graphctx.adapters.sqlite import SqliteGraphStore, entities
from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import templates as t
from graphctx.kernel.dispatch import Handler

_PLAIN = entities._ADD_ALIAS.replace("INSERT OR IGNORE", "INSERT")
assert _PLAIN != entities._ADD_ALIAS


def upsert(conn, key, p, now):  # type: ignore[no-untyped-def]
    saved = entities._ADD_ALIAS
    entities._ADD_ALIAS = _PLAIN
    try:
        return entities.upsert(conn, key, p.entities, now)
    finally:
        entities._ADD_ALIAS = saved


class AliasCaseDupRaises(SqliteGraphStore):
    name = "sqlite-alias-case-dup"

    def handlers(self) -> Mapping[str, Handler]:
        return {**super().handlers(), t.ENTITY_UPSERT.name: self._bind(upsert)}


class TestBrokenAliasCaseDup(InMemorySqlite, GraphStoreContract):
    store_class = AliasCaseDupRaises


create_graph_store = graph_factory(AliasCaseDupRaises)
