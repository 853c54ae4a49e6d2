"""Broken on purpose: search asks the engine for exactly k hits and sorts those by (score, id): when a tie
straddles the k-th place the engine's own order (insertion) decides which tied documents make it.
"""

from __future__ import annotations

from collections.abc import Sequence

from _shared import InRamTantivy, RemembersScopes, TestControlTantivy, hit, lexical_factory  # noqa: F401  (the control runs here)

from graphctx.adapters.tantivy import TantivyLexicalIndex
from graphctx.adapters.tantivy.query import search_query
from graphctx.contracts.lexical import LexicalIndexContract
from graphctx.kernel.ports import LexicalDoc, LexicalHit
from graphctx.scope import Scope


class TiesCutBeforeSort(RemembersScopes, TantivyLexicalIndex):
    name = "tantivy-ties-cut-before-sort"

    def upsert(self, scope: Scope, docs: Sequence[LexicalDoc]) -> None:
        self._remember(scope)
        super().upsert(scope, docs)

    def search(self, scope: Scope, text: str, k: int) -> list[LexicalHit]:
        k = max(1, min(k, 100))
        query = search_query(self._schema, scope, text, self._english)
        if query is None:
            return []
        searcher = self._index.searcher()
        hits = [hit(searcher, a, s) for s, a in searcher.search(query, k, count=False).hits]  # no tie pad
        return sorted(hits, key=lambda h: (-h.score, h.entity_id))


class TestBrokenTiesCutBeforeSort(InRamTantivy, LexicalIndexContract):
    index_class = TiesCutBeforeSort


create_lexical_index = lexical_factory(TiesCutBeforeSort)
