"""Group commit: concurrent `remember` calls committed as one batch, each caller still getting its own
all-or-nothing result, and a refused call never failing its neighbours."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from graphctx import deadlines
from graphctx.errors import BackendUnavailable, DeadlineExceeded, InputError, NotFound
from graphctx.group import GroupCommit
from graphctx.model import Entity, Fact
from graphctx.scope import Scope
from graphctx.service import ContextService
from graphctx.writes import ApplyReport, WritePlan
from tests.conftest import make_settings

SCOPE = Scope("group-commit", "default")


def _wait_for(predicate: Any, what: str) -> None:
    give_up = time.monotonic() + 10
    while not predicate():
        assert time.monotonic() < give_up, f"timed out waiting for {what}"
        time.sleep(0.005)


def test_callers_queued_behind_the_lock_are_one_batch_each_with_its_own_outcome() -> None:
    lock = threading.Lock()
    batches: list[list[int]] = []

    def run(items: Sequence[int]) -> list[int | BaseException]:
        batches.append(list(items))
        return [InputError(f"item {i} refused") if i == 3 else i * 10 for i in items]

    group: GroupCommit[int, int] = GroupCommit(run, lock, wait_s=0.0, max_items=64)
    results: dict[int, object] = {}

    def call(i: int) -> None:
        try:
            results[i] = group.submit(i)
        except InputError as exc:
            results[i] = exc

    lock.acquire()  # another write is running: the callers queue behind it
    threads = [threading.Thread(target=call, args=(i,)) for i in range(6)]
    for th in threads:
        th.start()
    _wait_for(lambda: group.queued == 6, "six queued callers")
    lock.release()
    for th in threads:
        th.join(10)
    assert len(batches) == 1 and sorted(batches[0]) == list(range(6))
    assert {i: r for i, r in results.items() if i != 3} == {0: 0, 1: 10, 2: 20, 4: 40, 5: 50}
    assert isinstance(results[3], InputError)
    assert group.stats()["mean_batch"] == 6


def test_a_caller_whose_deadline_passes_in_the_queue_withdraws_with_nothing_run() -> None:
    lock = threading.Lock()
    ran: list[int] = []
    group: GroupCommit[int, int] = GroupCommit(
        lambda items: [ran.append(i) or i for i in items], lock, wait_s=0.0, max_items=8
    )
    lock.acquire()
    try:
        with deadlines.within(0.2), pytest.raises(DeadlineExceeded):
            group.submit(1)
    finally:
        lock.release()
    assert group.submit(2) == 2 and ran == [2]


def test_a_batch_that_fails_as_a_whole_fails_every_caller_and_the_next_leader_steps_up() -> None:
    lock = threading.Lock()
    calls = 0

    def run(items: Sequence[int]) -> list[int | BaseException]:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise NotFound("the store went away")
        return list(items)

    group: GroupCommit[int, int] = GroupCommit(run, lock, wait_s=0.0, max_items=8)
    with pytest.raises(NotFound):
        group.submit(1)
    assert group.submit(2) == 2


@pytest.fixture
def service(tmp_path: Path) -> Any:
    # a long leader wait: concurrent callers of the test land in one batch
    with ContextService.open(make_settings(tmp_path / "data", group_commit_wait_ms=50)) as svc:
        yield svc


def test_concurrent_remembers_each_get_exact_counts_and_are_readable_at_once(service: Any) -> None:
    service.remember(SCOPE, [{"id": "team", "name": "platform team"}])
    start = threading.Barrier(8)
    reports: dict[int, Any] = {}
    errors: list[BaseException] = []

    def write(i: int) -> None:
        start.wait()
        try:
            reports[i] = service.remember(
                SCOPE,
                [{"id": f"svc{i}", "name": f"service-{i}", "summary": f"marker{i} service"}],
                # every call points at the same entity, and four of them set one single-valued slot
                [{"subject_id": f"svc{i}", "predicate": "owned_by", "object_id": "team"}]
                + (
                    [{"subject_id": "team", "predicate": "located_in", "value": f"site-{i}"}] if i < 4 else []
                ),
            )
            env = service.recall(SCOPE, f"marker{i}")  # read after the acknowledged write
            assert any(it["name"] == f"service-{i}" and "bm25" in it["match"] for it in env["items"]), env
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(30)
    assert not errors, errors
    for i, report in reports.items():
        assert report["entities"] == {"created": 1, "updated": 0, "unchanged": 0}
        assert report["facts"]["created"] == (2 if i < 4 else 1)
    # the single-valued slot: exactly one current value, the three others ended by their successors
    explained = service.explain(SCOPE, "team")
    located = [f for f in explained["facts"] if f.get("predicate") == "located_in"]
    current = [f for f in located if f.get("current")]
    assert len(current) == 1, located
    assert sum(len(r["superseded"]) for r in reports.values()) == 3
    service.flush()  # the indexes' disk commits run after the acknowledgement
    assert service.stores.journal.count_pending() == 0
    assert service.status(SCOPE)["group_commit"]["calls"] >= 8


def test_a_refused_plan_in_a_group_fails_alone_and_leaves_nothing_journaled(service: Any) -> None:
    def entity(i: str) -> Entity:
        return Entity(id=i, name=i, tenant_id=SCOPE.tenant_id, namespace=SCOPE.namespace, graph_id="")

    good = [WritePlan(entities=(entity(f"ok{i}"),)) for i in range(2)]
    dangling = Fact(
        subject_id="nobody",
        predicate="depends_on",
        object_id="nothing",
        tenant_id=SCOPE.tenant_id,
        namespace=SCOPE.namespace,
        graph_id="",
    )
    bad = WritePlan(facts=(dangling,))
    outcomes, synced = service.sync.commit_group(SCOPE, [good[0], bad, good[1]])
    assert isinstance(outcomes[1], NotFound | InputError)
    assert all(isinstance(outcomes[i], ApplyReport) and outcomes[i].entities["created"] == 1 for i in (0, 2))
    assert synced.index_error is None and synced.indexed == 2
    assert set(service.stores.lexical.hashes(SCOPE)) == {"ok0", "ok1"}
    service.flush()  # the indexes' disk commits run after the acknowledgement
    assert service.stores.journal.count_pending() == 0


def test_status_shows_every_cache_with_its_bound_and_the_process_memory(service: Any) -> None:
    service.remember(SCOPE, [{"id": "a", "name": "alpha_beta.gamma"}])
    service.recall(SCOPE, "alphaBeta")
    memory = service.status(SCOPE)["memory"]
    assert memory["rss_bytes"] > 0 and memory["open_fds"] > 0
    caches = memory["caches"]
    bounded = {
        "identifier_parts",
        "identifier_tokens",
        "sqlite_read_connections",
        "hashing_buckets",
        "flat_open_scopes",
    }
    assert bounded <= set(caches)
    for name in bounded:
        assert 0 < caches[name]["entries"] <= caches[name]["max_entries"], (name, caches[name])
    assert caches["flat_vectors"]["bytes"] > 0  # the index itself: no maximum, sized by the data


def test_a_round_that_fails_to_commit_fails_its_callers_only(service: Any) -> None:
    # two calls writing one entity: the second is planned after the first is written (a later round of
    # the same batch, or a later batch); the journal refuses the second commit
    journal = service.stores.journal
    real, seen = journal.record_write, []

    def record_write(scope: Scope, plan: str) -> int:
        seen.append(plan)
        if len(seen) == 2:
            raise BackendUnavailable("the journal's disk is full (injected)")
        return int(real(scope, plan))

    journal.record_write = record_write
    start = threading.Barrier(2)
    outcomes: dict[int, Any] = {}

    def write(i: int) -> None:
        start.wait()
        try:
            outcomes[i] = service.remember(SCOPE, [{"id": "same", "name": "same", "summary": f"v{i}"}])
        except BackendUnavailable as exc:
            outcomes[i] = exc

    threads = [threading.Thread(target=write, args=(i,)) for i in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(30)
    failed = [i for i, o in outcomes.items() if isinstance(o, BackendUnavailable)]
    assert len(outcomes) == 2 and len(failed) == 1, outcomes
    written = 1 - failed[0]
    assert outcomes[written]["entities"]["created"] == 1
    summary = service.explain(SCOPE, "same")["subject"]["summary"]
    assert summary == f"v{written}"
