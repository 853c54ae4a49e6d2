"""The lexical contract under plain pytest against our tantivy adapter on disk (the entry point, and the
in-RAM variant, are certified by `graphctx certify` in test_certificates.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from graphctx.adapters.tantivy import TantivyLexicalIndex
from graphctx.contracts.lexical import LexicalIndexContract


class TestTantivyOnDisk(LexicalIndexContract):
    @pytest.fixture
    def lexical_index(self, tmp_path: Path) -> Iterator[TantivyLexicalIndex]:
        index = TantivyLexicalIndex(tmp_path / "lexical")
        yield index
        index.close()

    @pytest.fixture
    def reopen_lexical_index(self, tmp_path: Path) -> Callable[[TantivyLexicalIndex], TantivyLexicalIndex]:
        return lambda index: TantivyLexicalIndex(tmp_path / "lexical")
