"""Broken on purpose: a delete is a tombstone kept in memory (a soft delete whose purge into the store
waits for a compaction a short-lived process never reaches); reads filter it out correctly -- search
fetches past k by the number of tombstones, so answers are whole -- but close() forgets it: opened
again, the store answers with every deleted point. Nothing before contract 1.5 reopened a vector
index after a delete.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from _shared import InDirQdrantEdge, TestControlQdrantEdge  # noqa: F401  (the control runs here)

from graphctx.adapters.qdrant import EdgeVectorIndex
from graphctx.adapters.qdrant._common import clamp_k, to_hit, top_k
from graphctx.contracts.vector import VectorIndexContract
from graphctx.kernel.ports import VectorHit, VectorRecord
from graphctx.scope import Scope
from graphctx.settings import Settings
from graphctx.vectors import checked_vector


class DeletesNotDurable(EdgeVectorIndex):
    name = "qdrant-edge-deletes-not-durable"

    def _tombstones(self) -> set[tuple[Scope, str]]:
        dead: set[tuple[Scope, str]] = self.__dict__.setdefault("_dead", set())  # the bug: memory only
        return dead

    def upsert(self, scope: Scope, records: Sequence[VectorRecord]) -> None:
        super().upsert(scope, records)
        self._tombstones().difference_update((scope, r.entity_id) for r in records)

    def delete(self, scope: Scope, entity_ids: Sequence[str]) -> None:
        self._tombstones().update((scope, e) for e in entity_ids)

    def search(self, scope: Scope, vector: Sequence[float], k: int) -> list[VectorHit]:
        k = clamp_k(k)
        dead = {e for s, e in self._tombstones() if s == scope}
        query = checked_vector(vector, self.dimension).tolist()
        with self._using("search"):
            flt = self._filter(scope)
            fetched = top_k(lambda n: [to_hit(p, s) for s, p in self._query(query, flt, n)], k + len(dead))
        return [h for h in fetched if h.entity_id not in dead][:k]  # past k by the tombstones: whole

    def hashes(self, scope: Scope) -> dict[str, str]:
        return {e: h for e, h in super().hashes(scope).items() if (scope, e) not in self._tombstones()}


class TestBrokenDeletesNotDurable(InDirQdrantEdge, VectorIndexContract):
    index_class = DeletesNotDurable


def create_vector_index(settings: Settings, model_id: str, dimension: int) -> EdgeVectorIndex:
    return DeletesNotDurable(Path(settings.data_dir) / "vectors", model_id, dimension)
