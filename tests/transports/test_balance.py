"""The readers of `graphctx serve --workers N` share the connections evenly
(graphctx.transports.balance): each accepts only while it holds no more than the least loaded one."""

from __future__ import annotations

import multiprocessing
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager

from graphctx.transports.balance import Acceptor, Shares
from graphctx.transports.workers import bind

WAIT_S = 30.0


def _until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


class _Reader:
    """An Acceptor with a hand-over that keeps each connection until the test closes it."""

    def __init__(self, sock: socket.socket, shares: Shares, index: int) -> None:
        self.held: list[tuple[socket.socket, Callable[[], None]]] = []
        self._lock = threading.Lock()
        self.acceptor = Acceptor(sock, shares, index, self._keep)

    def _keep(self, conn: socket.socket, release: Callable[[], None]) -> None:
        with self._lock:
            self.held.append((conn, release))

    def close_some(self, n: int) -> None:
        with self._lock:
            gone, self.held = self.held[:n], self.held[n:]
        for conn, release in gone:
            conn.close()
            release()
            release()  # a connection is counted closed once, however many endings it reports


@contextmanager
def _readers(n: int) -> Iterator[tuple[socket.socket, Shares, list[_Reader]]]:
    with bind("127.0.0.1", 0) as sock:
        shares = Shares(n, multiprocessing.get_context("spawn"))
        readers = [_Reader(sock, shares, i) for i in range(n)]
        for reader in readers:
            reader.acceptor.start()
        _until(lambda: shares.counts() == [0] * n, "the readers to accept")
        try:
            yield sock, shares, readers
        finally:
            for reader in readers:
                reader.acceptor.stop()
                reader.close_some(len(reader.held))


def _connect(sock: socket.socket, shares: Shares, clients: list[socket.socket]) -> None:
    """One more client, once the one before it has been accepted (as clients arriving over time)."""
    before = sum(max(0, n) for n in shares.counts())
    clients.append(socket.create_connection(sock.getsockname()[:2], timeout=WAIT_S))
    _until(lambda: sum(max(0, n) for n in shares.counts()) == before + 1, "the connection to be accepted")


def test_connections_are_spread_evenly_and_go_where_they_were_closed() -> None:
    with _readers(2) as (sock, shares, readers), ExitStack() as stack:
        clients: list[socket.socket] = []
        stack.callback(lambda: [c.close() for c in clients])
        for _ in range(8):
            _connect(sock, shares, clients)
        assert shares.counts() == [4, 4]
        assert [len(r.held) for r in readers] == [4, 4]
        readers[0].close_some(3)
        assert shares.counts() == [1, 4]
        for _ in range(3):  # the reader that lost connections takes the next ones
            _connect(sock, shares, clients)
        assert shares.counts() == [4, 4]
        assert [len(r.held) for r in readers] == [4, 4]


def test_a_reader_that_is_not_serving_holds_no_one_back() -> None:
    """A dead or stopping reader's slot is -1: the others do not wait for it to catch up."""
    with _readers(3) as (sock, shares, readers), ExitStack() as stack:
        clients: list[socket.socket] = []
        stack.callback(lambda: [c.close() for c in clients])
        readers[2].acceptor.stop()
        assert shares.counts() == [0, 0, -1]
        for _ in range(6):
            _connect(sock, shares, clients)
        assert shares.counts() == [3, 3, -1]
        readers[1].acceptor.stop()  # as a reader that dies: the writer marks it -1 too
        shares.gone(1)
        for _ in range(2):
            _connect(sock, shares, clients)
        assert shares.counts() == [5, -1, -1]


def test_handed_over_connections_send_without_nagle_delays() -> None:
    """asyncio turns Nagle off on what it accepts itself; the acceptor does it for what it hands over
    (with Nagle, each response of a keep-alive client stalled about 40 ms on delayed ACKs)."""
    with _readers(1) as (sock, shares, readers), ExitStack() as stack:
        clients: list[socket.socket] = []
        stack.callback(lambda: [c.close() for c in clients])
        _connect(sock, shares, clients)
        conn, _ = readers[0].held[0]
        assert conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
        assert not conn.getblocking()


def test_an_acceptor_whose_socket_fails_says_so_and_holds_no_one_back() -> None:
    """A reader whose accepting thread fails steps aside (-1) and is told (its server then stops, as
    at SIGTERM, and the writer starts another reader in its place)."""
    told = threading.Event()
    with bind("127.0.0.1", 0) as sock:
        dup = sock.dup()  # the reader's own descriptor of the shared socket, lost under it
        shares = Shares(2, multiprocessing.get_context("spawn"))
        shares.serving(1)
        acceptor = Acceptor(dup, shares, 0, lambda conn, release: None, told.set)
        acceptor.start()
        _until(lambda: shares.counts()[0] == 0, "the reader to accept")
        dup.close()
        assert told.wait(WAIT_S)
        _until(lambda: shares.counts() == [-1, 0], "the failed reader to step aside")
        assert shares.may_accept(1)
        acceptor.stop()
