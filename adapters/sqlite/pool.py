"""The read connections of one SQLite store, handed out first come, first served.

A connection returned goes straight to the thread that has waited longest, so a waiter is never
overtaken by threads arriving later (a plain queue lets them take it first: under load a waiter can
lose its turn again and again). Waiting is queueing behind other threads of this process, not a
backend fault: it is bounded by the operation's deadline only.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import deque
from collections.abc import Callable

from graphctx import deadlines
from graphctx.errors import BackendUnavailable, DeadlineExceeded


class _Waiter:
    def __init__(self) -> None:
        self.ready = threading.Event()
        self.conn: sqlite3.Connection | None = None


class ReadPool:
    def __init__(self, limit: int, name: str) -> None:
        self.limit, self.name = limit, name
        self._closed = False
        self._lock = threading.Lock()
        self._idle: list[sqlite3.Connection] = []
        self._all: list[sqlite3.Connection] = []
        self._waiters: deque[_Waiter] = deque()

    def __len__(self) -> int:
        with self._lock:
            return len(self._all)

    def borrow(self, open_one: Callable[[], sqlite3.Connection]) -> sqlite3.Connection:
        """An idle connection, a new one (`open_one`) while under the limit, else the next one given
        back, in the order of asking."""
        with self._lock:
            if self._closed:
                raise BackendUnavailable(f"{self.name} is closed")
            if self._idle:
                return self._idle.pop()
            if len(self._all) < self.limit:
                conn = open_one()  # under the lock: the limit holds (opening a WAL file is quick)
                self._all.append(conn)
                return conn
            waiter = _Waiter()
            self._waiters.append(waiter)
        deadline = deadlines.current()
        waited = waiter.ready.wait(None if deadline is None else max(0.0, deadline.remaining()))
        with self._lock:
            if waiter.conn is not None:  # handed over, perhaps just as the wait ended
                return waiter.conn
            if self._closed:
                raise BackendUnavailable(f"{self.name} is closed")
            self._waiters.remove(waiter)
        assert deadline is not None and not waited
        what = "a sqlite read connection"
        raise DeadlineExceeded(f"the {deadline.seconds:g} s deadline passed waiting for {what}", stage=what)

    def give_back(self, conn: sqlite3.Connection) -> None:
        with self._lock:
            if self._closed:  # closed meanwhile: close_all closed it
                return
            if self._waiters:
                waiter = self._waiters.popleft()
                waiter.conn = conn
                waiter.ready.set()
            else:
                self._idle.append(conn)

    def close_all(self) -> None:
        """Close every connection (lent ones too, as the store closes) and wake every waiter."""
        with self._lock:
            self._closed = True
            for waiter in self._waiters:
                waiter.ready.set()
            self._waiters.clear()
            for conn in self._all:
                conn.close()
            self._all.clear()
            self._idle.clear()
