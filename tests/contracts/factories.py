"""`graphctx certify` factories (`tests.contracts.factories:NAME`) for our adapters in the variants
that have no entry point of their own."""

from __future__ import annotations

from graphctx.adapters.tantivy import TantivyLexicalIndex
from graphctx.settings import Settings


def tantivy_in_ram(settings: Settings) -> TantivyLexicalIndex:
    """The tantivy index in RAM (the entry point `tantivy` is the on-disk one)."""
    del settings
    return TantivyLexicalIndex(None)
