"""Broken on purpose: an upsert de-duplicates its batch by keeping the first record of each id (numpy's
`unique(..., return_index=True)`, a `dict.setdefault`, an `INSERT ... ON CONFLICT DO NOTHING` within
one statement): a batch naming an id twice stores its first version, not its last. Batches naming
each id once are right.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from _shared import InDirQdrantEdge, TestControlQdrantEdge  # noqa: F401  (the control runs here)

from graphctx.adapters.qdrant import EdgeVectorIndex
from graphctx.contracts.vector import VectorIndexContract
from graphctx.kernel.ports import VectorRecord
from graphctx.scope import Scope
from graphctx.settings import Settings


class BatchKeepsFirst(EdgeVectorIndex):
    name = "qdrant-edge-batch-keeps-first"

    def upsert(self, scope: Scope, records: Sequence[VectorRecord]) -> None:
        if records:
            _, first = np.unique([r.entity_id for r in records], return_index=True)  # the bug
            records = [records[i] for i in sorted(first.tolist())]
        super().upsert(scope, records)


class TestBrokenBatchKeepsFirst(InDirQdrantEdge, VectorIndexContract):
    index_class = BatchKeepsFirst


def create_vector_index(settings: Settings, model_id: str, dimension: int) -> EdgeVectorIndex:
    return BatchKeepsFirst(Path(settings.data_dir) / "vectors", model_id, dimension)
