"""The lexical contract against our tantivy adapter, on disk and in RAM."""

from __future__ import annotations

from collections.abc import Iterator
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


class TestTantivyInRam(LexicalIndexContract):
    @pytest.fixture
    def lexical_index(self) -> Iterator[TantivyLexicalIndex]:
        index = TantivyLexicalIndex(None)
        yield index
        index.close()
