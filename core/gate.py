"""A fair gate for read operations: at most N run at once, the others wait in arrival order.

Reads are CPU-bound Python under one interpreter lock: past a few at once they only take turns, and
every extra runnable thread lengthens the wait of each thread that gave the lock up for I/O (a write's
SQLite, fsync or Tantivy calls, dozens per write) to get it back. A waiting read holds no lock and
uses no CPU; it is handed a slot directly by the read that frees one.
"""

from __future__ import annotations

import collections
import threading


class FairGate:
    """At most `slots` holders; waiters are served first come, first served. Has the `acquire(timeout=)`
    / `release()` shape `graphctx.deadlines.acquire` takes."""

    def __init__(self, slots: int) -> None:
        self._lock = threading.Lock()
        self._free = slots
        self._waiters: collections.deque[threading.Event] = collections.deque()

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        with self._lock:
            if self._free > 0 and not self._waiters:
                self._free -= 1
                return True
            if not blocking:
                return False
            turn = threading.Event()
            self._waiters.append(turn)
        if turn.wait(None if timeout < 0 else timeout):
            return True
        with self._lock:
            if turn.is_set():  # handed a slot just as the wait ended
                return True
            self._waiters.remove(turn)
            return False

    def release(self) -> None:
        with self._lock:
            if self._waiters:
                self._waiters.popleft().set()  # the slot passes to the longest waiter
            else:
                self._free += 1

    def waiting(self) -> int:
        with self._lock:
            return len(self._waiters)
