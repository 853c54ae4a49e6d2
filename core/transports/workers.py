"""`graphctx serve --workers N`: one writer process and N reader processes on one data directory.

The parent process is the writer: it opens the stores for writing (it holds the data directory's
writer lock and completes what a crash left), listens on the port and starts N reader processes that
accept on that socket, each only while it holds no more connections than the others
(graphctx.transports.balance). A reader opens every store read-only and serves every
operation; a write (`remember`, `forget`, `reconcile`) it forwards to the writer over a private Unix
socket, authenticated by a key made for this run, and answers with the writer's reply, errors
included, so every transport (HTTP and MCP) behaves as in one process.

Staleness is zero for acknowledged writes: the writer answers only after the graph and both indexes
hold the write, and a reader catches up with each store before every read (a new SQLite read
transaction, a reload of the Tantivy searcher, the vector manifest), so a read that starts after a
write was acknowledged sees it, whichever process serves it. A reader that dies is started again.
"""

from __future__ import annotations

import contextlib
import json
import logging
import multiprocessing
import os
import queue
import secrets
import shutil
import signal
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import date, datetime
from multiprocessing.connection import Client, Connection, Listener
from pathlib import Path
from typing import Any

from graphctx.datadir import exposure_warning
from graphctx.errors import BackendUnavailable, GraphctxError, InputError, from_dict
from graphctx.kernel.ports import KeyStore
from graphctx.kernel.stores import Stores, open_stores
from graphctx.model import Entity, Fact
from graphctx.scope import Scope
from graphctx.service import ContextService, Progress
from graphctx.settings import Settings
from graphctx.transports.balance import Shares
from graphctx.transports.local import LocalAccess, advertise, reachable, withdraw

log = logging.getLogger("graphctx.workers")

FORWARDED = ("remember", "forget", "reconcile")
"""The operations a reader forwards: every write of the served API."""
WRITE_TIMEOUT_S = 300.0
"""How long a reader waits for the writer's answer to a forwarded reconcile (it has no deadline)."""
WRITER_GRACE_S = 5.0
"""A forwarded remember or forget is bounded by the write deadline in the writer; the reader waits that
long plus this (the writer's answer, a typed error included, travels after its deadline ends)."""
POOL = 16
RESTART_BACKOFF_S = 1.0
STOP_TIMEOUT_S = 15.0


def _json_default(value: object) -> object:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Entity | Fact):
        return value.model_dump(mode="json")
    raise TypeError(f"cannot forward a {type(value).__name__}")


def _encode(data: object) -> bytes:
    return json.dumps(data, default=_json_default, ensure_ascii=False).encode("utf-8")


class WriterEndpoint:
    """The writer's side: a Unix socket in a private directory; one thread per reader connection, so
    concurrent writes reach the service together (which orders them)."""

    def __init__(self, service: ContextService, directory: Path) -> None:
        self.service = service
        self.authkey = secrets.token_bytes(32)
        self.address = str(directory / "writer.sock")
        self._listener = Listener(self.address, family="AF_UNIX", authkey=self.authkey)
        os.chmod(self.address, 0o600)
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._accept, name="graphctx-writer", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self._closed.set()
        with contextlib.suppress(OSError):
            self._listener.close()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                conn = self._listener.accept()
            except (OSError, EOFError, multiprocessing.AuthenticationError):
                if self._closed.is_set():
                    return
                continue  # a peer without the key, or one that went away during the handshake
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: Connection) -> None:
        with conn:
            while True:
                try:
                    raw = conn.recv_bytes()
                except (EOFError, OSError):
                    return
                reply = self.handle(raw)
                try:
                    conn.send_bytes(reply)
                except OSError:
                    return

    def handle(self, raw: bytes) -> bytes:
        try:
            request = json.loads(raw)
            method = request.get("method")
            if method not in FORWARDED:
                raise InputError(f"the writer does not take {str(method)[:40]!r}")
            scope = Scope(**request["scope"])
            result = getattr(self.service, method)(scope, **request.get("args", {}))
            return _encode({"ok": result})
        except GraphctxError as exc:
            return _encode({"error": exc.to_dict()})
        except Exception:
            log.exception("a forwarded write failed")
            return _encode({"error": {"code": "internal_error", "message": "the writer process failed"}})


