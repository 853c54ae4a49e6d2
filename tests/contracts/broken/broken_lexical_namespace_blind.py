"""Broken on purpose: the search's scope clause binds the tenant and the graph id but forgets the
namespace: a sibling namespace of the same tenant leaks into every search.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from _shared import InRamTantivy, RemembersScopes, TestControlTantivy  # noqa: F401  (the control runs here)
from tantivy import Occur, Query

from graphctx.adapters.tantivy import TantivyLexicalIndex
from graphctx.adapters.tantivy.query import text_clauses
from graphctx.adapters.tantivy.schema import SCOPE_FIELDS
from graphctx.contracts.lexical import LexicalIndexContract
from graphctx.kernel.ports import LexicalDoc, LexicalHit
from graphctx.scope import Scope
from graphctx.settings import Settings


class NamespaceBlindLexical(RemembersScopes, TantivyLexicalIndex):
    name = "tantivy-namespace-blind"

    def upsert(self, scope: Scope, docs: Sequence[LexicalDoc]) -> None:
        self._remember(scope)
        super().upsert(scope, docs)

    def search(self, scope: Scope, text: str, k: int) -> list[LexicalHit]:
        k = max(1, min(k, 100))
        clauses = text_clauses(self._schema, text, self._english)
        if not clauses:
            return []
        values = dict(zip(SCOPE_FIELDS, (scope.tenant_id, scope.namespace, scope.graph_id), strict=True))
        scoped = [
            (Occur.Must, Query.term_query(self._schema, f, values[f]))
            for f in SCOPE_FIELDS
            if f != "namespace"
        ]
        query = Query.boolean_query([*scoped, (Occur.Must, Query.boolean_query(clauses))])
        searcher = self._index.searcher()
        hits = [self._hit(searcher, a, s) for s, a in searcher.search(query, 1000, count=False).hits]
        hits.sort(key=lambda h: (-h.score, h.entity_id))
        return hits[:k]


class TestBrokenNamespaceBlindLexical(InRamTantivy, LexicalIndexContract):
    index_class = NamespaceBlindLexical


def create_lexical_index(settings: Settings) -> TantivyLexicalIndex:
    path = Path(settings.data_dir) / "lexical"
    path.mkdir(parents=True, exist_ok=True)
    return NamespaceBlindLexical(path)
