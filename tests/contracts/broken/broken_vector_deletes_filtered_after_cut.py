"""Broken on purpose: a delete is a tombstone (a soft delete, purged by a later compaction) that reads
filter out -- and search filters it out of the engine's top k, after the cut: when deleted points are
among the nearest, the answer comes back short (and a scope holding k live points returns fewer).
`hashes` and what is returned are right.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from _shared import InDirQdrantEdge, TestControlQdrantEdge  # noqa: F401  (the control runs here)

from graphctx.adapters.qdrant import EdgeVectorIndex
from graphctx.contracts.vector import VectorIndexContract
from graphctx.kernel.ports import VectorHit, VectorRecord
from graphctx.scope import Scope
from graphctx.settings import Settings


class DeletesFilteredAfterCut(EdgeVectorIndex):
    name = "qdrant-edge-deletes-filtered-after-cut"

    def _tombstones(self) -> set[tuple[Scope, str]]:
        dead: set[tuple[Scope, str]] = self.__dict__.setdefault("_dead", set())
        return dead

    def upsert(self, scope: Scope, records: Sequence[VectorRecord]) -> None:
        super().upsert(scope, records)
        self._tombstones().difference_update((scope, r.entity_id) for r in records)

    def delete(self, scope: Scope, entity_ids: Sequence[str]) -> None:
        self._tombstones().update((scope, e) for e in entity_ids)  # purged "later"

    def search(self, scope: Scope, vector: Sequence[float], k: int) -> list[VectorHit]:
        hits = super().search(scope, vector, k)
        return [h for h in hits if (scope, h.entity_id) not in self._tombstones()]  # the bug: after the cut

    def hashes(self, scope: Scope) -> dict[str, str]:
        return {e: h for e, h in super().hashes(scope).items() if (scope, e) not in self._tombstones()}


class TestBrokenVectorDeletesFilteredAfterCut(InDirQdrantEdge, VectorIndexContract):
    index_class = DeletesFilteredAfterCut


def create_vector_index(settings: Settings, model_id: str, dimension: int) -> EdgeVectorIndex:
    return DeletesFilteredAfterCut(Path(settings.data_dir) / "vectors", model_id, dimension)
