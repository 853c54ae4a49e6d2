"""Broken on purpose: one English analyser (stop words removed, as Elasticsearch's `english` analyser
or a "remove stop words everywhere" step does) runs on every field, names and aliases included, and on
the query: the team `IT` and the band `The Who` have no term left to be found by. Every name of the
suite before 1.5's second sweep held a word no stop list drops.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from _shared import InRamTantivy, TestControlTantivy, lexical_factory  # noqa: F401  (the control runs here)

from graphctx.adapters.tantivy import TantivyLexicalIndex
from graphctx.contracts.lexical import LexicalIndexContract
from graphctx.kernel.ports import LexicalDoc, LexicalHit
from graphctx.scope import Scope

# Lucene's English stop words (what tantivy's and Elasticsearch's English filters drop)
STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "if",
        "in",
        "into",
        "is",
        "it",
        "no",
        "not",
        "of",
        "on",
        "or",
        "such",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "will",
        "with",
    ]
)
_WORD = re.compile(r"\w+")


def without_stop_words(text: str) -> str:
    return _WORD.sub(lambda m: "" if m.group().lower() in STOP_WORDS else m.group(), text)  # the bug


class StopWordsInNames(TantivyLexicalIndex):
    name = "tantivy-stop-words-in-names"

    def upsert(self, scope: Scope, docs: Sequence[LexicalDoc]) -> None:
        super().upsert(
            scope,
            [
                d.model_copy(
                    update={
                        "name": without_stop_words(d.name),
                        "aliases": tuple(without_stop_words(a) for a in d.aliases),
                    }
                )
                for d in docs
            ],
        )

    def search(self, scope: Scope, text: str, k: int) -> list[LexicalHit]:
        return super().search(scope, without_stop_words(text), k)


class TestBrokenStopWordsInNames(InRamTantivy, LexicalIndexContract):
    index_class = StopWordsInNames


create_lexical_index = lexical_factory(StopWordsInNames)
