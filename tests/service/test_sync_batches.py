"""The index sync of a large write: the lexical index is written per graph read, the vectors are
embedded in a background thread and appended in order; what the indexes hold is what one inline pass
writes, and an embedding failure part way is reported and completed from the journal."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from graphctx import writes
from graphctx.errors import BackendError
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


class _FailsSecond:
    """An embedder whose second call (the second graph read's entities) raises `error`."""

    def __init__(self, inner, error: Exception):
        self.inner, self.calls, self.error = inner, 0, error
        self.model_id, self.dimension = inner.model_id, inner.dimension

    def embed(self, texts):
        self.calls += 1
        if self.calls == 2:
            raise self.error
        return np.asarray(self.inner.embed(texts))


def test_an_embedding_failure_part_way_is_reported_and_completed_later(tmp_path: Path):
    settings = make_settings(tmp_path / "data")
    with ContextService.open(settings, clock=fixed_clock) as service:
        real = service.stores.embedder
        service.stores.embedder = _FailsSecond(real, RuntimeError("embedding failed (injected)"))
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
        vectors, nearest = inline.stores.vector.hashes(SCOPE), _vectors(inline)
    monkeypatch.setattr(writes._LexicalWrites, "GATHER", gather)
    calls: list[int] = []
    with ContextService.open(make_settings(tmp_path / "piped"), clock=fixed_clock) as piped:
        _piped(piped, monkeypatch, calls)
        with piped.sync.pipelined(offload=False) as queued:
            run(piped)
        assert queued.errors == []
        assert piped.stores.lexical.hashes(SCOPE) == expected
        assert _lexical_answers(piped, SCOPE) == answers
        assert piped.stores.vector.hashes(SCOPE) == vectors  # appended in the run, in the same order
        assert _vectors(piped) == nearest
        assert piped.stores.journal.count_pending() == 0
    assert max(calls) > 300 and len(calls) < N // 300  # gathered, not one call per sync


def test_a_pipelined_run_keeps_deletes_and_scopes_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Gathered upserts go before a delete and before another scope's writes: an id upserted and
    then deleted is gone, one deleted and then upserted is back, each scope holds its own."""
    monkeypatch.setattr(writes._LexicalWrites, "GATHER", 700)
    other = Scope("sync", "other")
    everything = _entities()
    with ContextService.open(make_settings(tmp_path / "piped"), clock=fixed_clock) as piped:
        with piped.sync.pipelined(offload=False) as queued:
            for start in range(0, N, 300):
                piped.sync.upsert_entities(SCOPE, everything[start : start + 300])
            piped.sync.upsert_entities(other, everything[:10])
            edited = everything[3].model_copy(update={"summary": "edited before it is deleted"})
            piped.sync.upsert_entities(SCOPE, [edited])  # gathered, not yet sent
            piped.sync.delete_entities(SCOPE, ["e00003", "e00700"])
            piped.sync.upsert_entities(SCOPE, [everything[700]])  # deleted, then back
            piped.sync.delete_entities(other, ["e00001"])
        assert queued.errors == []
        graph = {e.id for e in everything} - {"e00003"}
        assert set(piped.stores.lexical.hashes(SCOPE)) == graph
        assert set(piped.stores.lexical.hashes(other)) == {f"e{i:05d}" for i in range(10)} - {"e00001"}
        assert set(piped.stores.vector.hashes(SCOPE)) == graph
        assert set(piped.stores.vector.hashes(other)) == {f"e{i:05d}" for i in range(10)} - {"e00001"}
        assert piped.stores.vector.hashes(SCOPE)["e00700"] == everything[700].content_hash
        assert piped.stores.journal.count_pending() == 0


class _Gated:
    """An embedder that embeds nothing until it is let go, and counts the texts it embedded."""

    def __init__(self, inner):
        self.inner, self.go, self.embedded = inner, threading.Event(), 0
        self.model_id, self.dimension = inner.model_id, inner.dimension

    def embed(self, texts):
        assert self.go.wait(60), "never let go"
        self.embedded += len(texts)
        return np.asarray(self.inner.embed(texts))


def test_a_pipelined_run_never_waits_for_the_embedder(tmp_path: Path):
    """Every graph write of a pipelined run returns while the embedder has embedded nothing; the
    vectors are all appended, in order, by the end of the run, and only then is the journal done."""
    everything = _entities()
    with ContextService.open(make_settings(tmp_path / "inline"), clock=fixed_clock) as inline:
        inline.sync.upsert_entities(SCOPE, everything)
        vectors = inline.stores.vector.hashes(SCOPE)
    with ContextService.open(make_settings(tmp_path / "piped"), clock=fixed_clock) as piped:
        gated = piped.stores.embedder = _Gated(piped.stores.embedder)
        with piped.sync.pipelined(offload=False) as queued:
            for start in range(0, N, 300):
                _, synced = piped.sync.upsert_entities(SCOPE, everything[start : start + 300])
                assert synced.index_error is None
            assert gated.embedded == 0 and piped.stores.journal.count_pending() > 0
            gated.go.set()
        assert queued.errors == [] and gated.embedded == N
        assert piped.stores.vector.hashes(SCOPE) == vectors
        assert piped.stores.journal.count_pending() == 0


def test_an_embedding_failure_in_a_pipelined_run_is_reported_and_completed_later(tmp_path: Path):
    """The failure is reported by the writes after it and at the run's end; nothing is lost: the
    work stays journaled and the next open completes both indexes."""
    settings = make_settings(tmp_path / "data")
    everything = _entities()
    with ContextService.open(settings, clock=fixed_clock) as service:
        real = service.stores.embedder
        service.stores.embedder = _FailsSecond(real, BackendError("the embedder is gone (injected)"))
        reported = []
        with service.sync.pipelined(offload=False) as queued:
            for start in range(0, N, 300):
                _, synced = service.sync.upsert_entities(SCOPE, everything[start : start + 300])
                reported.append(synced.index_error)
        service.stores.embedder = real
        assert reported[0] is None and reported[-1]  # the calls after it report it
        assert queued.errors == [reported[-1]]
        assert service.stores.journal.count_pending() > 0
    with ContextService.open(settings, clock=fixed_clock) as service:
        graph = {e.id for e in everything}
        assert set(service.stores.vector.hashes(SCOPE)) == graph
        assert set(service.stores.lexical.hashes(SCOPE)) == graph
        assert service.stores.journal.count_pending() == 0


class _NaNFor:
    """An embedder that gives a non-finite vector for texts holding `marker`."""

    def __init__(self, inner, marker: str):
        self.inner, self.marker = inner, marker
        self.model_id, self.dimension = inner.model_id, inner.dimension

    def embed(self, texts):
        out = np.asarray(self.inner.embed(texts), dtype=np.float32)
        out[[self.marker in t for t in texts]] = np.nan
        return out


@pytest.mark.parametrize("piped", [False, True])
def test_a_refused_vector_is_reported_and_its_old_vector_removed(tmp_path: Path, piped: bool):
    """An entity whose new text gets no valid vector keeps no stale one; the others are appended."""
    everything = _entities()
    refused = {e.id for e in everything if e.name.endswith(" number3")}
    with ContextService.open(make_settings(tmp_path / "data"), clock=fixed_clock) as service:
        service.sync.upsert_entities(SCOPE, everything)
        service.stores.embedder = _NaNFor(service.stores.embedder, " number3.")
        edited = [e.model_copy(update={"summary": "edited"}) for e in everything]
        if piped:
            with service.sync.pipelined(offload=False) as queued:
                for start in range(0, N, 300):
                    service.sync.upsert_entities(SCOPE, edited[start : start + 300])
            assert queued.errors == [] and set(queued.vector_skipped) == refused
        else:
            _, synced = service.sync.upsert_entities(SCOPE, edited)
            assert set(synced.vector_skipped) == refused
        held = service.stores.vector.hashes(SCOPE)
        assert set(held) == {e.id for e in everything} - refused
        assert all(held[e.id] == e.content_hash for e in edited if e.id in held)
        assert service.stores.journal.count_pending() == 0


def test_gathered_upserts_go_when_the_caller_turns_to_other_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """`send_gathered` sends what is gathered at once (the indexer, before its edges), and a lexical
    failure met there is not raised at the caller but reported at the run's end."""
    everything = _entities()
    calls: list[int] = []
    with ContextService.open(make_settings(tmp_path / "piped"), clock=fixed_clock) as piped:
        _piped(piped, monkeypatch, calls)
        with piped.sync.pipelined(offload=False) as queued:
            piped.sync.upsert_entities(SCOPE, everything[:300])
            piped.sync.send_gathered()
            piped.sync.upsert_entities(SCOPE, everything[300:600])
        assert queued.errors == [] and calls == [300, 300]
        assert set(piped.stores.lexical.hashes(SCOPE)) == {e.id for e in everything[:600]}

        def broken(scope: Scope, docs: list) -> None:  # type: ignore[type-arg]
            raise BackendError("the lexical index is gone (injected)")

        monkeypatch.setattr(piped.stores.lexical, "upsert", broken)
        with piped.sync.pipelined(offload=False) as queued:
            for start in range(600, 900, 100):  # the third send waits for the first: its failure is met
                piped.sync.upsert_entities(SCOPE, everything[start : start + 100])
                piped.sync.send_gathered()
        assert len(queued.errors) == 1
        assert piped.stores.journal.count_pending() > 0  # completed later from the journal
