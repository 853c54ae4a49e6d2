"""Connections spread evenly over the readers of `graphctx serve --workers N`.

The readers share one listening socket. Each accepts in a thread of its own, and only while it has no
more open connections than the least loaded reader that is serving; the thread hands what it accepts
to the reader's event loop. A keep-alive client keeps its connection for as long as it lives, so the
connections a reader holds are its share of the clients, and its share of the load.

What this replaces, measured with 8 keep-alive clients and two readers: with one shared socket and
each event loop accepting, whichever reader woke first took them all (3 of 4 trials); with a
SO_REUSEPORT socket per reader, the kernel's hash of each connection gave 5/3 or 6/2 splits in 5 of 8
trials, so one reader queued requests while the other idled."""

from __future__ import annotations

import asyncio
import errno
import logging
import select
import socket
import threading
from collections.abc import Callable
from multiprocessing.context import BaseContext
from typing import Any

import uvicorn

log = logging.getLogger(__name__)

GATE_POLL_S = 0.005
"""How often a reader with more connections than another looks again (the other may have accepted)."""
ACCEPT_POLL_S = 0.1
"""How long an accepting thread waits for a connection before it looks at the counts and stop flag."""
_OUT_OF_RESOURCES = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}
_RESOURCE_BACKOFF_S = 0.1


class Shares:
    """Open connections per reader, in memory shared by the writer and its readers (-1: a reader
    that is not accepting: starting, stopping or dead, so it never holds the others back).

    No lock is shared between processes (a reader killed while holding one would stop every other
    reader from accepting): each slot is written by one process only (its reader; the writer only
    marks a dead reader's slot), the others read it, and a slot is one aligned int, read whole.
    Two readers that look at the counts at the same instant may both accept one connection; the
    next connections even that out."""

    def __init__(self, readers: int, context: BaseContext) -> None:
        self._counts: Any = context.RawArray("i", [-1] * readers)
        self._lock = threading.Lock()  # this process's threads: the acceptor and the event loop

    def __getstate__(self) -> dict[str, Any]:
        return {"_counts": self._counts}  # to a reader at its start; it makes its own lock

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._counts = state["_counts"]
        self._lock = threading.Lock()

    def serving(self, reader: int) -> None:
        with self._lock:
            self._counts[reader] = 0

    def gone(self, reader: int) -> None:
        with self._lock:
            self._counts[reader] = -1

    def closed(self, reader: int) -> None:
        with self._lock:
            if self._counts[reader] > 0:
                self._counts[reader] -= 1

    def counts(self) -> list[int]:
        return list(self._counts)

    def may_accept(self, reader: int) -> bool:
        counts = self.counts()
        return all(counts[reader] <= n for n in counts if n >= 0)

    def admit(self, reader: int, accept: Callable[[], socket.socket | None]) -> socket.socket | None:
        """`accept()` if this reader may, counted. Looked at again right before accepting: a reader
        woken by a connection after waiting with stale counts would take one too many."""
        if not self.may_accept(reader):
            return None
        conn = accept()
        if conn is not None:
            with self._lock:
                self._counts[reader] += 1
        return conn


class _Once:
    """Runs `action` on the first call only: a connection is counted closed once, whichever of its
    endings (hand-over failed, connection lost) comes first."""

    def __init__(self, action: Callable[[], None]) -> None:
        self._action: Callable[[], None] | None = action
        self._lock = threading.Lock()

    def __call__(self) -> None:
        with self._lock:
            action, self._action = self._action, None
        if action is not None:
            action()


HandOver = Callable[[socket.socket, Callable[[], None]], None]
"""Takes an accepted connection and the callable to run once when it closes."""


class Acceptor:
    """One reader's accepting thread on the shared listening socket (see the module)."""

    def __init__(
        self,
        sock: socket.socket,
        shares: Shares,
        reader: int,
        hand_over: HandOver,
        failed: Callable[[], None] = lambda: None,
    ) -> None:
        self._sock = sock
        self._shares = shares
        self._reader = reader
        self._hand_over = hand_over
        self._failed = failed
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="graphctx-acceptor", daemon=True)

    def start(self) -> None:
        self._sock.setblocking(False)  # another reader may take a connection between select and accept
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        self._shares.serving(self._reader)
        try:
            while not self._stop.is_set():
                if not self._shares.may_accept(self._reader):
                    self._stop.wait(GATE_POLL_S)
                    continue
                conn = self._accept()
                if conn is not None and not self._give(conn):
                    break
        except Exception:  # the socket failed: the other readers go on accepting; this one ends
            log.exception("reader %d stopped accepting connections; it stops", self._reader)
            self._failed()
        finally:
            self._shares.gone(self._reader)

    def _accept(self) -> socket.socket | None:
        try:
            ready, _, _ = select.select([self._sock], [], [], ACCEPT_POLL_S)
            conn = self._shares.admit(self._reader, self._take) if ready else None
        except OSError as exc:
            if exc.errno not in _OUT_OF_RESOURCES:
                raise
            log.warning("cannot accept a connection now (%s); trying again", exc)
            self._stop.wait(_RESOURCE_BACKOFF_S)
            return None
        if conn is not None:
            conn.setblocking(False)
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # as asyncio's own accept does
        return conn

    def _take(self) -> socket.socket | None:
        try:
            return self._sock.accept()[0]
        except (BlockingIOError, InterruptedError, ConnectionAbortedError):
            return None  # another reader took it, or the client gave up in the queue

    def _give(self, conn: socket.socket) -> bool:
        """Hand the connection over; False when the event loop can take no more (it is closing)."""
        release = _Once(lambda: self._shares.closed(self._reader))
        try:
            self._hand_over(conn, release)
        except RuntimeError:
            conn.close()
            release()
            return False
        return True


class BalancedServer(uvicorn.Server):
    """uvicorn's server for one reader: connections come from its Acceptor instead of a listener of
    the event loop's own; everything else (lifespan, limits, graceful shutdown) is uvicorn's."""

    def __init__(self, config: uvicorn.Config, sock: socket.socket, shares: Shares, reader: int) -> None:
        super().__init__(config)
        self._listening = sock
        self._shares = shares
        self._reader = reader
        self._acceptor: Acceptor | None = None

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=[])  # lifespan and state, no listener
        if not self.started:
            return
        loop = asyncio.get_running_loop()

        def hand_over(conn: socket.socket, release: Callable[[], None]) -> None:
            asyncio.run_coroutine_threadsafe(self._adopt(conn, release), loop)

        def failed() -> None:  # as at SIGTERM: the writer starts another reader in its place
            self.should_exit = True

        self._acceptor = Acceptor(self._listening, self._shares, self._reader, hand_over, failed)
        self._acceptor.start()

    async def _adopt(self, conn: socket.socket, release: Callable[[], None]) -> None:
        config, loop = self.config, asyncio.get_running_loop()

        def protocol() -> asyncio.Protocol:
            made: Any = config.http_protocol_class(  # type: ignore[call-arg]
                config=config, server_state=self.server_state, app_state=self.lifespan.state, _loop=loop
            )
            made.released = release  # run by GuardedProtocol.connection_lost
            return made  # type: ignore[no-any-return]

        try:
            _, made = await loop.connect_accepted_socket(protocol, conn)
        except OSError:
            conn.close()
            release()
            return
        if self.should_exit:  # accepted as shutdown began: answer what is in flight, then close
            made.shutdown()  # type: ignore[attr-defined]

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        if self._acceptor is not None:
            await asyncio.to_thread(self._acceptor.stop)
        await super().shutdown(sockets)
