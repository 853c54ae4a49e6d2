"""Broken on purpose: `fact.upsert` decides `unchanged` by the relation alone -- subject, predicate,
object, source and confidence -- and skips the write: a fact whose value or validity (`valid_from`,
`valid_to`) changed is reported unchanged and keeps its old value and period.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from _shared import InMemorySqlite, TestControlSqlite, graph_factory  # noqa: F401

from graphctx.adapters.sqlite import SqliteGraphStore
from graphctx.adapters.sqlite.db import json_list
from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import templates as t
from graphctx.kernel.dispatch import Handler

_FIELDS = ("subject_id", "predicate", "object_id", "source", "confidence")  # the bug: no value, no validity
_STORED = """SELECT * FROM facts WHERE tenant_id = ?1 AND namespace = ?2 AND graph_id = ?3
  AND id IN (SELECT value FROM json_each(?4))"""


class FactUnchangedIgnoresValidity(SqliteGraphStore):
    name = "sqlite-fact-unchanged-ignores-validity"

    def handlers(self) -> Mapping[str, Handler]:
        real = super().handlers()

        def upsert(scope: Any, p: t.FactUpsertParams) -> Any:
            conn, key = self._current(), tuple(scope.as_dict().values())
            stored = {r["id"]: r for r in conn.execute(_STORED, (*key, json_list(f.id for f in p.facts)))}
            same = [
                f
                for f in p.facts
                if f.id in stored and all(stored[f.id][n] == getattr(f, n) for n in _FIELDS)
            ]
            rest = tuple(f for f in p.facts if f not in same)
            result = real[t.FACT_UPSERT.name](scope, p.model_copy(update={"facts": rest}))
            return result.model_copy(update={"unchanged": result.unchanged + len(same)})

        return {**real, t.FACT_UPSERT.name: upsert}


class TestBrokenFactUnchangedIgnoresValidity(InMemorySqlite, GraphStoreContract):
    store_class = FactUnchangedIgnoresValidity


create_graph_store = graph_factory(FactUnchangedIgnoresValidity)
