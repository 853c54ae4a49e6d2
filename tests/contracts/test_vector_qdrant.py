"""The vector contract under plain pytest against qdrant-client's local mode in memory (the same
ClientVectorIndex class a server uses). qdrant-edge and local mode on disk, as the entry points open
them, are certified by `graphctx certify` in test_certificates.py."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from graphctx.adapters.qdrant import ClientVectorIndex
from graphctx.contracts.datasets import FakeEmbedder
from graphctx.contracts.vector import VectorIndexContract

DIMENSION = 32
MODEL_ID = FakeEmbedder(DIMENSION).model_id


class TestQdrantClientInMemory(VectorIndexContract):
    """In memory: nothing to reopen another model's collection on, so the model test skips (naming
    the hook), and the large-shard test skips (local mode declares small_shards_only)."""

    @pytest.fixture
    def vector_index(self) -> Iterator[ClientVectorIndex]:
        index = ClientVectorIndex(":memory:", MODEL_ID, DIMENSION)
        yield index
        index.close()
