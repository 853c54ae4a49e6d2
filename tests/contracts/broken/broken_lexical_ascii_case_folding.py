"""Broken on purpose: a plain BM25 index (no identifier analysis declared) that folds letter case for
ASCII letters only (SQLite's `NOCASE` and `lower()`, Rust's `to_ascii_lowercase`, a byte-wise
`tolower`): `REDIS` finds `redis-sessions`, but `МОСКВА` does not find `Москва` nor `ZÜRICH`
`Zürich`. Every word the suite's letter-case test asked for before 1.5's second sweep was ASCII.
"""

from __future__ import annotations

import re

from _shared import InRamTantivy, RemembersDocs, TestControlTantivy, lexical_factory, words  # noqa: F401

from graphctx.contracts.lexical import LexicalIndexContract
from graphctx.kernel.ports import Capabilities, LexicalHit
from graphctx.scope import Scope


def ascii_lower(word: str) -> str:
    return word.encode("utf-8", "surrogatepass").lower().decode("utf-8", "surrogatepass")  # the bug


class AsciiCaseFolding(RemembersDocs):
    name = "tantivy-ascii-case-folding"

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(durable=self._path is not None, exact_search=True)

    def search(self, scope: Scope, text: str, k: int) -> list[LexicalHit]:
        asked = re.findall(r"\w+", text)
        if not asked:
            return super().search(scope, text, k)
        stored = {ascii_lower(w) for (s, _), d in self.kept().items() if s == scope for w in words(d)}
        kept = [w for w in asked if ascii_lower(w) in stored]  # a word meets its ASCII-folded spelling only
        return super().search(scope, " ".join(kept), k) if kept else []


class TestBrokenAsciiCaseFolding(InRamTantivy, LexicalIndexContract):
    index_class = AsciiCaseFolding


create_lexical_index = lexical_factory(AsciiCaseFolding)
