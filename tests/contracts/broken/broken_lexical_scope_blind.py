"""Broken on purpose: a lexical index whose search forgets the scope filter.

Writes are still keyed by scope and `hashes` still filters, so single-scope tests pass; `search`
builds the text clauses alone, so another tenant's (or namespace's, or graph's) documents with the
same words come back, each labelled with the scope it was stored under. The lexical isolation and
injection tests must catch it.
"""

from __future__ import annotations

from _shared import InRamTantivy, TestControlTantivy, hit  # noqa: F401  (the control runs here)
from tantivy import Query

from graphctx.adapters.tantivy import TantivyLexicalIndex
from graphctx.adapters.tantivy.query import text_clauses
from graphctx.contracts.lexical import LexicalIndexContract
from graphctx.kernel.ports import LexicalHit
from graphctx.scope import Scope


class ScopeBlindLexicalIndex(TantivyLexicalIndex):
    name = "tantivy-scope-blind"

    def search(self, scope: Scope, text: str, k: int) -> list[LexicalHit]:
        k = max(1, min(k, 100))
        clauses = text_clauses(self._schema, text, self._english)
        if not clauses:
            return []
        searcher = self._index.searcher()
        found = searcher.search(Query.boolean_query(clauses), 1000, count=False).hits  # no scope clause
        hits = [hit(searcher, address, score) for score, address in found]
        hits.sort(key=lambda h: (-h.score, h.entity_id))
        return hits[:k]


class TestBrokenScopeBlindLexical(InRamTantivy, LexicalIndexContract):
    index_class = ScopeBlindLexicalIndex
