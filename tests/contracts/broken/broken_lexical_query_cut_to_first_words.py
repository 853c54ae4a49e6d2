"""Broken on purpose: search keeps the first 64 words of the query and drops the rest (a guard against
slow queries, or a way round a boolean query's clause limit such as Lucene's 1,024): a word past the
64th counts for nothing. Every query of the suite before 1.5 had fewer words.
"""

from __future__ import annotations

from _shared import InRamTantivy, TestControlTantivy, lexical_factory  # noqa: F401  (the control runs here)

from graphctx.adapters.tantivy import TantivyLexicalIndex
from graphctx.contracts.lexical import LexicalIndexContract
from graphctx.kernel.ports import LexicalHit
from graphctx.scope import Scope

MAX_WORDS = 64


class QueryCutToFirstWords(TantivyLexicalIndex):
    name = "tantivy-query-cut-to-first-words"

    def search(self, scope: Scope, text: str, k: int) -> list[LexicalHit]:
        words = text.split()
        if len(words) > MAX_WORDS:
            text = " ".join(words[:MAX_WORDS])  # the bug
        return super().search(scope, text, k)


class TestBrokenQueryCutToFirstWords(InRamTantivy, LexicalIndexContract):
    index_class = QueryCutToFirstWords


create_lexical_index = lexical_factory(QueryCutToFirstWords)
