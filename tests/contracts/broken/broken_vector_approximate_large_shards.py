"""Broken on purpose: exact search on small shards, an approximate index on large ones: past 20,000 points the
search misses about one neighbour in five (as filtered HNSW does on a tenant slice). Small-data tests
pass; only the large-shard recall test sees it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from _shared import InDirQdrantEdge, TestControlQdrantEdge  # noqa: F401  (the control runs here)

from graphctx.adapters.qdrant import EdgeVectorIndex
from graphctx.contracts.vector import VectorIndexContract
from graphctx.settings import Settings


class ApproximateWhenLarge(EdgeVectorIndex):
    name = "qdrant-edge-approximate-large"

    def _query(self, vector: list[float], flt: Any, limit: int) -> list[tuple[float, Any]]:
        found = super()._query(vector, flt, limit * 2)
        if self._shard.info().points_count <= 20_000:
            return found[:limit]
        missed = [p for p in found if int(hashlib.sha256(str(p[1]).encode()).hexdigest(), 16) % 5]
        return missed[:limit]


class TestBrokenApproximateWhenLarge(InDirQdrantEdge, VectorIndexContract):
    index_class = ApproximateWhenLarge


def create_vector_index(settings: Settings, model_id: str, dimension: int) -> EdgeVectorIndex:
    return ApproximateWhenLarge(Path(settings.data_dir) / "vectors", model_id, dimension)
