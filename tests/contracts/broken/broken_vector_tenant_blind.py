"""Broken on purpose: the search filter binds the namespace and the graph id but forgets the tenant: the same
namespace of another tenant answers too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from _shared import InDirQdrantEdge, TestControlQdrantEdge  # noqa: F401  (the control runs here)
from qdrant_edge import FieldCondition, Filter, MatchValue

from graphctx.adapters.qdrant import EdgeVectorIndex
from graphctx.adapters.qdrant._common import SCOPE_FIELDS
from graphctx.contracts.vector import VectorIndexContract
from graphctx.scope import Scope
from graphctx.settings import Settings


class TenantBlindVectors(EdgeVectorIndex):
    name = "qdrant-edge-tenant-blind"

    def _filter(self, scope: Scope) -> Any:
        fields = [f for f in SCOPE_FIELDS if f != "tenant_id"]
        return Filter(must=[FieldCondition(key=f, match=MatchValue(getattr(scope, f))) for f in fields])


class TestBrokenTenantBlindVectors(InDirQdrantEdge, VectorIndexContract):
    index_class = TenantBlindVectors


def create_vector_index(settings: Settings, model_id: str, dimension: int) -> EdgeVectorIndex:
    return TenantBlindVectors(Path(settings.data_dir) / "vectors", model_id, dimension)
