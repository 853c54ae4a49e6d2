"""Broken on purpose: search takes the nearest points over every scope, then keeps the caller's: the scope
is a filter applied after the cut. Another scope's nearer points crowd the caller's out (nothing foreign
is returned)."""

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


class PostFilteringVectors(EdgeVectorIndex):
    name = "qdrant-edge-post-filter"

    def search(self, scope: Scope, vector: Sequence[float], k: int) -> list[VectorHit]:
        query = checked_vector(vector, self.dimension).tolist()
        k = clamp_k(k)
        with self._using("search"):
            found = self._query(query, None, k + 8)
        hits = [to_hit(p, s) for s, p in found]
        mine = [
            h
            for h in hits
            if (h.tenant_id, h.namespace, h.graph_id) == (scope.tenant_id, scope.namespace, scope.graph_id)
        ]
        return sorted(mine, key=lambda h: (-h.score, h.entity_id))[:k]


class TestBrokenPostFilteringVectors(InDirQdrantEdge, VectorIndexContract):
    index_class = PostFilteringVectors


def create_vector_index(settings: Settings, model_id: str, dimension: int) -> EdgeVectorIndex:
    return PostFilteringVectors(Path(settings.data_dir) / "vectors", model_id, dimension)
