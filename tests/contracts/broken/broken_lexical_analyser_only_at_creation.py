"""Broken on purpose: the index registers its custom analyser (tantivy persists the schema's field
options but not the analysers they name) only when it creates the directory, not when it opens one
that exists: everything is right until the first reopen, after which reads still work but every
write fails (`Error getting tokenizer for field`). Nothing before contract 1.5's second sweep reopened
a lexical index.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import tantivy
from _shared import InDirTantivy, TestControlTantivyOnDisk, lexical_factory  # noqa: F401  (the control runs here)

from graphctx.adapters.tantivy import TantivyLexicalIndex
from graphctx.contracts.lexical import LexicalIndexContract


@contextmanager
def _analysers_not_registered() -> Iterator[None]:
    original = tantivy.Index.register_tokenizer
    tantivy.Index.register_tokenizer = lambda self, name, analyser: None  # type: ignore[method-assign]
    try:
        yield
    finally:
        tantivy.Index.register_tokenizer = original  # type: ignore[method-assign]


class AnalyserOnlyAtCreation(TantivyLexicalIndex):
    name = "tantivy-analyser-only-at-creation"

    def __init__(self, path: Path | None, *args: Any, **kwargs: Any) -> None:
        if path is not None and (path / "meta.json").exists():  # the bug: an existing index is "ready"
            with _analysers_not_registered():
                super().__init__(path, *args, **kwargs)
        else:
            super().__init__(path, *args, **kwargs)


class TestBrokenAnalyserOnlyAtCreation(InDirTantivy, LexicalIndexContract):
    index_class = AnalyserOnlyAtCreation


create_lexical_index = lexical_factory(AnalyserOnlyAtCreation)
