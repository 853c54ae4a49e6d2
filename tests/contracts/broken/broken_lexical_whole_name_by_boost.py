"""Broken on purpose: a whole-name match is only a boosted term among the others (how the reference
index ranked it before contract 1.5): a document that repeats the word in its name parts, aliases,
summary and indexed-only text can outscore the entity whose whole name the query is. Multi-part
identifiers still rank first (their exact terms are rare), which is all contract 1.4 checked.
"""

from __future__ import annotations

from _shared import InRamTantivy, TestControlTantivy, lexical_factory  # noqa: F401
from tantivy import Occur, Query

from graphctx.adapters.tantivy import TantivyLexicalIndex
from graphctx.adapters.tantivy.analysis import clean, query_exact_terms
from graphctx.adapters.tantivy.query import scope_filter, text_clauses
from graphctx.adapters.tantivy.schema import EXACT
from graphctx.contracts.lexical import LexicalIndexContract
from graphctx.kernel.ports import LexicalHit
from graphctx.scope import Scope


class WholeNameByBoost(TantivyLexicalIndex):
    name = "tantivy-whole-name-by-boost"

    def search(self, scope: Scope, text: str, k: int) -> list[LexicalHit]:
        import graphctx.adapters.tantivy.index as module

        def boosted(schema, scope, text, english, weights):  # type: ignore[no-untyped-def]
            clauses = [
                c
                for c in text_clauses(schema, text, english, weights)
                if not repr(c[1]).startswith("Query(Const(")  # the bug: no dominating whole-name score
            ]
            clauses += [
                (Occur.Should, Query.boost_query(Query.term_query(schema, EXACT, t), weights.exact))
                for t in query_exact_terms(clean(text))
            ]
            if not clauses:
                return None
            return Query.boolean_query(
                [(Occur.Must, scope_filter(schema, scope)), (Occur.Must, Query.boolean_query(clauses))]
            )

        real, module.search_query = module.search_query, boosted
        try:
            return super().search(scope, text, k)
        finally:
            module.search_query = real


class TestBrokenWholeNameByBoost(InRamTantivy, LexicalIndexContract):
    index_class = WholeNameByBoost


create_lexical_index = lexical_factory(WholeNameByBoost)
