"""Broken on purpose: search takes the top hits over every scope, then keeps the caller's: the scope is a
filter applied after the cut, not a clause of the query. Another scope's better matches crowd the
caller's own out of the answer (nothing foreign is returned).
"""

from __future__ import annotations

from collections.abc import Sequence

from _shared import InRamTantivy, RemembersScopes, TestControlTantivy, hit, lexical_factory  # noqa: F401  (the control runs here)
from tantivy import Query

from graphctx.adapters.tantivy import TantivyLexicalIndex
from graphctx.adapters.tantivy.query import text_clauses
from graphctx.contracts.lexical import LexicalIndexContract
from graphctx.kernel.ports import LexicalDoc, LexicalHit
from graphctx.scope import Scope


class PostFilteringLexical(RemembersScopes, TantivyLexicalIndex):
    name = "tantivy-post-filter"

    def upsert(self, scope: Scope, docs: Sequence[LexicalDoc]) -> None:
        self._remember(scope)
        super().upsert(scope, docs)

    def search(self, scope: Scope, text: str, k: int) -> list[LexicalHit]:
        k = max(1, min(k, 100))
        clauses = text_clauses(self._schema, text, self._english)
        if not clauses:
            return []
        searcher = self._index.searcher()
        found = searcher.search(Query.boolean_query(clauses), k + 16, count=False).hits
        hits = [hit(searcher, a, s) for s, a in found]
        mine = [
            h
            for h in hits
            if (h.tenant_id, h.namespace, h.graph_id) == (scope.tenant_id, scope.namespace, scope.graph_id)
        ]
        return sorted(mine, key=lambda h: (-h.score, h.entity_id))[:k]


class TestBrokenPostFilteringLexical(InRamTantivy, LexicalIndexContract):
    index_class = PostFilteringLexical


create_lexical_index = lexical_factory(PostFilteringLexical)
