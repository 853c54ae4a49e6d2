"""The durable index journal on SQLite, driven through the IndexJournal port."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest

from graphctx.adapters.sqlite import SqliteJournal, create_journal
from graphctx.errors import BackendUnavailable, InputError, ScopeError
from graphctx.kernel.ports import IndexJournal
from graphctx.scope import Scope
from graphctx.settings import Settings

A = Scope("tenant-a", "default")
B = Scope("tenant-b", "docs", "graph-1")


@pytest.fixture
def journal(tmp_path: Path) -> Any:
    j = SqliteJournal(tmp_path / "journal.sqlite")
    yield j
    j.close()


def test_implements_the_port(journal: SqliteJournal) -> None:
    assert isinstance(journal, IndexJournal)


def test_factory_creates_the_file_in_data_dir(tmp_path: Path) -> None:
    j = create_journal(Settings(data_dir=tmp_path / "new" / "dir"))
    try:
        assert j.record(A, ["x"], "upsert") == [1]
    finally:
        j.close()
    db = tmp_path / "new" / "dir" / "journal.sqlite"
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_record_pending_complete(journal: SqliteJournal) -> None:
    first = journal.record(A, ["a", "b"], "upsert")
    second = journal.record(B, ["c"], "delete")
    assert first == sorted(first)
    assert second[0] > first[-1]
    entries = journal.pending(10)
    assert [(e.seq, e.entity_id, e.op, e.scope) for e in entries] == [
        (first[0], "a", "upsert", A),
        (first[1], "b", "upsert", A),
        (second[0], "c", "delete", B),
    ]
    assert journal.count_pending() == 3
    assert [e.entity_id for e in journal.pending(2)] == ["a", "b"]
    journal.complete(first)
    assert [e.entity_id for e in journal.pending(10)] == ["c"]
    journal.complete(first)  # completing twice is harmless
    journal.complete([])
    assert journal.count_pending() == 1


def test_empty_and_invalid_input(journal: SqliteJournal) -> None:
    assert journal.record(A, [], "upsert") == []
    assert journal.pending(0) == []
    with pytest.raises(InputError):
        journal.record(A, ["a"], "rename")  # type: ignore[arg-type]
    with pytest.raises(InputError):
        journal.record(A, "abc", "upsert")
    with pytest.raises(InputError):
        journal.record(A, ["ok", ""], "upsert")
    with pytest.raises(ScopeError):
        journal.record({"tenant_id": "a"}, ["a"], "upsert")  # type: ignore[arg-type]
    with pytest.raises(InputError):
        journal.complete(["1"])  # type: ignore[list-item]
    assert journal.count_pending() == 0


def test_survives_reopen_and_never_reuses_a_seq(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    j = SqliteJournal(path)
    seqs = j.record(A, ["a", "b", "c"], "upsert")
    j.complete(seqs[1:])
    j.close()
    j = SqliteJournal(path)
    try:
        assert [(e.seq, e.entity_id) for e in j.pending(10)] == [(seqs[0], "a")]
        j.complete(seqs[:1])
        j.close()
        j = SqliteJournal(path)
        # a late complete() for an old seq must never drop newer work
        assert j.record(A, ["d"], "delete")[0] > seqs[-1]
    finally:
        j.close()


@pytest.mark.parametrize(
    "entity_id",
    ["'; DROP TABLE journal; --", '" OR 1=1 --', "g.V().drop()", "ünï 😀\t\n\x01", "é" * 512],
)
def test_ids_are_stored_literally(journal: SqliteJournal, entity_id: str) -> None:
    (seq,) = journal.record(A, [entity_id], "upsert")
    (entry,) = journal.pending(5)
    assert (entry.seq, entry.entity_id) == (seq, entity_id)
    journal.complete([seq])
    assert journal.count_pending() == 0


def test_closed_journal_raises(tmp_path: Path) -> None:
    j = SqliteJournal(tmp_path / "j.sqlite")
    j.close()
    j.close()
    with pytest.raises(BackendUnavailable):
        j.count_pending()


def test_shared_by_threads(journal: SqliteJournal) -> None:
    seqs: list[int] = []
    lock = threading.Lock()

    def work(n: int) -> None:
        for i in range(20):
            got = journal.record(A, [f"{n}-{i}"], "upsert")
            with lock:
                seqs.extend(got)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(5)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(set(seqs)) == 100
    assert [e.seq for e in journal.pending(1000)] == sorted(seqs)
