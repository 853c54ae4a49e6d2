"""Where a transport runs an operation: in a worker thread (the event loop never blocks), a read
first waiting for one of the service's read slots in the event loop, not in a thread.

With one read slot per process (the embedded default, `graphctx.service.resolve_read_slots`), a read
handed to the threadpool at once took a thread only to wait on the service's gate: at 32 clients
each reader of `serve --workers 2` had about 16 threads taking turns at the interpreter lock to go
back to sleep. Queued here, a waiting read is a suspended coroutine; it gets a thread when a slot
frees (first come, first served), and its wait counts against its deadline as it did at the gate.
Demo memory, `serve --workers 2`, 32 wrk clients: 446-463 req/s at 3.5-3.9 ms of server CPU a
request waiting in threads, 603-653 at 2.9-3.2 waiting here (docs/results.md).

Each app (HTTP, MCP) queues its own reads; the service keeps its gate, so when both serve at once a
read admitted by one may still wait there for a slot the other's read holds.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

import anyio
import anyio.to_thread

from graphctx import api, deadlines
from graphctx.errors import DeadlineExceeded
from graphctx.service import ContextService

T = TypeVar("T")

_WHAT = "a read slot (settings.read_concurrency)"


class ReadQueue:
    """At most `slots` reads in threads at once; the others wait here, in arrival order, for at most
    `deadline_s` (then DeadlineExceeded, as from the service's gate)."""

    def __init__(self, slots: int, deadline_s: float) -> None:
        if slots < 1:
            raise ValueError("a read queue needs at least one slot")
        self.deadline_s = deadline_s
        self._limiter = anyio.CapacityLimiter(slots)

    async def run(self, fn: Callable[[], T]) -> T:
        """`fn()` in a worker thread once a slot is free, under what is left of the deadline."""
        started = time.monotonic()
        try:
            with anyio.fail_after(self.deadline_s):
                await self._limiter.acquire()
        except TimeoutError:
            raise DeadlineExceeded(
                f"the {self.deadline_s:g} s deadline passed waiting for {_WHAT}", stage=_WHAT
            ) from None
        try:
            left = self.deadline_s - (time.monotonic() - started)
            return await anyio.to_thread.run_sync(_within, left, fn)
        finally:
            self._limiter.release()


def _within(seconds: float, fn: Callable[[], T]) -> T:
    with deadlines.within(seconds):
        return fn()


class Offload:
    """Runs a transport's operation calls off the event loop: reads through a ReadQueue when the
    service limits its reads, anything else (writes, unknown names) straight in a worker thread."""

    def __init__(self, service: ContextService) -> None:
        slots = service.read_slots
        self.reads = ReadQueue(slots, service.settings.deadline_s) if slots > 0 else None

    async def run(self, operation: str, call: Callable[[], T]) -> T:
        op = api.OPERATIONS.get(operation)
        if self.reads is not None and op is not None and not op.mutating:
            return await self.reads.run(call)
        return await anyio.to_thread.run_sync(call)
