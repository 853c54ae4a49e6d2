"""Broken: ties are ordered by the entity id case-folded (a keyword sort with a lowercase normaliser,
a locale collation): among equal scores `B` comes after `a` (code-point order puts it first)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from _shared import InDirQdrantEdge, TestControlQdrantEdge  # noqa: F401

from graphctx.adapters.qdrant import EdgeVectorIndex
from graphctx.adapters.qdrant._common import clamp_k
from graphctx.contracts.vector import VectorIndexContract
from graphctx.kernel.ports import VectorHit
from graphctx.scope import Scope
from graphctx.settings import Settings


class TiesByFoldedId(EdgeVectorIndex):
    name = "qdrant-edge-ties-by-folded-id"

    def search(self, scope: Scope, vector: Sequence[float], k: int) -> list[VectorHit]:
        hits = super().search(scope, vector, 100)
        hits.sort(key=lambda h: (-h.score, h.entity_id.casefold()))
        return hits[: clamp_k(k)]


class TestBrokenTiesByFoldedIdVector(InDirQdrantEdge, VectorIndexContract):
    index_class = TiesByFoldedId


def create_vector_index(settings: Settings, model_id: str, dimension: int) -> EdgeVectorIndex:
    return TiesByFoldedId(Path(settings.data_dir) / "vectors", model_id, dimension)
