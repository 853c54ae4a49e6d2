"""Broken on purpose: search hands the user's text to tantivy's query parser (inside the scope clause):
`field:value`, `*`, ranges and boosts become syntax, and unbalanced quotes raise.
"""

from __future__ import annotations

from collections.abc import Sequence

from _shared import InRamTantivy, RemembersScopes, TestControlTantivy, hit, lexical_factory  # noqa: F401  (the control runs here)
from tantivy import Occur, Query

from graphctx.adapters.tantivy import TantivyLexicalIndex
from graphctx.adapters.tantivy.query import scope_filter
from graphctx.contracts.lexical import LexicalIndexContract
from graphctx.kernel.ports import LexicalDoc, LexicalHit
from graphctx.scope import Scope


class ParsingLexical(RemembersScopes, TantivyLexicalIndex):
    name = "tantivy-query-parser"

    def upsert(self, scope: Scope, docs: Sequence[LexicalDoc]) -> None:
        self._remember(scope)
        super().upsert(scope, docs)

    def search(self, scope: Scope, text: str, k: int) -> list[LexicalHit]:
        k = max(1, min(k, 100))
        if not text.strip():
            return []
        parsed = self._index.parse_query(text, ["name", "aliases", "summary", "qualified_name"])
        query = Query.boolean_query([(Occur.Must, scope_filter(self._schema, scope)), (Occur.Must, parsed)])
        searcher = self._index.searcher()
        hits = [hit(searcher, a, s) for s, a in searcher.search(query, 1000, count=False).hits]
        return sorted(hits, key=lambda h: (-h.score, h.entity_id))[:k]


class TestBrokenParsingLexical(InRamTantivy, LexicalIndexContract):
    index_class = ParsingLexical


create_lexical_index = lexical_factory(ParsingLexical)
