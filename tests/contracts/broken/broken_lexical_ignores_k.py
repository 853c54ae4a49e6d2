"""Broken on purpose: a lexical index whose search ignores `k`.

It returns every match of the scope, correctly ordered and scoped, however small `k` is. A query
with a handful of matches looks right; the limit tests (k clamped to 1..100, ties cut at k) must
catch it.
"""

from __future__ import annotations

from _shared import InRamTantivy, TestControlTantivy  # noqa: F401  (the control runs here)

from graphctx.adapters.tantivy import TantivyLexicalIndex
from graphctx.contracts.lexical import LexicalIndexContract
from graphctx.kernel.ports import LexicalHit
from graphctx.scope import Scope


class KIgnoringLexicalIndex(TantivyLexicalIndex):
    name = "tantivy-ignores-k"

    def search(self, scope: Scope, text: str, k: int) -> list[LexicalHit]:
        return super().search(scope, text, 1_000_000)  # the bug: the caller's k is dropped


class TestBrokenIgnoresK(InRamTantivy, LexicalIndexContract):
    index_class = KIgnoringLexicalIndex
