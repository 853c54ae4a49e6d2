"""The flat index's int8 codes change how much of a scope a search reads, never what it answers: every
search with codes equals brute force over the same rows (ids, order, ties by id), through appends
past the fitted range, deletes, replacements, compaction and a reader in another index."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pytest

from graphctx.adapters.flat import FlatVectorIndex
from graphctx.adapters.flat import shard as shard_module
from graphctx.adapters.flat.codes import CodeBook, candidates
from graphctx.kernel.ports import VectorRecord
from graphctx.scope import Scope

DIM = 32
MODEL = "codes-model"
SCOPE = Scope("t1", "ns")


def unit(rows: np.ndarray) -> np.ndarray:
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def clustered(rng: np.random.Generator, n: int, *, spread: float = 0.3) -> np.ndarray:
    """Rows around a few shared directions (embeddings look like this): many close scores."""
    centres = rng.standard_normal((6, DIM))
    return unit(centres[rng.integers(0, 6, n)] + spread * rng.standard_normal((n, DIM)))


def records(prefix: str, rows: np.ndarray) -> list[VectorRecord]:
    return [
        VectorRecord(entity_id=f"{prefix}{i}", content_hash=f"h{i}", vector=tuple(map(float, row)))
        for i, row in enumerate(rows)
    ]


def answer(index: FlatVectorIndex, query: np.ndarray, k: int) -> list[tuple[str, float]]:
    return [(h.entity_id, round(h.score, 5)) for h in index.search(SCOPE, tuple(map(float, query)), k)]


def pair(tmp_path: Path) -> tuple[FlatVectorIndex, FlatVectorIndex]:
    """The writer with codes (built on demand below) and a reader of the same files without any."""
    return (
        FlatVectorIndex(tmp_path, MODEL, DIM, codes_min_rows=1),
        FlatVectorIndex(tmp_path, MODEL, DIM, read_only=True, codes_min_rows=0),
    )


def assert_same(coded: FlatVectorIndex, brute: FlatVectorIndex, queries: np.ndarray) -> None:
    assert coded._snapshot(SCOPE)[1].codes is not None  # the coded path is the one under test
    for query in queries:
        for k in (1, 10, 37):
            assert answer(coded, query, k) == answer(brute, query, k)


def test_codes_answer_exactly_what_brute_force_answers(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    coded, brute = pair(tmp_path)
    coded.upsert(SCOPE, records("e", clustered(rng, 3000)))
    assert coded.build_codes(SCOPE)
    assert_same(coded, brute, np.vstack([clustered(rng, 40), unit(rng.standard_normal((10, DIM)))]))


def test_ties_are_ranked_by_id_with_codes_as_without(tmp_path: Path) -> None:
    rng = np.random.default_rng(8)
    base = clustered(rng, 500)
    twins = np.repeat(base[:5], 30, axis=0)  # 30 identical rows per vector: ties at every cut
    coded, brute = pair(tmp_path)
    coded.upsert(SCOPE, records("b", base) + records("t", twins))
    assert coded.build_codes(SCOPE)
    assert_same(coded, brute, base[:5])


def test_rows_after_the_fit_and_far_outside_it_stay_exact(tmp_path: Path) -> None:
    rng = np.random.default_rng(9)
    coded, brute = pair(tmp_path)
    coded.upsert(SCOPE, records("a", clustered(rng, 1000, spread=0.05)))  # a narrow fit: small steps
    assert coded.build_codes(SCOPE)
    far = unit(rng.standard_normal((300, DIM)))  # clipped codes: the residual carries the difference
    coded.upsert(SCOPE, records("far", far))
    coded.delete(SCOPE, [f"a{i}" for i in range(0, 1000, 3)])
    coded.upsert(SCOPE, records("a", clustered(rng, 50)))  # replacements: their old rows are dead
    assert_same(coded, brute, np.vstack([far[:20], clustered(rng, 20)]))


def test_compaction_drops_the_codes_and_searches_stay_exact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shard_module, "COMPACT_MIN_DEAD", 10)
    rng = np.random.default_rng(10)
    coded, brute = pair(tmp_path)
    coded.upsert(SCOPE, records("e", clustered(rng, 400)))
    assert coded.build_codes(SCOPE)
    coded.upsert(SCOPE, records("e", clustered(rng, 300)))  # replaces most rows: a new generation
    queries = clustered(rng, 10)
    assert coded._snapshot(SCOPE)[1].codes is None
    expected = [answer(brute, q, 10) for q in queries]
    assert [answer(coded, q, 10) for q in queries] == expected
    assert coded.build_codes(SCOPE)
    assert [answer(coded, q, 10) for q in queries] == expected


def test_a_scope_searched_twice_gets_codes_in_the_background(tmp_path: Path) -> None:
    rng = np.random.default_rng(11)
    index = FlatVectorIndex(tmp_path, MODEL, DIM, codes_min_rows=100)
    index.upsert(SCOPE, records("e", clustered(rng, 200)))
    query = tuple(map(float, clustered(rng, 1)[0]))
    first = index.search(SCOPE, query, 5)
    assert index._snapshot(SCOPE)[1].codes is None  # one search: a one-shot process pays nothing
    index.search(SCOPE, query, 5)
    for _ in range(500):  # the build runs on its own thread
        if index._snapshot(SCOPE)[1].codes is not None:
            break
        time.sleep(0.01)
    assert index._snapshot(SCOPE)[1].codes is not None
    assert index.search(SCOPE, query, 5) == first
    assert index.caches()["flat_codes"]["bytes"] > 0


def test_small_scopes_and_disabled_codes_stay_brute_force(tmp_path: Path) -> None:
    rng = np.random.default_rng(12)
    index = FlatVectorIndex(tmp_path, MODEL, DIM, codes_min_rows=0)
    index.upsert(SCOPE, records("e", clustered(rng, 50)))
    for _ in range(3):
        index.search(SCOPE, tuple(map(float, clustered(rng, 1)[0])), 5)
    assert index._snapshot(SCOPE)[1].codes is None
    assert index.caches()["flat_codes"]["bytes"] == 0


def test_candidates_cover_the_true_top_k_on_adversarial_rows() -> None:
    """Near-duplicates (one direction with tiny differences), so the codes alone cannot separate
    them: the bound must still keep every row of the true top k."""
    rng = np.random.default_rng(13)
    shared = unit(rng.standard_normal((1, DIM)))[0]
    rows = unit(shared + 1e-3 * rng.standard_normal((4000, DIM))).astype(np.float32)
    book = CodeBook(rows[:100])  # fitted on a few rows, most rows clipped
    book.extend(rows[100:])
    codes = book.view()
    near, anywhere = shared + 0.01 * rng.standard_normal((5, DIM)), rng.standard_normal((5, DIM))
    for query in unit(np.vstack([near, anywhere])).astype(np.float32):
        found = candidates(codes, rows, None, query, 10)
        truth = np.argsort(-(rows @ query), kind="stable")[:10]
        assert set(truth.tolist()) <= set(found.tolist())


def test_a_reader_with_codes_sees_every_acknowledged_write_while_the_writer_appends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One writer appends, replaces and deletes (compacting on the way) while reader threads search
    with codes built and rebuilt in the background: a search that starts after a write was
    acknowledged finds it, and every answer is brute force's on the rows the reader saw."""
    monkeypatch.setattr(shard_module, "COMPACT_MIN_DEAD", 64)
    rng = np.random.default_rng(14)
    writer = FlatVectorIndex(tmp_path, MODEL, DIM, codes_min_rows=0)
    reader = FlatVectorIndex(tmp_path, MODEL, DIM, read_only=True, codes_min_rows=1)
    brute = FlatVectorIndex(tmp_path, MODEL, DIM, read_only=True, codes_min_rows=0)
    writer.upsert(SCOPE, records("base", clustered(rng, 500)))
    acknowledged: list[tuple[str, np.ndarray]] = []
    lock, stop, failures = threading.Lock(), threading.Event(), []

    def search_loop(seed: int) -> None:
        local = np.random.default_rng(seed)
        while not stop.is_set():
            with lock:
                known = list(acknowledged)
            if known:
                entity_id, row = known[int(local.integers(len(known)))]
                hits = reader.search(SCOPE, tuple(map(float, row)), 5)
                if entity_id not in [h.entity_id for h in hits]:
                    failures.append(f"{entity_id} acknowledged but not found")
            reader.search(SCOPE, tuple(map(float, clustered(local, 1)[0])), 10)

    threads = [threading.Thread(target=search_loop, args=(s,)) for s in range(2)]
    for t in threads:
        t.start()
    try:
        for batch in range(30):
            rows = unit(rng.standard_normal((20, DIM)))  # far from the clusters: each finds itself
            ids = [f"w{batch}-{i}" for i in range(20)]
            writer.upsert(SCOPE, [
                VectorRecord(entity_id=i, content_hash="h", vector=tuple(map(float, r)))
                for i, r in zip(ids, rows, strict=True)
            ])  # fmt: skip
            if batch % 5 == 4:  # replace and delete: dead rows, then a compaction
                writer.upsert(SCOPE, records("base", clustered(rng, 100)))
                writer.delete(SCOPE, [f"base{i}" for i in range(400, 450)])
            with lock:
                acknowledged.extend(zip(ids, rows, strict=True))
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert not failures, failures[:5]
    wait = time.monotonic() + 10
    while reader._snapshot(SCOPE)[1].codes is None and time.monotonic() < wait:
        reader.search(SCOPE, tuple(map(float, clustered(rng, 1)[0])), 10)
        time.sleep(0.01)
    assert reader._snapshot(SCOPE)[1].codes is not None
    for query in clustered(rng, 20):
        assert answer(reader, query, 10) == answer(brute, query, 10)
    for index in (reader, brute, writer):
        index.close()
