"""Group commit: concurrent callers hand their work to one leader, which runs it as one batch.

The first caller to find no leader becomes it: it takes the write lock (waiting within its own
deadline), waits `wait_s` for more callers to queue, takes what is queued (its own work first, at
most `max_items`), runs the batch under the earliest deadline among the callers taken, and hands
each caller its own result or error. Callers still queued when it finishes elect the next leader.
Under load the queue fills while a batch commits, so batches grow with the load and the wait only
matters when writes arrive one at a time.

A queued caller whose deadline passes before a leader takes its work withdraws it (nothing written,
`DeadlineExceeded`); once taken, it waits for the batch, which ends within that caller's deadline.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from graphctx import deadlines
from graphctx.errors import DeadlineExceeded

MIN_BATCH_S = 0.25
"""A caller with less time left than this when its batch starts is withdrawn (nothing written): the
batch runs under the earliest deadline of its callers, and one nearly spent would fail them all."""

T = TypeVar("T")
R = TypeVar("R")


@dataclass(eq=False)
class _Pending(Generic[T, R]):
    item: T
    deadline: deadlines.Deadline | None
    taken: bool = False
    done: bool = False
    outcome: object = None


class GroupCommit(Generic[T, R]):
    """`submit(item)` returns `run(items)[i]` for its item, or raises the exception in its place.

    `run` is called by one leader at a time, holding `lock`, and returns one outcome per item (a
    result, or an exception for that caller alone); an exception it raises goes to every caller of
    the batch."""

    def __init__(
        self,
        run: Callable[[Sequence[T]], Sequence[R | BaseException]],
        lock: deadlines.Lock,
        *,
        wait_s: float,
        max_items: int,
        what: str = "the write lock (another write is running)",
    ) -> None:
        self._run = run
        self._lock = lock
        self._what = what
        self.wait_s = wait_s
        self.max_items = max(1, max_items)
        self._cond = threading.Condition()
        self._queue: list[_Pending[T, R]] = []
        self._leading = False
        self.batches = 0
        """Batches run so far (`status` shows it with `items`: their mean size)."""
        self.items = 0

    @property
    def queued(self) -> int:
        """Callers waiting for a leader to take their work."""
        with self._cond:
            return sum(not p.taken for p in self._queue)

    def stats(self) -> dict[str, float | int]:
        return {
            "batches": self.batches,
            "calls": self.items,
            "mean_batch": round(self.items / self.batches, 2) if self.batches else 0,
            "queued": self.queued,
            "wait_ms": self.wait_s * 1000,
            "max_calls": self.max_items,
        }

    def submit(self, item: T) -> R:
        mine: _Pending[T, R] = _Pending(item, deadlines.current())
        with self._cond:
            self._queue.append(mine)
            while not mine.done and (self._leading or mine.taken):
                self._cond.wait(timeout=self._patience(mine))
                if not mine.taken and not mine.done and _expired(mine):
                    self._queue.remove(mine)
                    raise DeadlineExceeded(
                        f"the {mine.deadline.seconds:g} s deadline passed waiting for {self._what}"
                        if mine.deadline
                        else f"the deadline passed waiting for {self._what}",
                        stage=self._what,
                    )
            if not mine.done:
                self._leading = True
        if not mine.done:
            self._lead(mine)
        if isinstance(mine.outcome, BaseException):
            raise mine.outcome
        return mine.outcome  # type: ignore[return-value]

    @staticmethod
    def _patience(mine: _Pending[T, R]) -> float | None:
        if mine.taken or mine.deadline is None:
            return 1.0  # re-checked: the batch that took it ends within its deadline
        return max(0.0, min(1.0, mine.deadline.remaining()))

    def _lead(self, mine: _Pending[T, R]) -> None:
        taken: list[_Pending[T, R]] = []
        try:
            deadlines.acquire(self._lock, self._what)
        except BaseException as exc:
            with self._cond:
                self._queue.remove(mine)
                self._finish([mine], exc)
            return
        try:
            if self.wait_s > 0:
                time.sleep(self.wait_s)
            with self._cond:
                taken = self._take(mine)
            live = [p for p in taken if not _expired(p, MIN_BATCH_S)]
            for p in taken:
                if p not in live:
                    p.outcome = DeadlineExceeded(
                        f"the deadline passed waiting for {self._what}", stage=self._what
                    )
            if live:
                self._run_batch(live)
        finally:
            self._lock.release()
            with self._cond:
                self._finish(taken or [mine], None)

    def _take(self, mine: _Pending[T, R]) -> list[_Pending[T, R]]:
        others = [p for p in self._queue if p is not mine][: self.max_items - 1]
        taken = [mine, *others]
        for p in taken:
            p.taken = True
            self._queue.remove(p)
        return taken

    def _run_batch(self, live: list[_Pending[T, R]]) -> None:
        bounded = [p.deadline for p in live if p.deadline is not None]
        seconds = min(d.remaining() for d in bounded) if bounded else None
        items = [p.item for p in live]
        try:
            # in a context of its own: the leader's deadline is only one of the callers'
            outcomes = contextvars.Context().run(self._run_within, seconds, items)
            if len(outcomes) != len(live):
                raise RuntimeError(f"a group commit returned {len(outcomes)} outcomes for {len(live)} calls")
        except BaseException as exc:  # the batch as a whole failed: every caller is told
            for p in live:
                p.outcome = exc
            if not isinstance(exc, Exception):
                raise
            return
        for p, outcome in zip(live, outcomes, strict=True):
            p.outcome = outcome
        self.batches += 1
        self.items += len(live)

    def _run_within(self, seconds: float | None, items: list[T]) -> Sequence[R | BaseException]:
        if seconds is None:
            return self._run(items)
        with deadlines.within(max(0.0, seconds)):
            return self._run(items)

    def _finish(self, done: list[_Pending[T, R]], error: BaseException | None) -> None:
        """Under the condition: hand out the outcomes and let the next leader step up."""
        for p in done:
            if error is not None:
                p.outcome = error
            p.done = True
        self._leading = False
        self._cond.notify_all()


def _expired(p: _Pending[T, R], margin: float = 0.0) -> bool:
    return p.deadline is not None and p.deadline.remaining() <= margin
