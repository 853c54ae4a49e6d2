"""Tantivy lexical index: BM25 plus identifier-aware and exact-name fields, scoped inside every query."""

from __future__ import annotations

from graphctx.adapters.tantivy.analysis import exact_terms, identifier_tokens
from graphctx.adapters.tantivy.index import MAX_K, TantivyLexicalIndex
from graphctx.datadir import ensure_dir
from graphctx.settings import Settings


def create_lexical_index(settings: Settings) -> TantivyLexicalIndex:
    """The embedded default: an on-disk index at `<data_dir>/lexical`. Read-only: no writer (so no
    writer lock), each read sees the last commit; an index nobody created yet reads as empty."""
    path = settings.data_dir / "lexical"
    if settings.read_only:
        return TantivyLexicalIndex(path if (path / "meta.json").exists() else None, read_only=True)
    return TantivyLexicalIndex(ensure_dir(path))


__all__ = ["MAX_K", "TantivyLexicalIndex", "create_lexical_index", "exact_terms", "identifier_tokens"]
