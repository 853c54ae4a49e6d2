"""Tantivy lexical index: BM25 plus identifier-aware and exact-name fields, scoped inside every query."""

from __future__ import annotations

from graphctx.adapters.tantivy.analysis import exact_terms, identifier_tokens
from graphctx.adapters.tantivy.index import MAX_K, TantivyLexicalIndex
from graphctx.settings import Settings


def create_lexical_index(settings: Settings) -> TantivyLexicalIndex:
    """The embedded default: an on-disk index at `<data_dir>/lexical`."""
    path = settings.data_dir / "lexical"
    path.mkdir(parents=True, exist_ok=True)
    return TantivyLexicalIndex(path)


__all__ = ["MAX_K", "TantivyLexicalIndex", "create_lexical_index", "exact_terms", "identifier_tokens"]
