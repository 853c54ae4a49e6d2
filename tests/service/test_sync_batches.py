"""The index sync of a large write: the lexical index is written per graph read, the vectors are
embedded in a background thread and appended in order; what the indexes hold is what one inline pass
writes, and an embedding failure part way is reported and completed from the journal."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from graphctx import writes
from graphctx.model import Entity
from graphctx.scope import Scope
from graphctx.service import ContextService
from tests.conftest import fixed_clock, make_settings

SCOPE = Scope("sync", "batches")
N = 1_234  # three graph reads of writes.BATCH, the last one short


def _entities() -> list[Entity]:
    return [
        Entity(id=f"e{i:05d}", name=f"thing_{i} number{i % 17}", summary=f"about topic {i % 29} and {i % 7}")
        for i in range(N)
    ]


def _vectors(service: ContextService) -> dict[str, tuple[float, ...]]:
    vector = service.stores.vector
    assert vector is not None
    out = {}
    for e in _entities()[:: N // 40]:
        query = service.stores.embedder.embed([e.name])[0]
        out[e.id] = tuple((h.entity_id, h.score) for h in vector.search(SCOPE, query, 10))
    return out


def test_a_batched_sync_writes_what_read_by_read_syncs_write(tmp_path: Path):
    with ContextService.open(make_settings(tmp_path / "batched"), clock=fixed_clock) as batched:
        _, synced = batched.sync.upsert_entities(SCOPE, _entities())
        assert synced.indexed == N and synced.index_error is None
        expected_hashes = batched.stores.vector.hashes(SCOPE)
        expected = _vectors(batched)
    with ContextService.open(make_settings(tmp_path / "inline"), clock=fixed_clock) as inline:
        everything = _entities()
        for start in range(0, N, writes.BATCH):  # one graph read per sync: no thread, one append each
            inline.sync.upsert_entities(SCOPE, everything[start : start + writes.BATCH])
        assert inline.stores.vector.hashes(SCOPE) == expected_hashes
        assert _vectors(inline) == expected
        assert inline.stores.lexical.hashes(SCOPE) == expected_hashes


class _FailsOnce:
    """An embedder whose second call fails (the second graph read's entities)."""

    def __init__(self, inner):
        self.inner, self.calls = inner, 0
        self.model_id, self.dimension = inner.model_id, inner.dimension

    def embed(self, texts):
        self.calls += 1
        if self.calls == 2:
            raise RuntimeError("embedding failed (injected)")
        return np.asarray(self.inner.embed(texts))


def test_an_embedding_failure_part_way_is_reported_and_completed_later(tmp_path: Path):
    settings = make_settings(tmp_path / "data")
    with ContextService.open(settings, clock=fixed_clock) as service:
        real = service.stores.embedder
        service.stores.embedder = _FailsOnce(real)
        with pytest.raises(RuntimeError, match="injected"):
            service.sync.upsert_entities(SCOPE, _entities())
        service.stores.embedder = real
        assert service.stores.journal.count_pending() > 0  # the work stays journaled
    with ContextService.open(settings, clock=fixed_clock) as service:  # the next open completes it
        graph = {e.id for e in _entities()}
        assert set(service.stores.vector.hashes(SCOPE)) == graph
        assert set(service.stores.lexical.hashes(SCOPE)) == graph
        assert service.stores.journal.count_pending() == 0
