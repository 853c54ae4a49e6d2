"""What the broken adapters' files share: the fixtures that open a fresh adapter of a given class,
and the control classes running the same contract on the unbroken adapter.

The name does not match pytest's `test_*.py`, so this module is never collected on its own; a
broken file that imports a control class (`TestControlSqlite`, `TestControlTantivy`) has pytest
collect it there, under that file's node ids.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

import pytest

from graphctx.adapters.sqlite import SqliteGraphStore
from graphctx.adapters.tantivy import TantivyLexicalIndex
from graphctx.contracts.graph import GraphStoreContract
from graphctx.contracts.lexical import LexicalIndexContract


class InMemorySqlite:
    """`graph_store`: a fresh in-memory `store_class`, schema ensured, closed after the test."""

    store_class: ClassVar[type[SqliteGraphStore]] = SqliteGraphStore

    @pytest.fixture
    def graph_store(self) -> Iterator[SqliteGraphStore]:
        store = self.store_class(":memory:")
        store.ensure_schema()
        yield store
        store.close()


class InRamTantivy:
    """`lexical_index`: a fresh in-RAM `index_class`, closed after the test."""

    index_class: ClassVar[type[TantivyLexicalIndex]] = TantivyLexicalIndex

    @pytest.fixture
    def lexical_index(self) -> Iterator[TantivyLexicalIndex]:
        index = self.index_class(None)
        yield index
        index.close()


class TestControlSqlite(InMemorySqlite, GraphStoreContract):
    """The graph contract on the unbroken in-memory SQLite store."""


class TestControlTantivy(InRamTantivy, LexicalIndexContract):
    """The lexical contract on the unbroken in-RAM tantivy index."""