class WriterLink:
    """A reader's side: pooled authenticated connections to the writer."""

    def __init__(self, address: str, authkey: bytes, timeout_s: float = WRITE_TIMEOUT_S) -> None:
        self.address = address
        self.authkey = authkey
        self.timeout_s = timeout_s
        self._pool: queue.LifoQueue[Connection] = queue.LifoQueue(maxsize=POOL)

    def call(self, method: str, scope: Scope, *, wait_s: float | None = None, **args: Any) -> dict[str, Any]:
        """The writer's answer to one forwarded write, waited for `wait_s` (else the link's timeout)."""
        request = _encode({"method": method, "scope": scope.as_dict(), "args": args})
        conn = self._borrow()
        try:
            conn.send_bytes(request)
            if not conn.poll(self.timeout_s if wait_s is None else wait_s):
                raise TimeoutError
            raw = conn.recv_bytes()
        except (OSError, EOFError, TimeoutError) as exc:
            conn.close()
            raise BackendUnavailable(
                f"the writer process did not answer the {method} ({type(exc).__name__}); it may or may "
                "not have been applied: read it back, or repeat it (writes are idempotent)",
            ) from None
        with contextlib.suppress(queue.Full):
            self._pool.put_nowait(conn)
        reply = json.loads(raw)
        if "error" in reply:
            raise from_dict(reply["error"])
        result: dict[str, Any] = reply["ok"]
        return result

    def _borrow(self) -> Connection:
        try:
            return self._pool.get_nowait()
        except queue.Empty:
            pass
        try:
            return Client(self.address, family="AF_UNIX", authkey=self.authkey)
        except (OSError, EOFError, multiprocessing.AuthenticationError) as exc:
            raise BackendUnavailable(f"the writer process is not reachable: {exc}") from None

    def close(self) -> None:
        while True:
            try:
                self._pool.get_nowait().close()
            except queue.Empty:
                return


def _plain(records: Iterable[Entity | Fact | Mapping[str, Any]]) -> list[Any]:
    return [r.model_dump(mode="json") if isinstance(r, Entity | Fact) else dict(r) for r in records]


class ForwardingService(ContextService):
    """A reader's service: reads on read-only stores, the served writes forwarded to the writer."""

    def __init__(self, stores: Stores, settings: Settings, link: WriterLink) -> None:
        super().__init__(stores, settings)
        self.link = link

    def remember(
        self,
        scope: Scope,
        entities: Iterable[Entity | Mapping[str, Any]] = (),
        facts: Iterable[Fact | Mapping[str, Any]] = (),
        progress: Progress | None = None,
    ) -> dict[str, Any]:
        return self.link.call(
            "remember", scope, wait_s=self._write_wait_s(), entities=_plain(entities), facts=_plain(facts)
        )

    def forget(
        self, scope: Scope, entity_ids: Sequence[str] = (), fact_ids: Sequence[str] = ()
    ) -> dict[str, Any]:
        return self.link.call(
            "forget", scope, wait_s=self._write_wait_s(), entity_ids=list(entity_ids), fact_ids=list(fact_ids)
        )

    def _write_wait_s(self) -> float:
        return min(WRITE_TIMEOUT_S, self.settings.write_deadline_s + WRITER_GRACE_S)

    def reconcile(self, scope: Scope, progress: Progress | None = None) -> dict[str, Any]:
        return self.link.call("reconcile", scope)

    def close(self) -> None:
        self.link.close()
        super().close()


# -- processes ----------------------------------------------------------------------------------


