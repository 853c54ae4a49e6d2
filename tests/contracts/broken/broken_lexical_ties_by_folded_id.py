"""Broken: ties are ordered by the entity id case-folded (a keyword sort field with a lowercase
normaliser): among equal scores `B` comes after `a` (code-point order puts it first)."""

from __future__ import annotations

from _shared import InRamTantivy, TestControlTantivy, lexical_factory  # noqa: F401

from graphctx.adapters.tantivy import TantivyLexicalIndex
from graphctx.contracts.lexical import LexicalIndexContract
from graphctx.kernel.ports import LexicalHit
from graphctx.scope import Scope


class TiesByFoldedId(TantivyLexicalIndex):
    name = "tantivy-ties-by-folded-id"

    def search(self, scope: Scope, text: str, k: int) -> list[LexicalHit]:
        hits = super().search(scope, text, 100)
        hits.sort(key=lambda h: (-h.score, h.entity_id.casefold()))
        return (
            hits[: max(1, min(k, 100))]
            if isinstance(k, int) and not isinstance(k, bool)
            else super().search(scope, text, k)
        )


class TestBrokenTiesByFoldedIdLexical(InRamTantivy, LexicalIndexContract):
    index_class = TiesByFoldedId


create_lexical_index = lexical_factory(TiesByFoldedId)
