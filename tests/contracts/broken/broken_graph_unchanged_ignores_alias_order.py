"""Broken: `unchanged` compares aliases as a set (a set-cardinality property, a sorted alias table):
a re-write that only reorders aliases is reported unchanged and the old order (and content hash) stay."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping

from _shared import InMemorySqlite, TestControlSqlite, graph_factory  # noqa: F401

from graphctx.adapters.sqlite import SqliteGraphStore, codec, entities
from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import templates as t
from graphctx.kernel.dispatch import Handler

_orig_same = codec.same_entity


def same_entity(row: sqlite3.Row, e) -> bool:  # type: ignore[no-untyped-def]
    return all(row[f] == getattr(e, f) for f in codec._ENTITY_FIELDS) and sorted(
        json.loads(row["aliases"])
    ) == sorted(e.aliases)


def upsert(conn, key, p, now):  # type: ignore[no-untyped-def]
    codec.same_entity = same_entity
    try:
        return entities.upsert(conn, key, p.entities, now)
    finally:
        codec.same_entity = _orig_same


class AliasSetStore(SqliteGraphStore):
    name = "sqlite-alias-set"

    def handlers(self) -> Mapping[str, Handler]:
        return {**super().handlers(), t.ENTITY_UPSERT.name: self._bind(upsert)}


class TestBrokenAliasSet(InMemorySqlite, GraphStoreContract):
    store_class = AliasSetStore


create_graph_store = graph_factory(AliasSetStore)
