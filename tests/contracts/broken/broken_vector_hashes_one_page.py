"""Broken on purpose: `hashes` reads one scroll page of 1,000 points and stops: reconcile never sees the
rest of a large scope."""

from __future__ import annotations

from pathlib import Path

from _shared import InDirQdrantEdge, TestControlQdrantEdge  # noqa: F401  (the control runs here)

from graphctx.adapters.qdrant import EdgeVectorIndex
from graphctx.adapters.qdrant._common import PAGE
from graphctx.contracts.vector import VectorIndexContract
from graphctx.scope import Scope
from graphctx.settings import Settings


class OnePageVectorHashes(EdgeVectorIndex):
    name = "qdrant-edge-hashes-one-page"

    def hashes(self, scope: Scope) -> dict[str, str]:
        with self._using("scroll"):
            payloads, _ = self._scroll(self._filter(scope), None, PAGE)  # the bug: no next page
        return {str(p["entity_id"]): str(p["content_hash"]) for p in payloads if p}


class TestBrokenOnePageVectorHashes(InDirQdrantEdge, VectorIndexContract):
    index_class = OnePageVectorHashes


def create_vector_index(settings: Settings, model_id: str, dimension: int) -> EdgeVectorIndex:
    return OnePageVectorHashes(Path(settings.data_dir) / "vectors", model_id, dimension)
