"""Tantivy lexical index: BM25 plus identifier-aware and exact-name fields, scoped inside every query.

The package's names are imported when first asked for (PEP 562): the writer child
(`python -m graphctx.adapters.tantivy.writer`) imports this package first, and needs only what
writing needs, not the index, the settings or the models."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from graphctx.adapters.tantivy.analysis import exact_terms, identifier_tokens
    from graphctx.adapters.tantivy.index import MAX_K, TantivyLexicalIndex
    from graphctx.settings import Settings

_WHERE = {
    "exact_terms": "analysis",
    "identifier_tokens": "analysis",
    "MAX_K": "index",
    "TantivyLexicalIndex": "index",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


def create_lexical_index(settings: Settings) -> TantivyLexicalIndex:
    """The embedded default: an on-disk index at `<data_dir>/lexical`. Read-only: no writer (so no
    writer lock), each read sees the last commit; an index nobody created yet reads as empty."""
    from graphctx.adapters.tantivy.index import TantivyLexicalIndex
    from graphctx.datadir import ensure_dir

    path = settings.data_dir / "lexical"
    if settings.read_only:
        return TantivyLexicalIndex(path if (path / "meta.json").exists() else None, read_only=True)
    return TantivyLexicalIndex(ensure_dir(path))


__all__ = ["MAX_K", "TantivyLexicalIndex", "create_lexical_index", "exact_terms", "identifier_tokens"]
