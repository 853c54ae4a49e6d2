"""Parallel readers and one writer on one data directory: every acknowledged write is visible to a
read that starts after the acknowledgement (graph, lexical and dense legs alike), and no read ever
sees part of a write (an entity's fields always come from one version, index hits from one write).

Readers are read-only services opened beside the writer, as `serve --workers` readers and CLI reads
are; several threads share each of them, as a serving process's threads do."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphctx.indexing import embedding_text
from graphctx.model import Entity
from graphctx.scope import Scope
from graphctx.service import ContextService
from graphctx.settings import Settings

SCOPE = Scope("tenant-c", "default")
WRITES = 40
READERS = 2
THREADS_PER_READER = 3


def item(i: int) -> dict[str, object]:
    return {"id": f"e{i}", "name": f"item-{i}", "summary": f"written in round marker{i} of the test"}


def counter(v: int) -> dict[str, object]:
    """One entity rewritten by every write: its fields name the version they belong to."""
    return {
        "id": "counter",
        "name": "counter",
        "aliases": [f"v{v}"],
        "summary": f"version {v} of the counter",
    }


@pytest.fixture
def services(tmp_path: Path) -> Iterator[tuple[ContextService, list[ContextService]]]:
    # read-only services stand for other processes: they see a write once its index flush ran, which
    # index_flush_ms=0 runs before the acknowledgement (`serve --workers` flushes before answering)
    settings = Settings(data_dir=tmp_path / "data", embedder="hashing", index_flush_ms=0)
    writer = ContextService.open(settings)
    writer.remember(SCOPE, [counter(0)])
    readers = [ContextService.open(settings, mode="read") for _ in range(READERS)]
    yield writer, readers
    for r in readers:
        r.close()
    writer.close()


def check_read(reader: ContextService, acked: int, failures: list[str]) -> None:
    """Everything acknowledged up to `acked` is visible; the counter is one version, whole."""
    if acked > 0:
        env = reader.recall(SCOPE, f"marker{acked}")
        found = [it for it in env["items"] if it["name"] == f"item-{acked}"]
        if not found or "bm25" not in found[0]["match"]:
            failures.append(
                f"write {acked} not found by the lexical leg: {[it['name'] for it in env['items']]}"
            )
        exact = reader.recall(SCOPE, f"item-{acked}")
        if not exact["items"] or exact["items"][0]["name"] != f"item-{acked}":
            failures.append(f"write {acked} not found by name")
        embedder, vector = reader.stores.embedder, reader.stores.vector
        assert embedder is not None and vector is not None
        text = embedding_text(Entity(**item(acked), tenant_id=SCOPE.tenant_id, namespace=SCOPE.namespace))
        hits = vector.search(SCOPE, embedder.embed([text])[0].tolist(), 1)
        if not hits or hits[0].entity_id != f"e{acked}":
            failures.append(f"write {acked} not found by the dense index: {hits[:1]}")
    subject = reader.explain(SCOPE, "counter")["subject"]
    version = int(subject["summary"].split()[1])
    if subject.get("aliases") != [f"v{version}"]:
        failures.append(f"torn counter: summary of version {version}, aliases {subject.get('aliases')}")
    if version < acked:
        failures.append(f"counter version {version} read after write {acked} was acknowledged")


def test_parallel_readers_see_every_acknowledged_write_and_nothing_torn(
    services: tuple[ContextService, list[ContextService]],
) -> None:
    writer, readers = services
    acked = [0]  # the last acknowledged write, published only after remember() returned
    done = threading.Event()
    failures: list[str] = []
    reads = [0]

    def write() -> None:
        try:
            for i in range(1, WRITES + 1):
                writer.remember(SCOPE, [item(i), counter(i)])
                acked[0] = i
        finally:
            done.set()

    def read(reader: ContextService) -> None:
        while not done.is_set():
            check_read(reader, acked[0], failures)
            reads[0] += 1
        check_read(reader, acked[0], failures)

    threads = [threading.Thread(target=write)] + [
        threading.Thread(target=read, args=(r,)) for r in readers for _ in range(THREADS_PER_READER)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not any(t.is_alive() for t in threads)
    assert failures == []
    assert acked[0] == WRITES and reads[0] >= len(threads) - 1
    for reader in readers:  # after the last acknowledgement every reader holds exactly the graph's state
        assert len(reader.stores.lexical.hashes(SCOPE)) == WRITES + 1
        assert reader.stores.vector is not None and len(reader.stores.vector.hashes(SCOPE)) == WRITES + 1
