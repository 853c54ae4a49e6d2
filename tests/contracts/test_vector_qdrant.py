"""The vector contract against our Qdrant adapters: qdrant-edge on disk, and qdrant-client's local mode
(":memory:") standing in for the server code path (the same ClientVectorIndex class a server uses)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from graphctx.adapters.qdrant import ClientVectorIndex, EdgeVectorIndex
from graphctx.contracts.datasets import FakeEmbedder
from graphctx.contracts.vector import VectorIndexContract

DIMENSION = 32
MODEL_ID = FakeEmbedder(DIMENSION).model_id


class TestQdrantEdge(VectorIndexContract):
    @pytest.fixture
    def vector_index(self, tmp_path: Path) -> Iterator[EdgeVectorIndex]:
        index = EdgeVectorIndex(tmp_path / "vectors", MODEL_ID, DIMENSION)
        yield index
        index.close()


class TestQdrantClientLocal(VectorIndexContract):
    @pytest.fixture
    def vector_index(self) -> Iterator[ClientVectorIndex]:
        index = ClientVectorIndex(":memory:", MODEL_ID, DIMENSION)
        yield index
        index.close()
