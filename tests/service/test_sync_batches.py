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


def _lexical_answers(service: ContextService, scope: Scope) -> list[list[tuple[str, float]]]:
    return [
        [(h.entity_id, round(h.score, 4)) for h in service.stores.lexical.search(scope, query, 10)]
        for query in ("thing_3 number5", "topic 11", "about 4", "number16 thing_1200")
    ]


def _piped(service: ContextService, monkeypatch: pytest.MonkeyPatch, calls: list[int]) -> None:
    """Count the documents of each call the lexical index gets."""
    real = service.stores.lexical.upsert

    def counted(scope: Scope, docs: list) -> None:  # type: ignore[type-arg]
        calls.append(len(docs))
        real(scope, docs)

    monkeypatch.setattr(service.stores.lexical, "upsert", counted)


@pytest.mark.parametrize("gather", [writes._LexicalWrites.GATHER, 700])
def test_a_pipelined_run_gathers_upserts_and_answers_as_call_by_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, gather: int
):
    """In a pipelined run (the code indexer's) a scope's lexical upserts go as few large calls
    (fewer commits): with no document replaced, BM25 answers exactly as writing call by call."""
    everything = _entities()

    def run(service: ContextService) -> None:
        for start in range(0, N, 300):
            service.sync.upsert_entities(SCOPE, everything[start : start + 300])

    with ContextService.open(make_settings(tmp_path / "inline"), clock=fixed_clock) as inline:
        run(inline)
        expected, answers = inline.stores.lexical.hashes(SCOPE), _lexical_answers(inline, SCOPE)
    monkeypatch.setattr(writes._LexicalWrites, "GATHER", gather)
    calls: list[int] = []
    with ContextService.open(make_settings(tmp_path / "piped"), clock=fixed_clock) as piped:
        _piped(piped, monkeypatch, calls)
        with piped.sync.pipelined(offload=False) as errors:
            run(piped)
        assert errors == []
        assert piped.stores.lexical.hashes(SCOPE) == expected
        assert _lexical_answers(piped, SCOPE) == answers
        assert piped.stores.journal.count_pending() == 0
    assert max(calls) > 300 and len(calls) < N // 300  # gathered, not one call per sync


def test_a_pipelined_run_keeps_deletes_and_scopes_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Gathered upserts go before a delete and before another scope's writes: an id upserted and
    then deleted is gone, one deleted and then upserted is back, each scope holds its own."""
    monkeypatch.setattr(writes._LexicalWrites, "GATHER", 700)
    other = Scope("sync", "other")
    everything = _entities()
    with ContextService.open(make_settings(tmp_path / "piped"), clock=fixed_clock) as piped:
        with piped.sync.pipelined(offload=False) as errors:
            for start in range(0, N, 300):
                piped.sync.upsert_entities(SCOPE, everything[start : start + 300])
            piped.sync.upsert_entities(other, everything[:10])
            edited = everything[3].model_copy(update={"summary": "edited before it is deleted"})
            piped.sync.upsert_entities(SCOPE, [edited])  # gathered, not yet sent
            piped.sync.delete_entities(SCOPE, ["e00003", "e00700"])
            piped.sync.upsert_entities(SCOPE, [everything[700]])  # deleted, then back
            piped.sync.delete_entities(other, ["e00001"])
        assert errors == []
        graph = {e.id for e in everything} - {"e00003"}
        assert set(piped.stores.lexical.hashes(SCOPE)) == graph
        assert set(piped.stores.lexical.hashes(other)) == {f"e{i:05d}" for i in range(10)} - {"e00001"}
        assert piped.stores.journal.count_pending() == 0
