"""Writes acknowledged before the indexes' disk commits (settings.index_flush_ms): read-after-write
holds in every leg at once, and a crash after the acknowledgement loses nothing (the journal replays)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from graphctx.errors import BackendUnavailable
from graphctx.kernel.reads import stored_hashes
from graphctx.kernel.stores import Stores, open_stores
from graphctx.scope import Scope
from graphctx.service import ContextService
from graphctx.writes import IndexSync
from tests.conftest import make_settings
from tests.service.leaky import ScopeBlindIndex

SCOPE = Scope("deferred-flush", "default")
NEVER_MS = 10_000.0  # longer than any test: nothing is flushed in the background while it runs
FLUSH_THREAD = "graphctx-index-flush"


def _note(i: int, word: str) -> dict[str, str]:
    return {"id": f"note-{i}", "type": "note", "name": f"note {i}", "summary": f"{word} marks note {i}"}


def _legs(answer: dict[str, object], entity_name: str) -> dict[str, object]:
    items = answer["items"]
    assert isinstance(items, list)
    found = [it["match"] for it in items if it["name"] == entity_name]
    assert found, f"{entity_name} not in {[it['name'] for it in items]}"
    return dict(found[0])


def test_a_write_is_found_by_the_lexical_and_dense_legs_before_any_flush(tmp_path: Path) -> None:
    with ContextService.open(make_settings(tmp_path / "data", index_flush_ms=NEVER_MS)) as svc:
        svc.remember(SCOPE, [_note(1, "quokkamark")])
        status = svc.status(SCOPE)
        assert status["index_flush"]["enabled"] is True
        assert status["index_flush"]["waiting"] == 1  # acknowledged, not yet durable
        match = _legs(svc.recall(SCOPE, "quokkamark marks"), "note 1")
        assert match.get("bm25") == 1 and match.get("dense") == 1


def test_an_update_hides_the_durable_version_and_a_forget_hides_the_entity(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with ContextService.open(make_settings(data, index_flush_ms=NEVER_MS)) as svc:
        svc.remember(SCOPE, [_note(1, "quokkamark")])
    with ContextService.open(make_settings(data, index_flush_ms=NEVER_MS)) as svc:
        svc.remember(SCOPE, [_note(1, "wombatmark")])  # the durable document still says quokkamark
        assert svc.stores.lexical.search(SCOPE, "quokkamark", 10) == []
        assert [h.entity_id for h in svc.stores.lexical.search(SCOPE, "wombatmark", 10)] == ["note-1"]
        graph = {h.id: h.content_hash for h in stored_hashes(svc.stores.graph, SCOPE)}
        assert svc.stores.lexical.hashes(SCOPE) == graph
        svc.forget(SCOPE, entity_ids=["note-1"])
        assert svc.stores.lexical.search(SCOPE, "wombatmark", 10) == []
        assert svc.stores.lexical.hashes(SCOPE) == {}


def test_another_process_sees_a_write_after_its_flush(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with ContextService.open(make_settings(data, index_flush_ms=NEVER_MS)) as writer:
        writer.remember(SCOPE, [_note(1, "quokkamark")])
        with ContextService.open(make_settings(data), mode="read") as reader:
            assert reader.stores.lexical.hashes(SCOPE) == {}  # not durable yet
        writer.sync.flush()
        with ContextService.open(make_settings(data), mode="read") as reader:
            assert list(reader.stores.lexical.hashes(SCOPE)) == ["note-1"]
            assert reader.stores.vector is not None
            assert list(reader.stores.vector.hashes(SCOPE)) == ["note-1"]


# remembers N notes one call at a time with the flush far away, says which calls returned, then
# SIGKILLs itself: every acknowledged write is in the graph, none of them flushed to the indexes
WRITER = textwrap.dedent(
    """
    import json, os, signal, sys
    from graphctx.scope import Scope
    from graphctx.service import ContextService
    from tests.conftest import make_settings

    data, n = sys.argv[1], int(sys.argv[2])
    svc = ContextService.open(make_settings(data, index_flush_ms=10_000))
    scope = Scope("deferred-flush", "default")
    for i in range(n):
        note = {"id": f"note-{i}", "type": "note", "name": f"note {i}", "summary": f"crashmark{i} note"}
        svc.remember(scope, [note])
        print(json.dumps({"acked": note["id"]}), flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
    """
)


def test_kill_9_after_the_acknowledgement_is_repaired_by_the_journal(tmp_path: Path) -> None:
    data = tmp_path / "data"
    proc = subprocess.run(
        [sys.executable, "-c", WRITER, str(data), "5"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert proc.returncode == -9, proc.stderr
    acked = [json.loads(line)["acked"] for line in proc.stdout.splitlines()]
    assert acked == [f"note-{i}" for i in range(5)]
    with ContextService.open(make_settings(data), mode="read") as reader:
        assert reader.stores.journal.pending_writes(100), "the writes should still be journaled"
    with ContextService.open(make_settings(data)) as svc:  # the open for writing replays the journal
        assert svc.recovered["writes_completed"] == 5
        graph = {h.id: h.content_hash for h in stored_hashes(svc.stores.graph, SCOPE)}
        assert sorted(graph) == sorted(acked)
        assert svc.stores.lexical.hashes(SCOPE) == graph
        assert svc.stores.vector is not None and svc.stores.vector.hashes(SCOPE) == graph
        match = _legs(svc.recall(SCOPE, "crashmark3 note"), "note 3")
        assert match.get("bm25") == 1
    with ContextService.open(make_settings(data), mode="read") as reader:
        assert reader.stores.journal.pending_writes(100) == []


def test_index_flush_off_writes_durably_before_the_acknowledgement(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with ContextService.open(make_settings(data, index_flush_ms=0)) as writer:
        writer.remember(SCOPE, [_note(1, "quokkamark")])
        assert writer.status(SCOPE)["index_flush"] == {"enabled": False}
        with ContextService.open(make_settings(data), mode="read") as reader:
            assert list(reader.stores.lexical.hashes(SCOPE)) == ["note-1"]


def _flush_threads() -> int:
    return sum(1 for thread in threading.enumerate() if thread.name == FLUSH_THREAD)


def test_a_second_service_over_wrapped_stores_stops_its_flush_thread_when_closed(tmp_path: Path) -> None:
    """A test double wraps the stores for a second service, which starts its own flusher: closing
    that service stops it (its acknowledged writes made durable first) and leaves the stores open."""
    before = _flush_threads()
    with ContextService.open(make_settings(tmp_path / "data", index_flush_ms=NEVER_MS)) as owner:
        s = owner.stores
        wrapped = Stores(s.graph, ScopeBlindIndex(s.lexical, ()), s.journal, ScopeBlindIndex(s.vector, ()))
        wrapped.embedder = s.embedder
        second = ContextService(wrapped, owner.settings, owns_stores=False)
        assert _flush_threads() == before + 2
        second.remember(SCOPE, [_note(1, "quokkamark")])
        assert second.status(SCOPE)["index_flush"]["waiting"] == 1
        second.close()
        assert _flush_threads() == before + 1
        assert s.journal.count_pending() == 0  # flushed and completed at its close
        assert _legs(owner.recall(SCOPE, "quokkamark marks"), "note 1").get("bm25") == 1  # still open
    assert _flush_threads() == before


def test_a_service_that_fails_to_start_leaves_no_flush_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = make_settings(tmp_path / "data", index_flush_ms=NEVER_MS)
    stores = open_stores(settings)
    before = _flush_threads()

    def broken(self: IndexSync) -> None:
        raise BackendUnavailable("the lexical index cannot be read")

    monkeypatch.setattr(IndexSync, "refill_rebuilt", broken)
    try:
        with pytest.raises(BackendUnavailable):
            ContextService(stores, settings)
        assert _flush_threads() == before
    finally:
        stores.close()
