r"""Broken on purpose: text is split into words by an ASCII pattern (`[A-Za-z0-9]+`, `\w` under
`re.ASCII`, a byte-oriented tokenizer), on both the documents and the query: any other letter is a
separator. A Cyrillic, Greek or CJK name leaves no term at all; an accented one only its ASCII
fragments. Every word of the suite before 1.5 was ASCII but for one payload found by its ASCII words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from _shared import InRamTantivy, TestControlTantivy, lexical_factory  # noqa: F401  (the control runs here)

from graphctx.adapters.tantivy import TantivyLexicalIndex
from graphctx.contracts.lexical import LexicalIndexContract
from graphctx.kernel.ports import LexicalDoc, LexicalHit
from graphctx.scope import Scope

_NOT_ASCII = re.compile(r"[^\x00-\x7f]+")
_TEXT_FIELDS = ("name", "qualified_name", "type", "path", "summary", "text")


def ascii_words(text: str) -> str:
    return _NOT_ASCII.sub(" ", text)  # the bug: a non-ASCII letter separates words


class AsciiTokenizer(TantivyLexicalIndex):
    name = "tantivy-ascii-tokenizer"

    def upsert(self, scope: Scope, docs: Sequence[LexicalDoc]) -> None:
        super().upsert(
            scope,
            [
                d.model_copy(
                    update={
                        **{f: ascii_words(getattr(d, f)) for f in _TEXT_FIELDS},
                        "aliases": tuple(ascii_words(a) for a in d.aliases),
                    }
                )
                for d in docs
            ],
        )

    def search(self, scope: Scope, text: str, k: int) -> list[LexicalHit]:
        return super().search(scope, ascii_words(text), k)


class TestBrokenAsciiTokenizer(InRamTantivy, LexicalIndexContract):
    index_class = AsciiTokenizer


create_lexical_index = lexical_factory(AsciiTokenizer)
