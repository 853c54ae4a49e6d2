"""Threads for a retrieval leg that may hang (the dense leg: an embedder, a vector store).

A fixed pool queues new calls behind hung ones: four hung vector calls kept every later recall at
the dense leg's full budget, even after the vector store was healthy again. Here every call gets a
thread of its own, at most `limit` alive at once; a call that outlives its budget is abandoned and
its thread ends whenever the call does. While `limit` of them are still running, a new call is
refused at once (`Saturated`: the leg is skipped, the answer falls back to lexical) instead of
waiting behind them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")

LIMIT = 8


class Saturated(RuntimeError):
    """Every thread the leg may use is still running an earlier call."""


class LegRunner(Executor):
    def __init__(self, limit: int = LIMIT, name: str = "graphctx-leg") -> None:
        self.limit, self.name = limit, name
        self._lock = threading.Lock()
        self._threads: set[threading.Thread] = set()
        self._closed = False

    @property
    def running(self) -> int:
        with self._lock:
            return len(self._threads)

    def submit(self, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> Future[T]:
        future: Future[T] = Future()

        def run() -> None:
            try:
                if future.set_running_or_notify_cancel():
                    future.set_result(fn(*args, **kwargs))
            except BaseException as exc:
                future.set_exception(exc)
            finally:
                with self._lock:
                    self._threads.discard(threading.current_thread())

        with self._lock:
            if self._closed:
                raise RuntimeError("cannot run a leg after shutdown")
            if len(self._threads) >= self.limit:
                future.set_exception(Saturated(f"{self.limit} earlier calls of this leg are still running"))
                return future
            thread = threading.Thread(target=run, name=f"{self.name}-{len(self._threads)}", daemon=True)
            self._threads.add(thread)
        thread.start()
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._lock:
            self._closed = True
            threads = list(self._threads)
        if wait:
            for thread in threads:
                thread.join()
