"""What the flat vector index promises beyond the port contract: files another process can read
while one writes, compaction, a crash tail nobody reads, one writer, nothing created by a reader, a
bounded number of open scopes that evicting never loses or tears."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

from graphctx.adapters.flat import FlatVectorIndex, create_flat_index
from graphctx.adapters.flat import shard as shard_module
from graphctx.adapters.flat.index import scope_dirname
from graphctx.errors import BackendUnavailable, ConfigError, ReadOnly
from graphctx.kernel.ports import VectorRecord
from graphctx.scope import Scope
from graphctx.settings import Settings

DIM = 8
MODEL = "test-model"
SCOPE = Scope("t1", "ns")


def vec(seed: int) -> tuple[float, ...]:
    return tuple(float(x) for x in np.random.default_rng(seed).standard_normal(DIM))


def rec(entity_id: str, seed: int, content_hash: str | None = None) -> VectorRecord:
    return VectorRecord(entity_id=entity_id, content_hash=content_hash or f"h-{seed}", vector=vec(seed))


def test_a_reader_sees_each_write_once_published_and_never_part_of_one(tmp_path: Path) -> None:
    writer = FlatVectorIndex(tmp_path, MODEL, DIM)
    reader = FlatVectorIndex(tmp_path, MODEL, DIM, read_only=True)
    assert reader.search(SCOPE, vec(0), 5) == []
    for batch in range(5):
        writer.upsert(SCOPE, [rec(f"e{batch}-{i}", batch * 100 + i) for i in range(20)])
        hashes = reader.hashes(SCOPE)
        assert len(hashes) == 20 * (batch + 1)  # whole batches only
        hit = reader.search(SCOPE, vec(batch * 100 + 7), 1)[0]
        assert (hit.entity_id, hit.content_hash) == (f"e{batch}-7", f"h-{batch * 100 + 7}")
    writer.delete(SCOPE, ["e0-0", "e1-1"])
    assert {"e0-0", "e1-1"}.isdisjoint(reader.hashes(SCOPE))
    writer.close()
    reader.close()


@pytest.mark.parametrize("with_deletes", [False, True], ids=["appends-only", "with-deletes"])
def test_a_reader_opening_a_log_with_replaced_rows_sees_only_the_last_of_each(
    tmp_path: Path, with_deletes: bool
) -> None:
    """A log of appends only is read in bulk, any other row by row: the same answers either way.
    Ids repeat across writes and within one write; the later row replaces every earlier one."""
    writer = FlatVectorIndex(tmp_path, MODEL, DIM)
    writer.upsert(SCOPE, [rec(f"e{i}", i) for i in range(40)])
    early = FlatVectorIndex(tmp_path, MODEL, DIM, read_only=True)  # catches up on the rest later
    assert len(early.hashes(SCOPE)) == 40
    writer.upsert(SCOPE, [rec("e3", 103), rec("e7", 107), rec("e3", 203), rec("new", 300)])
    if with_deletes:
        writer.delete(SCOPE, ["e5"])
    writer.upsert(SCOPE, [rec("e7", 307), rec("e9", 9)])  # e9 rewritten with what it held
    expected = {f"e{i}": f"h-{i}" for i in range(40)} | {"e3": "h-203", "e7": "h-307", "new": "h-300"}
    if with_deletes:
        del expected["e5"]
    for reader in (FlatVectorIndex(tmp_path, MODEL, DIM, read_only=True), early):
        assert reader.hashes(SCOPE) == expected
        for seed, entity_id in ((203, "e3"), (307, "e7"), (300, "new"), (9, "e9"), (12, "e12")):
            top = reader.search(SCOPE, vec(seed), 3)
            assert top[0].entity_id == entity_id and top[0].content_hash == expected[entity_id]
            assert len({hit.entity_id for hit in top}) == 3  # a replaced row never comes back
        replaced = reader.search(SCOPE, vec(3), 50)  # the query of e3's first row: that row is dead
        assert [h.content_hash for h in replaced if h.entity_id == "e3"] == ["h-203"]
        reader.close()
    writer.close()


def test_replacing_most_rows_compacts_and_readers_follow(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shard_module, "COMPACT_MIN_DEAD", 10)
    writer = FlatVectorIndex(tmp_path, MODEL, DIM)
    reader = FlatVectorIndex(tmp_path, MODEL, DIM, read_only=True)
    writer.upsert(SCOPE, [rec(f"e{i}", i) for i in range(40)])
    assert len(reader.hashes(SCOPE)) == 40
    for round_ in range(3):  # each round replaces every row: 40 dead rows > 25 %
        writer.upsert(SCOPE, [rec(f"e{i}", 1000 * (round_ + 1) + i) for i in range(40)])
    directory = tmp_path / next(p.name for p in tmp_path.iterdir()) / scope_dirname(SCOPE)
    manifest = json.loads((directory / "manifest.json").read_text())
    assert manifest["generation"] >= 1 and manifest["rows"] == 40
    assert sorted(p.name for p in directory.glob("g*.*")) == [
        f"g{manifest['generation']}.f32",
        f"g{manifest['generation']}.log",
    ]
    assert reader.hashes(SCOPE) == {f"e{i}": f"h-{3000 + i}" for i in range(40)}
    assert reader.search(SCOPE, vec(3005), 1)[0].entity_id == "e5"
    writer.close()
    reader.close()


def test_a_crash_before_publishing_leaves_a_tail_nobody_reads(tmp_path: Path) -> None:
    writer = FlatVectorIndex(tmp_path, MODEL, DIM)
    writer.upsert(SCOPE, [rec("kept", 1)])
    writer.close()
    directory = next(tmp_path.iterdir()) / scope_dirname(SCOPE)
    with (directory / "g0.f32").open("ab") as fh:  # what a writer killed mid-append leaves
        fh.write(np.ones(DIM, dtype=np.float32).tobytes()[:13])
    with (directory / "g0.log").open("ab") as fh:
        fh.write(b'{"u": [["torn", "h')
    reader = FlatVectorIndex(tmp_path, MODEL, DIM, read_only=True)
    assert reader.hashes(SCOPE) == {"kept": "h-1"}
    again = FlatVectorIndex(tmp_path, MODEL, DIM)
    again.upsert(SCOPE, [rec("next", 2)])
    assert again.hashes(SCOPE) == {"kept": "h-1", "next": "h-2"}
    assert reader.hashes(SCOPE) == {"kept": "h-1", "next": "h-2"}
    assert [h.entity_id for h in reader.search(SCOPE, vec(2), 2)] == ["next", "kept"]
    again.close()
    reader.close()


def test_one_writer_per_directory_and_readers_refuse_writes(tmp_path: Path) -> None:
    writer = FlatVectorIndex(tmp_path, MODEL, DIM)
    with pytest.raises(BackendUnavailable, match="open for writing elsewhere"):
        FlatVectorIndex(tmp_path, MODEL, DIM)
    reader = FlatVectorIndex(tmp_path, MODEL, DIM, read_only=True)
    with pytest.raises(ReadOnly):
        reader.upsert(SCOPE, [rec("x", 1)])
    with pytest.raises(ReadOnly):
        reader.delete(SCOPE, ["x"])
    writer.close()
    FlatVectorIndex(tmp_path, MODEL, DIM).close()  # the lock goes with close()
    reader.close()


def test_a_reader_creates_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "nothing-here"
    reader = FlatVectorIndex(missing, MODEL, DIM, read_only=True)
    assert reader.search(SCOPE, vec(1), 3) == [] and reader.hashes(SCOPE) == {}
    reader.close()
    assert not missing.exists()


def test_another_process_reads_what_the_writer_acknowledged(tmp_path: Path) -> None:
    """The acknowledged write is visible to a reader process started afterwards and to one that was
    already running (it catches up before each read)."""
    script = textwrap.dedent(
        f"""
        import sys, numpy as np
        from graphctx.adapters.flat import FlatVectorIndex, create_flat_index
        from graphctx.scope import Scope
        index = FlatVectorIndex({str(tmp_path)!r}, {MODEL!r}, {DIM}, read_only=True)
        for line in sys.stdin:
            want = line.strip()
            seed = int(want[1:])
            v = [float(x) for x in np.random.default_rng(seed).standard_normal({DIM})]
            hits = index.search(Scope("t1", "ns"), v, 1)
            print(hits[0].entity_id if hits else "-", flush=True)
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdin is not None and proc.stdout is not None
    writer = FlatVectorIndex(tmp_path, MODEL, DIM)
    try:
        for i in range(1, 30):
            writer.upsert(SCOPE, [rec(f"e{i}", i)])  # acknowledged when it returns
            proc.stdin.write(f"e{i}\n")
            proc.stdin.flush()
            assert proc.stdout.readline().strip() == f"e{i}"
    finally:
        proc.stdin.close()
        proc.wait(30)
        writer.close()


