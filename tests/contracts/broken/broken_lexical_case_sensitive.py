"""Broken on purpose: a plain BM25 index (no identifier analysis declared) that matches words in the
case they were written: `REDIS` does not find `redis-sessions`. Every query of the suite before 1.5 was
written in the case of its document, or ran only under the identifier capabilities, which this index
does not declare.
"""

from __future__ import annotations

import re

from _shared import InRamTantivy, RemembersDocs, TestControlTantivy, lexical_factory, words  # noqa: F401

from graphctx.contracts.lexical import LexicalIndexContract
from graphctx.kernel.ports import Capabilities, LexicalHit
from graphctx.scope import Scope


class CaseSensitive(RemembersDocs):
    name = "tantivy-case-sensitive"

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(durable=self._path is not None, exact_search=True)

    def search(self, scope: Scope, text: str, k: int) -> list[LexicalHit]:
        asked = re.findall(r"\w+", text)
        if not asked:
            return super().search(scope, text, k)
        stored = {w for (s, _), d in self.kept().items() if s == scope for w in words(d)}
        kept = [w for w in asked if w in stored]  # the bug: a word matches only as it was written
        return super().search(scope, " ".join(kept), k) if kept else []


class TestBrokenCaseSensitive(InRamTantivy, LexicalIndexContract):
    index_class = CaseSensitive


create_lexical_index = lexical_factory(CaseSensitive)
