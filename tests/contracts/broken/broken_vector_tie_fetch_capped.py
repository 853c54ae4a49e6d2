"""Broken on purpose: search widens its fetch while a tie straddles the k-th place -- but never past one
page of 1,000 points. When more points than that share the k-th score, the engine's point order
decides which of them make it, not their ids. Every tie of the suite before 1.5 (150 points) ended
inside the page. Our qdrant adapters did this before contract 1.5 (`_common.top_k`'s `MAX_FETCH`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from _shared import InDirQdrantEdge, TestControlQdrantEdge  # noqa: F401  (the control runs here)

from graphctx.adapters.qdrant import EdgeVectorIndex
from graphctx.adapters.qdrant._common import TIE_PAD, clamp_k, to_hit
from graphctx.contracts.vector import VectorIndexContract
from graphctx.kernel.ports import VectorHit
from graphctx.scope import Scope
from graphctx.settings import Settings
from graphctx.vectors import checked_vector

PAGE = 1_000


class TieFetchCapped(EdgeVectorIndex):
    name = "qdrant-edge-tie-fetch-capped"

    def search(self, scope: Scope, vector: Sequence[float], k: int) -> list[VectorHit]:
        query = checked_vector(vector, self.dimension).tolist()
        k = clamp_k(k)
        limit = k + TIE_PAD
        with self._using("search"):
            flt = self._filter(scope)
            while True:
                found = self._query(query, flt, limit)
                hits = sorted((to_hit(p, s) for s, p in found), key=lambda h: (-h.score, h.entity_id))
                if len(hits) < limit or limit >= PAGE or hits[k - 1].score > hits[-1].score:  # the bug
                    return hits[:k]
                limit = min(limit * 4, PAGE)


class TestBrokenTieFetchCapped(InDirQdrantEdge, VectorIndexContract):
    index_class = TieFetchCapped


def create_vector_index(settings: Settings, model_id: str, dimension: int) -> EdgeVectorIndex:
    return TieFetchCapped(Path(settings.data_dir) / "vectors", model_id, dimension)
