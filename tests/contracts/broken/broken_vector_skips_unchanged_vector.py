"""Broken on purpose: an upsert skips points whose vector is unchanged (a write-saving comparison that
leaves the content hash out), so a new content hash alone is never stored: `hashes` keeps reporting the
old one, and reconcile re-embeds those entities on every run.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from _shared import InDirQdrantEdge, TestControlQdrantEdge  # noqa: F401  (the control runs here)

from graphctx.adapters.qdrant import EdgeVectorIndex
from graphctx.contracts.vector import VectorIndexContract
from graphctx.kernel.ports import VectorRecord
from graphctx.scope import Scope
from graphctx.settings import Settings


class SkipsUnchangedVector(EdgeVectorIndex):
    name = "qdrant-edge-skips-unchanged-vector"

    def upsert(self, scope: Scope, records: Sequence[VectorRecord]) -> None:
        kept: dict[tuple[Scope, str], tuple[float, ...]] = self.__dict__.setdefault("_kept_vectors", {})
        fresh = [r for r in records if kept.get((scope, r.entity_id)) != r.vector]  # the bug
        super().upsert(scope, fresh)
        kept.update(((scope, r.entity_id), r.vector) for r in records)

    def delete(self, scope: Scope, entity_ids: Sequence[str]) -> None:
        super().delete(scope, entity_ids)
        for entity_id in entity_ids:
            self.__dict__.get("_kept_vectors", {}).pop((scope, entity_id), None)


class TestBrokenSkipsUnchangedVector(InDirQdrantEdge, VectorIndexContract):
    index_class = SkipsUnchangedVector


def create_vector_index(settings: Settings, model_id: str, dimension: int) -> EdgeVectorIndex:
    return SkipsUnchangedVector(Path(settings.data_dir) / "vectors", model_id, dimension)
