"""Broken: the point id is uuid5 of tenant, namespace, graph id and entity id joined with ':' (a
character scope selectors may hold): tenant `acme:eu`/namespace `prod` and tenant `acme`/namespace
`eu:prod` share every point id, so an upsert in one replaces the other's point (and a delete removes it)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from pathlib import Path

from _shared import InDirQdrantEdge, TestControlQdrantEdge  # noqa: F401

from graphctx.adapters.qdrant import EdgeVectorIndex
from graphctx.adapters.qdrant import _common as c
from graphctx.contracts.vector import VectorIndexContract
from graphctx.kernel.ports import VectorRecord
from graphctx.scope import Scope
from graphctx.settings import Settings


def colon_id(scope: Scope, entity_id: str) -> str:
    return str(
        uuid.uuid5(c._POINT_NS, ":".join((scope.tenant_id, scope.namespace, scope.graph_id, entity_id)))
    )


class ColonPointId(EdgeVectorIndex):
    name = "qdrant-edge-colon-id"

    def upsert(self, scope: Scope, records: Sequence[VectorRecord]) -> None:
        points = [
            (colon_id(scope, p[2]["entity_id"]), p[1], p[2])
            for p in c.prepare_points(c.require_scope(scope), records, self.dimension)
        ]
        with self._using("upsert"):
            for batch in c.batched(points, c.WRITE_BATCH):
                self._write(batch)

    def delete(self, scope: Scope, entity_ids: Sequence[str]) -> None:
        c.point_ids(c.require_scope(scope), entity_ids)  # same validation
        ids = sorted({colon_id(scope, e) for e in entity_ids})
        with self._using("delete"):
            for batch in c.batched(ids, c.WRITE_BATCH):
                self._remove(batch)


class TestBrokenColonPointId(InDirQdrantEdge, VectorIndexContract):
    index_class = ColonPointId


def create_vector_index(settings: Settings, model_id: str, dimension: int) -> EdgeVectorIndex:
    return ColonPointId(Path(settings.data_dir) / "vectors", model_id, dimension)
