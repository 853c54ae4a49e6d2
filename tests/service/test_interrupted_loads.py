"""kill -9 and Ctrl-C at seeded points of a 20,000-entity bulk load: after the next write (or a
`serve` start) graph, lexical and vector hold exactly the same entities with the same content
hashes, nothing is pending, and re-running the load finishes it with nothing duplicated.

The points are store calls counted inside the loading process (seeded, so every run interrupts
the same calls); nothing here depends on wall-clock time."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from graphctx.kernel.reads import stored_hashes
from graphctx.scope import Scope
from graphctx.service import ContextService
from tests.conftest import make_settings

pytestmark = pytest.mark.slow

SCOPE = Scope("bulk-tenant", "default")
ENTITIES = 20_000
FACTS = 4_000
SEED = 13
# a full load makes about 140 counted store calls (11 batches of entities and facts, each an upsert,
# four hydration reads, four lexical and four vector writes)
KILL_POINTS = sorted(random.Random(SEED).sample(range(2, 140), 3))
INTERRUPT_POINTS = sorted(random.Random(SEED + 1).sample(range(2, 120), 2))

# Runs `graphctx remember --file` in this process with the stores wrapped: at counted store call
# AT it SIGKILLs itself ("kill") or sends itself SIGINT ("interrupt", as Ctrl-C does).
LOADER = textwrap.dedent(
    """
    import os, signal, sys
    import graphctx.service as service_module
    from graphctx.cli import main

    data, file, how, at = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    calls = [0]
    original = service_module.open_stores

    def counted(fn):
        def call(*args, **kwargs):
            calls[0] += 1
            if calls[0] == at:
                os.kill(os.getpid(), signal.SIGKILL if how == "kill" else signal.SIGINT)
            return fn(*args, **kwargs)
        return call

    def wrapped(settings, mode="write"):
        stores = original(settings, mode)
        stores.graph.run = counted(stores.graph.run)
        stores.lexical.upsert = counted(stores.lexical.upsert)
        stores.vector.upsert = counted(stores.vector.upsert)
        return stores

    service_module.open_stores = wrapped
    sys.argv = ["graphctx", "--data-dir", data, "--tenant", "bulk-tenant",
                "remember", "--file", file, "--json"]
    main()
    """
)


@pytest.fixture(scope="module")
def bulk_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rng = random.Random(SEED)
    path = tmp_path_factory.mktemp("bulk") / "load.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for i in range(ENTITIES):
            record = {"kind": "entity", "id": f"svc-{i:05d}", "name": f"service-{i:05d}", "type": "service",
                      "summary": f"Service number {i} of the bulk load, team {i % 37}."}  # fmt: skip
            fh.write(json.dumps(record) + "\n")
        for _ in range(FACTS):
            a, b = rng.sample(range(ENTITIES), 2)
            record = {"kind": "fact", "subject_id": f"svc-{a:05d}", "predicate": "depends_on",
                      "object_id": f"svc-{b:05d}"}  # fmt: skip
            fh.write(json.dumps(record) + "\n")
    return path


def run_loader(data: Path, file: Path, how: str, at: int) -> subprocess.CompletedProcess[str]:
    env_code = [sys.executable, "-c", LOADER, str(data), str(file), how, str(at)]
    return subprocess.run(env_code, capture_output=True, text=True, timeout=600, env=_env())


def _env() -> dict[str, str]:
    import os

    return {**os.environ, "GRAPHCTX_EMBEDDER": "hashing"}


def assert_consistent(data: Path) -> int:
    """Graph, lexical and vector hold the same entities with the same hashes; nothing is pending."""
    with ContextService.open(make_settings(data), mode="read") as reader:
        graph = {h.id: h.content_hash for h in stored_hashes(reader.stores.graph, SCOPE)}
        assert reader.stores.lexical.hashes(SCOPE) == graph
        assert reader.stores.vector is not None
        assert reader.stores.vector.hashes(SCOPE) == graph
        assert reader.stores.journal.count_pending() == 0
    return len(graph)


@pytest.mark.parametrize("at", KILL_POINTS)
def test_kill_9_mid_load_is_repaired_by_the_next_write(tmp_path: Path, bulk_file: Path, at: int) -> None:
    data = tmp_path / "data"
    proc = run_loader(data, bulk_file, "kill", at)
    assert proc.returncode == -9, proc.stderr[-2000:]
    small = tmp_path / "one.jsonl"
    small.write_text(json.dumps({"kind": "entity", "id": "after", "name": "after-the-crash"}) + "\n")
    nxt = subprocess.run(
        [sys.executable, "-m", "graphctx.cli", "--data-dir", str(data), "--tenant", "bulk-tenant",
         "remember", "--file", str(small), "--json"],
        capture_output=True, text=True, timeout=600, env=_env(),
    )  # fmt: skip
    assert nxt.returncode == 0, nxt.stderr[-2000:]
    written = assert_consistent(data)  # no manual step: the write above completed the crashed one
    assert 1 <= written <= ENTITIES + 1
    if at != KILL_POINTS[0]:
        return  # re-running the load (below, once) costs a whole load
    # the same load run again completes it, nothing duplicated
    again = run_loader(data, bulk_file, "kill", 10**9)
    assert again.returncode == 0, again.stderr[-2000:]
    report = json.loads(again.stdout)
    assert report["entities"]["created"] + report["entities"]["unchanged"] == ENTITIES
    assert report["facts"]["created"] + report["facts"]["unchanged"] <= FACTS
    assert assert_consistent(data) == ENTITIES + 1


def test_kill_9_mid_load_is_repaired_by_an_open_for_writing(tmp_path: Path, bulk_file: Path) -> None:
    """`serve` opens its stores this way at start."""
    data = tmp_path / "data"
    proc = run_loader(data, bulk_file, "kill", KILL_POINTS[0] + 1)
    assert proc.returncode == -9, proc.stderr[-2000:]
    with ContextService.open(make_settings(data)) as service:
        assert service.recovered["writes_completed"] == 1
    assert_consistent(data)


@pytest.mark.parametrize("at", INTERRUPT_POINTS)
def test_ctrl_c_stops_at_a_batch_boundary_and_says_how_to_resume(
    tmp_path: Path, bulk_file: Path, at: int
) -> None:
    data = tmp_path / "data"
    proc = run_loader(data, bulk_file, "interrupt", at)
    assert proc.returncode == 130, proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    assert report["interrupted"] is True
    assert report["written"] % 2000 == 0 and 0 < report["written"] < ENTITIES + FACTS
    assert "Run the same command again to finish" in proc.stderr
    assert assert_consistent(data) == min(report["written"], ENTITIES)  # whole batches, all stores
    again = run_loader(data, bulk_file, "interrupt", 10**9)
    assert again.returncode == 0, again.stderr[-2000:]
    second = json.loads(again.stdout)
    assert second["entities"]["unchanged"] == min(report["written"], ENTITIES)
    assert second["entities"]["created"] + second["entities"]["unchanged"] == ENTITIES
    assert assert_consistent(data) == ENTITIES