def test_deferred_writes_are_searchable_at_once_and_published_at_flush(tmp_path: Path) -> None:
    writer = FlatVectorIndex(tmp_path, MODEL, DIM)
    writer.upsert(SCOPE, [rec("e0", 0)])
    assert writer.defer_durability() is True
    writer.upsert(SCOPE, [rec("e1", 1), rec("e0", 2, "h-new")])
    writer.delete(SCOPE, ["e9"])  # nothing stored under it: no change
    assert writer.hashes(SCOPE) == {"e0": "h-new", "e1": "h-1"}
    assert writer.search(SCOPE, vec(1), 1)[0].entity_id == "e1"
    reader = FlatVectorIndex(tmp_path, MODEL, DIM, read_only=True)
    assert reader.hashes(SCOPE) == {"e0": "h-0"}  # another process: the last published manifest
    writer.flush()
    assert reader.hashes(SCOPE) == {"e0": "h-new", "e1": "h-1"}
    writer.upsert(SCOPE, [rec("e2", 3)])
    writer.close()  # close publishes what is pending
    assert set(reader.hashes(SCOPE)) == {"e0", "e1", "e2"}
    reader.close()


# -- the open-scope LRU ---------------------------------------------------------------------------


def scope_of(n: int) -> Scope:
    return Scope(f"t{n % 3}", f"ns{n}")