def bind(host: str, port: int) -> socket.socket:
    """A TCP socket listening on (host, port), which the readers inherit."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # Nagle is turned off on each connection the readers accept (balance.Acceptor): with it on,
    # every response stalled about 40 ms on delayed ACKs (one keep-alive client: ~21 req/s, not ~200)
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(2048)
    except BaseException:
        sock.close()
        raise
    sock.set_inheritable(True)
    return sock


def _reader(
    settings: Settings,
    sock: socket.socket,
    shares: Shares,
    index: int,
    address: str,
    authkey: bytes,
    log_level: str,
    writer: int,
    access: LocalAccess | None = None,
) -> None:
    """Reader `index`: read-only stores, writes forwarded, HTTP and MCP served on the connections
    it accepts from the shared socket (graphctx.transports.balance) until SIGTERM (uvicorn then
    finishes the requests in flight)."""
    from graphctx import registry
    from graphctx.transports import server
    from graphctx.transports.balance import BalancedServer

    _end_with_the_writer(writer)
    service = ForwardingService(open_stores(settings, mode="read"), settings, WriterLink(address, authkey))
    keys: KeyStore = registry.factory("keys", settings.key_store_backend)(settings)
    try:
        # the same app and connection limits as a single-process serve; the socket is the parent's
        app = server.build_app(service, keys, settings, local_access=access)
        config = server.uvicorn_config(app, settings, log_level=log_level)
        BalancedServer(config, sock, shares, index).run()
    finally:
        keys.close()
        service.close()


PARENT_CHECK_S = 1.0


def _end_with_the_writer(writer: int) -> None:
    """A reader whose writer died (kill -9 leaves it no time to stop its readers) stops as at SIGTERM
    instead of answering every write with 503 and holding the port for ever. The writer's pid comes
    from the writer: one that died while this reader was still starting has already left it to init,
    and os.getppid() here would name init."""

    def watch() -> None:
        while os.getppid() == writer:
            time.sleep(PARENT_CHECK_S)
        log.warning("the writer process %d is gone: this reader stops", writer)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="graphctx-writer-watch", daemon=True).start()


READY_POLL_S = 0.2


def _advertise_when_served(settings: Settings, port: int, access: LocalAccess, stop: threading.Event) -> None:
    """Advertise this serve to the CLI once a reader answers on the port (until then a CLI read
    would wait in the listen queue for a reader still starting)."""
    import http.client

    host = reachable(settings.http_host)
    while not stop.wait(READY_POLL_S):
        conn = http.client.HTTPConnection(host, port, timeout=2.0)
        try:
            conn.request("GET", "/healthz")
            if conn.getresponse().status in (200, 503):  # answering (503: wedged, yet serving)
                break
        except (OSError, http.client.HTTPException):
            continue
        finally:
            conn.close()
    if not stop.is_set():
        advertise(settings, settings.http_host, port, access)


def serve_workers(
    settings: Settings,
    workers: int,
    *,
    log_level: str = "info",
    announce: Callable[[str], None] = print,
) -> None:
    """The writer: open for writing, start the endpoint and `workers` readers, keep them running
    until SIGINT / SIGTERM, then stop the readers (each finishes its requests) and close."""
    stop = threading.Event()
    previous = {sig: signal.signal(sig, lambda *_: stop.set()) for sig in (signal.SIGINT, signal.SIGTERM)}
    private = Path(tempfile.mkdtemp(prefix="graphctx-writer-"))
    try:
        # the readers read the stores read-only: they see a write once it is on disk, so this writer
        # acknowledges after the disk commits (group commit still shares one among concurrent writes);
        # flushing after each forwarded write instead measured slower (docs/results.md, soak)
        with ContextService.open(settings.model_copy(update={"index_flush_ms": 0.0})) as service:
            warning = exposure_warning(settings.data_dir)
            if warning:
                announce(warning)
            endpoint = WriterEndpoint(service, private)
            endpoint.start()
            sock = bind(settings.http_host, settings.http_port)
            port = sock.getsockname()[1]
            spawn = multiprocessing.get_context("spawn")
            shares = Shares(workers, spawn)
            access = LocalAccess.new(settings.data_dir, os.environ)

            def start(index: int) -> multiprocessing.process.BaseProcess:
                shares.gone(index)  # a dead reader's connections died with it
                proc = spawn.Process(
                    target=_reader,
                    args=(
                        settings,
                        sock,
                        shares,
                        index,
                        endpoint.address,
                        endpoint.authkey,
                        log_level,
                        os.getpid(),
                        access,
                    ),
                    name="graphctx-reader",
                    daemon=False,
                )
                proc.start()
                return proc

            readers = [start(i) for i in range(workers)]
            advertiser = threading.Thread(
                target=_advertise_when_served, args=(settings, port, access, stop), daemon=True
            )
            advertiser.start()
            announce(
                f"graphctx: serving HTTP on http://{settings.http_host}:{port}/v1 and MCP on /mcp with "
                f"{workers} reader processes and this writer (pid {os.getpid()}; data: {settings.data_dir})"
            )
            try:
                while not stop.wait(0.5):
                    for i, proc in enumerate(readers):
                        if not proc.is_alive() and not stop.is_set():
                            log.warning("reader %s exited with %s; starting another", proc.pid, proc.exitcode)
                            shares.gone(i)  # at once: an idle dead reader must not hold the others back
                            time.sleep(RESTART_BACKOFF_S)
                            readers[i] = start(i)
            finally:
                stop.set()
                advertiser.join(READY_POLL_S * 2)
                withdraw(settings.data_dir, access)
                for proc in readers:
                    if proc.is_alive():
                        proc.terminate()  # uvicorn finishes the requests in flight, then exits
                deadline = time.monotonic() + STOP_TIMEOUT_S
                for proc in readers:
                    proc.join(max(0.0, deadline - time.monotonic()))
                    if proc.is_alive():
                        proc.kill()
                        proc.join()
                sock.close()
                endpoint.close()
    finally:
        shutil.rmtree(private, ignore_errors=True)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
