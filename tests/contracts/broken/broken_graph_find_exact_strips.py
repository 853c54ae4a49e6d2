"""Broken on purpose: exact lookup strips surrounding whitespace from the values (a `CHAR` column's padding
semantics, a `.strip()` "for convenience"): `checkout-api ` finds `checkout-api`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from _shared import InMemorySqlite, TestControlSqlite, graph_factory  # noqa: F401

from graphctx.adapters.sqlite import SqliteGraphStore
from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import templates as t
from graphctx.kernel.dispatch import Handler
from graphctx.scope import Scope


class StrippingFindExact(SqliteGraphStore):
    name = "sqlite-find-exact-strips"

    def handlers(self) -> Mapping[str, Handler]:
        real = super().handlers()
        return {**real, t.ENTITY_FIND_EXACT.name: lambda scope, p: self._find(real, scope, p)}

    def _find(self, real: Mapping[str, Handler], scope: Scope, p: t.EntityFindExactParams) -> Any:
        values = tuple(dict.fromkeys(v.strip() or v for v in p.values))
        return real[t.ENTITY_FIND_EXACT.name](scope, p.model_copy(update={"values": values}))


class TestBrokenFindExactStrips(InMemorySqlite, GraphStoreContract):
    store_class = StrippingFindExact


create_graph_store = graph_factory(StrippingFindExact)
