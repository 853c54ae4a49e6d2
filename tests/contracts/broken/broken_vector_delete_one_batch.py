"""Broken: delete sends only the first write batch (256 point ids) of a call -- the batching loop
returns after its first pass: deleting more ids at once leaves the rest."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from _shared import InDirQdrantEdge, TestControlQdrantEdge  # noqa: F401

from graphctx.adapters.qdrant import EdgeVectorIndex
from graphctx.adapters.qdrant import _common as c
from graphctx.contracts.vector import VectorIndexContract
from graphctx.scope import Scope
from graphctx.settings import Settings


class DeleteOneBatch(EdgeVectorIndex):
    name = "qdrant-edge-delete-one-batch"

    def delete(self, scope: Scope, entity_ids: Sequence[str]) -> None:
        ids = c.point_ids(c.require_scope(scope), entity_ids)
        with self._using("delete"):
            for batch in c.batched(ids, c.WRITE_BATCH):
                self._remove(batch)
                return


class TestBrokenDeleteOneBatch(InDirQdrantEdge, VectorIndexContract):
    index_class = DeleteOneBatch


def create_vector_index(settings: Settings, model_id: str, dimension: int) -> EdgeVectorIndex:
    return DeleteOneBatch(Path(settings.data_dir) / "vectors", model_id, dimension)