def found(index: FlatVectorIndex, scope: Scope, entity_id: str, seed: int) -> bool:
    hits = index.search(scope, vec(seed), 1)
    return bool(hits) and hits[0].entity_id == entity_id


@pytest.mark.parametrize("deferred", [False, True], ids=["synced", "deferred"])
def test_more_scopes_than_the_cap_lose_nothing_when_evicted_and_reopened(
    tmp_path: Path, deferred: bool
) -> None:
    """Round-robin writes over 9 scopes with 3 open: every write after the first round reopens an
    evicted scope. Deferred appends of an evicted scope are made durable before it is closed (else
    the reopen cuts them off as an unpublished tail)."""
    writer = FlatVectorIndex(tmp_path, MODEL, DIM, max_open_scopes=3)
    if deferred:
        assert writer.defer_durability() is True
    want: dict[Scope, dict[str, str]] = {scope_of(n): {} for n in range(9)}
    for round_ in range(4):
        for n, scope in enumerate(want):
            seed = 1000 * round_ + n
            writer.upsert(scope, [rec(f"e{round_}", seed)])
            want[scope][f"e{round_}"] = f"h-{seed}"
            assert found(writer, scope, f"e{round_}", seed)  # read-after-write, whatever was evicted
        assert writer.upsert(scope_of(0), [rec("e0", 7, "h-again")]) is None  # an update after a reopen
        want[scope_of(0)]["e0"] = "h-again"
    open_scopes = writer.caches()["flat_open_scopes"]
    assert open_scopes["entries"] == 3 and open_scopes["max_entries"] == 3
    assert open_scopes["evictions"] >= 30
    assert {scope: writer.hashes(scope) for scope in want} == want
    reader = FlatVectorIndex(tmp_path, MODEL, DIM, read_only=True, max_open_scopes=2)
    evicted = [s for s in want if s not in (scope_of(6), scope_of(7), scope_of(8), scope_of(0))]
    for scope in evicted:  # published at eviction, deferred or not
        assert reader.hashes(scope) == want[scope]
    writer.close()
    again = FlatVectorIndex(tmp_path, MODEL, DIM, max_open_scopes=2)
    assert {scope: again.hashes(scope) for scope in want} == want
    for n, (scope, hashes) in enumerate(want.items()):
        for round_ in range(1, 4):
            assert found(again, scope, f"e{round_}", 1000 * round_ + n)
        assert reader.hashes(scope) == hashes
    again.close()
    reader.close()


