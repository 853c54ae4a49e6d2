"""Broken on purpose: the shard (collection) is named by the dimension alone: two embedding models of the same
dimension share it, and the new model's index answers with the old model's vectors.
"""

from __future__ import annotations

from pathlib import Path

from _shared import InDirQdrantEdge, TestControlQdrantEdge  # noqa: F401  (the control runs here)

from graphctx.adapters.qdrant import EdgeVectorIndex
from graphctx.contracts.vector import VectorIndexContract
from graphctx.settings import Settings


class DimensionNamedShard(EdgeVectorIndex):
    name = "qdrant-edge-per-dimension"

    def __init__(self, path: Path, model_id: str, dimension: int) -> None:
        super().__init__(Path(path) / "_", f"dim-{dimension}", dimension)  # the bug: model id left out
        self.model_id = model_id


class TestBrokenDimensionNamedShard(InDirQdrantEdge, VectorIndexContract):
    index_class = DimensionNamedShard


def create_vector_index(settings: Settings, model_id: str, dimension: int) -> EdgeVectorIndex:
    return DimensionNamedShard(Path(settings.data_dir) / "vectors", model_id, dimension)
