"""Broken on purpose: search fetches exactly k points and sorts them by (score, id): when a tie straddles the
k-th place the engine's point order decides which tied points make it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from _shared import InDirQdrantEdge, TestControlQdrantEdge  # noqa: F401  (the control runs here)

from graphctx.adapters.qdrant import EdgeVectorIndex
from graphctx.adapters.qdrant._common import clamp_k, to_hit
from graphctx.contracts.vector import VectorIndexContract
from graphctx.kernel.ports import VectorHit
from graphctx.scope import Scope
from graphctx.settings import Settings
from graphctx.vectors import checked_vector


class UnpaddedTies(EdgeVectorIndex):
    name = "qdrant-edge-unpadded-ties"

    def search(self, scope: Scope, vector: Sequence[float], k: int) -> list[VectorHit]:
        query = checked_vector(vector, self.dimension).tolist()
        k = clamp_k(k)
        with self._using("search"):
            found = self._query(query, self._filter(scope), k)
        return sorted((to_hit(p, s) for s, p in found), key=lambda h: (-h.score, h.entity_id))


class TestBrokenUnpaddedTies(InDirQdrantEdge, VectorIndexContract):
    index_class = UnpaddedTies


def create_vector_index(settings: Settings, model_id: str, dimension: int) -> EdgeVectorIndex:
    return UnpaddedTies(Path(settings.data_dir) / "vectors", model_id, dimension)
