"""Threads for a retrieval leg that may hang (the dense leg: an embedder, a vector store).

A fixed pool queues new calls behind hung ones: four hung vector calls kept every later recall at
the dense leg's full budget, even after the vector store was healthy again. Here a call goes to an
idle thread when there is one, else to a new thread, with at most `limit` alive at once; a call that
outlives its budget is abandoned and its thread is busy until the call returns. While `limit` of
them are busy, a new call is refused at once (`Saturated`: the leg is skipped, the answer falls back
to lexical) instead of waiting behind them. Idle threads wait for the next call (starting a thread
per call cost a recall about as much as its dense search) and end after `idle_s` without one.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")

LIMIT = 8
IDLE_S = 60.0

_Call = tuple[Future[Any], Callable[..., Any], tuple[Any, ...], dict[str, Any]]


class Saturated(RuntimeError):
    """Every thread the leg may use is still running an earlier call."""


class LegRunner(Executor):
    def __init__(self, limit: int = LIMIT, name: str = "graphctx-leg", idle_s: float = IDLE_S) -> None:
        self.limit, self.name, self.idle_s = limit, name, idle_s
        self._lock = threading.Lock()
        self._calls: queue.SimpleQueue[_Call | None] = queue.SimpleQueue()
        self._threads: set[threading.Thread] = set()
        self._idle = 0
        """Threads waiting for a call that no submitted call has claimed yet."""
        self._closed = False

    @property
    def running(self) -> int:
        """Threads running a call (a hung call's thread included)."""
        with self._lock:
            return len(self._threads) - self._idle

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        future: Future[T] = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError("cannot run a leg after shutdown")
            if self._idle:
                self._idle -= 1  # claimed: that thread (or another idle one) takes this call
                self._calls.put((future, fn, args, kwargs))
                return future
            if len(self._threads) >= self.limit:
                future.set_exception(Saturated(f"{self.limit} earlier calls of this leg are still running"))
                return future
            thread = threading.Thread(
                target=self._work,
                args=((future, fn, args, kwargs),),
                name=f"{self.name}-{len(self._threads)}",
                daemon=True,
            )
            self._threads.add(thread)
        thread.start()
        return future

    def _work(self, call: _Call | None) -> None:
        while call is not None:
            future, fn, args, kwargs = call
            try:
                if future.set_running_or_notify_cancel():
                    future.set_result(fn(*args, **kwargs))
            except BaseException as exc:
                future.set_exception(exc)
            del future, fn, args, kwargs, call  # nothing of a finished call outlives it
            with self._lock:
                if self._closed:
                    break
                self._idle += 1
            call = self._next()
        with self._lock:
            self._threads.discard(threading.current_thread())

    def _next(self) -> _Call | None:
        """The next call for this idle thread; None: idle too long (or shut down), so it ends."""
        while True:
            try:
                return self._calls.get(timeout=self.idle_s)
            except queue.Empty:
                with self._lock:
                    if self._idle:  # an unclaimed idle slot is this thread's own: leave with it
                        self._idle -= 1
                        return None
                # every idle thread is claimed: a call is on its way to one of us

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            self._closed = True
            threads = list(self._threads)
            idle, self._idle = self._idle, 0
        for _ in range(idle):
            self._calls.put(None)
        if wait:
            for thread in threads:
                thread.join()
