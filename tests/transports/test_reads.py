"""Reads of the HTTP API wait for a read slot in the event loop (graphctx.transports.reads): at most
`slots` in threads at once, served in arrival order, each wait bounded by the read's deadline, and
the deadline's remainder carried into the read."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from graphctx import deadlines, registry
from graphctx.auth import Principal
from graphctx.errors import DeadlineExceeded
from graphctx.scope import Scope
from graphctx.service import ContextService
from graphctx.transports.http import create_app
from graphctx.transports.reads import ReadQueue
from tests.conftest import make_settings
from tests.transports.live import LiveServer

SCOPE = Scope("reads", "default")


class _Probe:
    """Records how many calls run at once and in which order they started."""

    def __init__(self, hold_s: float = 0.01) -> None:
        self.hold_s = hold_s
        self.lock = threading.Lock()
        self.running = 0
        self.most = 0
        self.started: list[int] = []

    def call(self, i: int) -> int:
        with self.lock:
            self.running += 1
            self.most = max(self.most, self.running)
            self.started.append(i)
        time.sleep(self.hold_s)
        with self.lock:
            self.running -= 1
        return i


@pytest.mark.parametrize("slots", [1, 3])
def test_at_most_slots_reads_run_at_once_and_they_start_in_arrival_order(slots: int) -> None:
    queue, probe = ReadQueue(slots, deadline_s=30), _Probe()
    results: list[int] = []

    async def main() -> None:
        async def one(i: int) -> None:
            results.append(await queue.run(lambda: probe.call(i)))

        async with anyio.create_task_group() as tg:
            for i in range(12):
                tg.start_soon(one, i)
                await anyio.sleep(0)  # task i reaches the queue before task i + 1 starts

    anyio.run(main)
    assert sorted(results) == list(range(12))
    assert probe.most == slots
    if slots == 1:
        assert probe.started == list(range(12))


def test_a_read_waiting_past_its_deadline_is_refused_and_leaves_the_slot_free() -> None:
    queue = ReadQueue(1, deadline_s=0.2)
    release = threading.Event()

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(queue.run, lambda: release.wait(10))
            await anyio.sleep(0.05)  # the slow read holds the only slot
            with pytest.raises(DeadlineExceeded) as refused:
                await queue.run(lambda: "never")
            assert "read slot" in refused.value.message
            release.set()
        assert await queue.run(lambda: "after") == "after"  # the timed-out waiter took no slot

    anyio.run(main)


def test_the_read_runs_under_what_is_left_of_the_deadline() -> None:
    queue = ReadQueue(1, deadline_s=5.0)
    release = threading.Event()
    seen: list[float] = []

    def remaining() -> None:
        deadline = deadlines.current()
        assert deadline is not None
        seen.append(deadline.remaining())

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(queue.run, lambda: release.wait(10))
            await anyio.sleep(0.05)
            tg.start_soon(queue.run, remaining)
            await anyio.sleep(0.3)  # the second read waits this long for the slot
            release.set()

    anyio.run(main)
    assert len(seen) == 1 and 0 < seen[0] <= 5.0 - 0.3


def test_a_queue_needs_a_slot() -> None:
    with pytest.raises(ValueError, match="at least one slot"):
        ReadQueue(0, deadline_s=1)


class _SlowFirstRecall(ContextService):
    """The first recall, once answered, blocks until released: it holds the only read slot."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.release = threading.Event()
        self.holding = threading.Event()
        self._first = True
        self.entered = 0

    def recall(self, *args: Any, **kwargs: Any) -> Any:
        self.entered += 1
        answer = super().recall(*args, **kwargs)
        if self._first:
            self._first = False
            self.holding.set()
            self.release.wait(20)
        return answer


def test_over_http_reads_queued_behind_a_slow_one_take_no_thread_and_time_out_before_reaching_the_service(
    tmp_path: Path,
) -> None:
    from graphctx.kernel.stores import open_stores

    settings = make_settings(tmp_path / "data", read_concurrency=1, deadline_s=1.0)
    service = _SlowFirstRecall(open_stores(settings), settings)
    keys = registry.factory("keys", settings.key_store_backend)(settings)
    try:
        service.remember(SCOPE, [{"id": "a", "type": "note", "name": "alpha", "summary": "queued"}])
        auth = {"Authorization": f"Bearer {keys.create(Principal('agent', SCOPE.tenant_id)).token}"}
        with (
            LiveServer(create_app(service, keys, settings), settings) as server,
            httpx.Client(base_url=server.url, headers=auth, timeout=30) as http,
            ThreadPoolExecutor(5) as pool,
        ):
            slow = pool.submit(http.post, "/v1/recall", json={"query": "queued"})
            assert service.holding.wait(20)
            queued = [pool.submit(http.post, "/v1/recall", json={"query": "queued"}) for _ in range(4)]
            for waited in (f.result(30) for f in queued):
                assert waited.status_code >= 500, waited.text
                assert waited.json()["error"]["code"] == "deadline_exceeded"
            # they waited in the event loop: none reached the service (a thread each, at its gate)
            assert service.entered == 1
            service.release.set()
            first = slow.result(30)
            assert first.status_code == 200 and first.json()["items"]
            again = http.post("/v1/recall", json={"query": "queued"})
            assert again.status_code == 200 and again.json()["items"]
            assert service.entered == 2
    finally:
        service.release.set()
        service.close()
        keys.close()
