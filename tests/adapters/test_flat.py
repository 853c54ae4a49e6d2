"""What the flat vector index promises beyond the port contract: files another process can read
while one writes, compaction, a crash tail nobody reads, one writer, nothing created by a reader."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from graphctx.adapters.flat import FlatVectorIndex
from graphctx.adapters.flat import shard as shard_module
from graphctx.adapters.flat.index import scope_dirname
from graphctx.errors import BackendUnavailable, ReadOnly
from graphctx.kernel.ports import VectorRecord
from graphctx.scope import Scope

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
        from graphctx.adapters.flat import FlatVectorIndex
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
