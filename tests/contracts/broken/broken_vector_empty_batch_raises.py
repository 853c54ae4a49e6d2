"""Broken on purpose: an upsert validates its batch as one matrix before anything else --
`np.asarray([r.vector for r in records])` must be (n, dimension) -- so an empty batch, whose array has
shape (0,), is refused with `InvalidVector`. Every batch of the suite before 1.5 held a record.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from _shared import InDirQdrantEdge, TestControlQdrantEdge  # noqa: F401  (the control runs here)

from graphctx.adapters.qdrant import EdgeVectorIndex
from graphctx.contracts.vector import VectorIndexContract
from graphctx.errors import InvalidVector
from graphctx.kernel.ports import VectorRecord
from graphctx.scope import Scope
from graphctx.settings import Settings


class EmptyBatchRaises(EdgeVectorIndex):
    name = "qdrant-edge-empty-batch-raises"

    def upsert(self, scope: Scope, records: Sequence[VectorRecord]) -> None:
        try:
            matrix = np.asarray([r.vector for r in records], dtype=np.float32)
        except (TypeError, ValueError) as exc:  # ragged: some vector has the wrong dimension
            raise InvalidVector(f"vectors are not all of dimension {self.dimension}") from exc
        if matrix.ndim != 2 or matrix.shape[1] != self.dimension:  # the bug: (0,) for an empty batch
            raise InvalidVector(f"vectors have shape {matrix.shape}, expected (n, {self.dimension})")
        super().upsert(scope, records)


class TestBrokenEmptyBatchRaises(InDirQdrantEdge, VectorIndexContract):
    index_class = EmptyBatchRaises


def create_vector_index(settings: Settings, model_id: str, dimension: int) -> EdgeVectorIndex:
    return EmptyBatchRaises(Path(settings.data_dir) / "vectors", model_id, dimension)
