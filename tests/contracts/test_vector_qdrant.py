"""The vector contract against our Qdrant adapters: qdrant-edge on disk, and qdrant-client's local mode
(on disk) standing in for the server code path (the same ClientVectorIndex class a server uses)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
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

    @pytest.fixture
    def vector_index_for_model(self, tmp_path: Path) -> Callable[[str], EdgeVectorIndex]:
        """Another model's shard in the same directory."""
        return lambda model_id: EdgeVectorIndex(tmp_path / "vectors", model_id, DIMENSION)


class TestQdrantClientLocal(VectorIndexContract):
    """Local mode on a directory (durable), so another model's collection can open on the same store."""

    @pytest.fixture
    def vector_index(self, tmp_path: Path) -> Iterator[ClientVectorIndex]:
        index = ClientVectorIndex(str(tmp_path / "local"), MODEL_ID, DIMENSION)
        yield index
        index.close()

    @pytest.fixture
    def vector_index_for_model(self, tmp_path: Path) -> Callable[[str], ClientVectorIndex]:
        return lambda model_id: ClientVectorIndex(str(tmp_path / "local"), model_id, DIMENSION)
