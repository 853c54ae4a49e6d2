"""The read-trunk contract over the embedded trio: SQLite graph + journal, tantivy, qdrant-edge, and the
model-free `hashing` embedder, opened exactly as a default installation opens them."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphctx.contracts.retrieval import RetrievalContract
from graphctx.kernel.stores import Stores, open_stores
from graphctx.settings import Settings


class TestEmbeddedTrio(RetrievalContract):
    @pytest.fixture
    def stores(self, tmp_path: Path) -> Stores:
        return open_stores(Settings(data_dir=tmp_path / "data", embedder="hashing"))