def test_eviction_racing_with_writes_to_the_same_scopes_loses_and_tears_nothing(tmp_path: Path) -> None:
    """Four threads write (and re-write) entities of 5 scopes with 2 open, so nearly every write
    evicts a scope another thread is about to write; each write is searchable once acknowledged."""
    writer = FlatVectorIndex(tmp_path, MODEL, DIM, max_open_scopes=2)
    assert writer.defer_durability() is True
    scopes = [scope_of(n) for n in range(5)]
    written: list[dict[tuple[Scope, str], str]] = [{} for _ in range(4)]
    failures: list[str] = []

    def write(worker: int) -> None:
        rng = np.random.default_rng(worker)
        for i in range(60):
            scope = scopes[int(rng.integers(len(scopes)))]
            entity_id = f"w{worker}-{i % 20}"  # each id written about three times
            seed = 10_000 * worker + i
            writer.upsert(scope, [rec(entity_id, seed)])
            written[worker][(scope, entity_id)] = f"h-{seed}"
            if not found(writer, scope, entity_id, seed):
                failures.append(f"{entity_id} not found right after its write")

    threads = [threading.Thread(target=write, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    want: dict[Scope, dict[str, str]] = {scope: {} for scope in scopes}
    for worker in written:
        for (scope, entity_id), content_hash in worker.items():
            want[scope][entity_id] = content_hash
    assert writer.caches()["flat_open_scopes"]["evictions"] > 0
    assert {scope: writer.hashes(scope) for scope in scopes} == want
    writer.close()
    again = FlatVectorIndex(tmp_path, MODEL, DIM)
    assert {scope: again.hashes(scope) for scope in scopes} == want
    again.close()


def test_a_search_in_flight_on_an_evicted_scope_answers_from_its_snapshot(tmp_path: Path) -> None:
    """Searches on one scope run while another thread keeps opening other scopes with 1 open, so the
    searched scope is evicted under them again and again: every answer is the right one."""
    writer = FlatVectorIndex(tmp_path, MODEL, DIM, max_open_scopes=1)
    writer.upsert(SCOPE, [rec(f"e{i}", i) for i in range(5000)])  # a product long enough to overlap
    churned = threading.Event()
    wrong: list[str] = []

    def churn() -> None:  # a fixed count, so the evictions do not depend on scheduling
        for n in range(300):
            writer.upsert(scope_of(n % 4), [rec("x", n)])
        churned.set()

    def search(worker: int) -> None:  # at least 150 searches each, and for as long as the churn lasts
        i = 0
        while i < 150 or not churned.is_set():
            seed = (worker * 997 + i * 31) % 5000
            hits = writer.search(SCOPE, vec(seed), 3)
            if not hits or hits[0].entity_id != f"e{seed}" or hits[0].tenant_id != SCOPE.tenant_id:
                wrong.append(f"e{seed}: {hits[:1]}")
            i += 1

    churner = threading.Thread(target=churn)
    searchers = [threading.Thread(target=search, args=(w,)) for w in range(2)]
    churner.start()
    for thread in searchers:
        thread.start()
    churner.join()
    for thread in searchers:
        thread.join()
    assert wrong == []
    assert writer.caches()["flat_open_scopes"]["evictions"] > 100
    writer.close()


# the child writes 6 scopes with 2 open and deferred durability, then kills itself before any flush
_KILLED_WRITER = """
import os, signal, sys
import numpy as np
from graphctx.adapters.flat import FlatVectorIndex, create_flat_index
from graphctx.kernel.ports import VectorRecord
from graphctx.scope import Scope
index = FlatVectorIndex(sys.argv[1], {model!r}, {dim}, max_open_scopes=2)
assert index.defer_durability()
for n in range(6):
    v = tuple(float(x) for x in np.random.default_rng(n).standard_normal({dim}))
    record = VectorRecord(entity_id=f"e{{n}}", content_hash=f"h-{{n}}", vector=v)
    index.upsert(Scope(f"t{{n % 3}}", f"ns{{n}}"), [record])
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_kill_9_after_evictions_keeps_every_evicted_scope_whole(tmp_path: Path) -> None:
    """What an eviction made durable survives kill -9; what was still deferred in the open scopes is
    cut off whole (the service's journal replays it), never torn."""
    script = _KILLED_WRITER.format(model=MODEL, dim=DIM)
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path)], timeout=60)
    assert done.returncode == -9
    index = FlatVectorIndex(tmp_path, MODEL, DIM)
    for n in range(4):  # evicted, so synced and published
        assert index.hashes(scope_of(n)) == {f"e{n}": f"h-{n}"}
        assert found(index, scope_of(n), f"e{n}", n)
    for n in (4, 5):  # still open at the kill: the deferred append is gone whole or there whole
        assert index.hashes(scope_of(n)) in ({}, {f"e{n}": f"h-{n}"})
    index.upsert(scope_of(5), [rec("after", 9)])
    assert "after" in index.hashes(scope_of(5))
    index.close()


def test_the_cap_comes_from_the_flat_settings_and_bad_values_are_config_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Settings(data_dir=tmp_path)
    monkeypatch.setenv("GRAPHCTX_FLAT_MAX_OPEN_SCOPES", "7")
    index = create_flat_index(settings, MODEL, DIM)
    assert index.caches()["flat_open_scopes"] == {"entries": 0, "max_entries": 7, "evictions": 0}
    index.close()
    for bad in ("0", "-1", "many"):
        monkeypatch.setenv("GRAPHCTX_FLAT_MAX_OPEN_SCOPES", bad)
        with pytest.raises(ConfigError, match=r"flat\.max_open_scopes"):
            create_flat_index(settings, MODEL, DIM)
    with pytest.raises(ConfigError, match="max_open_scopes"):
        FlatVectorIndex(tmp_path, MODEL, DIM, max_open_scopes=0)
