"""Broken on purpose: exact lookup normalises values with NFKC (compatibility folding) first.

A store that runs lookups through a normalising analyser finds fullwidth `ｃｈｅｃｋｏｕｔ` under
`checkout` and `x²` under `x2`; ordinary ASCII lookups are right. ExactLookupTests must catch it.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from typing import Any

from _shared import InMemorySqlite, TestControlSqlite, graph_factory  # noqa: F401

from graphctx.adapters.sqlite import SqliteGraphStore
from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import templates as t
from graphctx.kernel.dispatch import Handler
from graphctx.scope import Scope


class NfkcFindExact(SqliteGraphStore):
    name = "sqlite-find-exact-nfkc"

    def handlers(self) -> Mapping[str, Handler]:
        real = super().handlers()
        return {**real, t.ENTITY_FIND_EXACT.name: lambda scope, p: self._find(real, scope, p)}

    def _find(self, real: Mapping[str, Handler], scope: Scope, p: t.EntityFindExactParams) -> Any:
        values = tuple(dict.fromkeys(unicodedata.normalize("NFKC", v) for v in p.values))
        return real[t.ENTITY_FIND_EXACT.name](scope, p.model_copy(update={"values": values}))


class TestBrokenFindExactNfkc(InMemorySqlite, GraphStoreContract):
    store_class = NfkcFindExact


create_graph_store = graph_factory(NfkcFindExact)
