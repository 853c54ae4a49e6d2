"""One pooled connection to a Gremlin Server: timeouts, bounded retries, typed errors.

A request is sent as bytecode (op `bytecode`). Failures of the transport (refused, reset, timed out)
drop the whole driver client -- a websocket that timed out may still deliver a stale answer -- and
open a fresh one on the next request. Only requests marked idempotent are tried again.

Every wait is bounded by the operation's deadline (`graphctx.deadlines`): the wait for a pooled
connection (the driver's own pool waits forever), the answer, each retry and its pause. A request
that gets no answer in time is abandoned: its client is discarded and closed in the background
(closing waits for the driver's threads, which a silent server holds), so the next request opens a
fresh one and the process recovers by itself when the server does.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

import aiohttp
from gremlin_python.driver.aiohttp.transport import AiohttpTransport
from gremlin_python.driver.client import Client
from gremlin_python.driver.protocol import GremlinServerError
from gremlin_python.process.traversal import Bytecode, Traverser

from graphctx import deadlines
from graphctx.errors import BackendError, BackendTimeout, BackendUnavailable, GraphctxError

from .dialect import ConnectionConfig, GremlinDialect


class TimedTransport(AiohttpTransport):  # type: ignore[misc]
    """The driver's websocket transport with a bound on connect + handshake (it has none). Public so
    tests can wrap `write` to see every request on the wire."""

    def __init__(self, connect_timeout_s: float, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._connect_timeout_s = connect_timeout_s

    def connect(self, url: str, headers: Any = None) -> None:
        async def connect() -> None:
            self._client_session = aiohttp.ClientSession()
            self._websocket = await self._client_session.ws_connect(
                url, **self._aiohttp_kwargs, headers=headers
            )

        try:
            self._loop.run_until_complete(asyncio.wait_for(connect(), self._connect_timeout_s))
        except BaseException:
            self.close()  # release the session and the loop now, not in a finaliser
            raise

    def close(self) -> None:
        # the driver also closes from __del__, possibly while another thread runs this loop
        if self._loop.is_closed() or self._loop.is_running():
            return
        with contextlib.suppress(Exception):
            super().close()
        if not self._loop.is_closed():
            self._loop.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()


def _close_quietly(client: Client) -> None:
    # closing a broken client must not mask the error that made us drop it
    with contextlib.suppress(Exception):
        client.close()  # closes the idle connections, then waits for the driver's threads
    # a connection whose request was abandoned went back to the pool when its read ended: close it
    # now, from here, rather than from a finaliser at some later garbage collection
    pool = getattr(client, "_pool", None)
    while pool is not None and not pool.empty():
        with contextlib.suppress(Exception):
            pool.get_nowait().close()


class _Abandoned(TimeoutError):
    """The wait ended because the operation's deadline did, not the adapter's own timeout."""


def _timed_out(by_deadline: bool, message: str) -> TimeoutError:
    return _Abandoned(message) if by_deadline else TimeoutError(message)


class ServerError(BackendError):
    """The server answered with an error status (the request reached it and was refused)."""


class _Pooled:
    """A driver client and one permit per pooled connection: a request takes a permit within its
    budget before the driver's pool (which waits forever) hands it a connection."""

    def __init__(self, client: Client, size: int) -> None:
        self.client = client
        self.permits = threading.BoundedSemaphore(size)


class GremlinConnection:
    """Thread-safe: the driver's pool serves concurrent requests; re-opening is serialised."""

    def __init__(self, config: ConnectionConfig, dialect: GremlinDialect) -> None:
        self.config = config
        self.dialect = dialect
        self._lock = threading.Lock()
        self._pooled: _Pooled | None = None
        self._closed = False

    # ---- lifecycle --------------------------------------------------------------------------

    def close(self) -> None:
        with self._lock:
            self._closed = True
            pooled, self._pooled = self._pooled, None
        if pooled is not None:
            _close_quietly(pooled.client)

    @property
    def closed(self) -> bool:
        return self._closed

    def _abandon(self, pooled: _Pooled) -> None:
        """Discard `pooled` (if still current) and close it in the background: a request on it got
        no answer in time, and closing waits for the driver's threads the silent server holds."""
        with self._lock:
            if self._pooled is not pooled:
                return  # another request on it abandoned it first, and closes it
            self._pooled = None
        threading.Thread(
            target=_close_quietly, args=(pooled.client,), name="graphctx-gremlin-close", daemon=True
        ).start()

    def _get_client(self) -> _Pooled:
        with self._lock:
            if self._closed:
                raise BackendUnavailable(f"{self.dialect.name} graph store for {self.config.url} is closed")
            if self._pooled is None:
                client = Client(
                    self.config.url,
                    self.config.traversal_source,
                    pool_size=self.config.pool_size,
                    message_serializer=self.dialect.message_serializer(),
                    username=self.config.username,
                    password=self.config.password,
                    transport_factory=self._transport_factory(),
                )
                self._pooled = _Pooled(client, self.config.pool_size)
            return self._pooled

    def _transport_factory(self) -> Any:
        if self.config.transport_factory is not None:
            return self.config.transport_factory
        cfg, name = self.config, self.dialect.name
        return lambda: TimedTransport(  # made when a request connects: its deadline bounds the connect
            deadlines.budget(cfg.connect_timeout_s, f"connecting to the {name} server"),
            read_timeout=cfg.read_timeout_s,
            write_timeout=cfg.read_timeout_s,
            max_content_length=64 * 1024 * 1024,
        )

    # ---- requests ---------------------------------------------------------------------------

    def submit(self, bytecode: Bytecode, *, idempotent: bool, what: str) -> list[Any]:
        """Every result of one request. `what` names the template for error messages."""
        attempts = 1 + (max(0, self.config.retries) if idempotent else 0)
        delay = self.config.backoff_s
        for attempt in range(1, attempts + 1):
            try:
                return self._once(bytecode)
            except GremlinServerError as exc:
                typed = self._server_error(exc, what)
                # the server is up but its storage is not (a store node down, a leader election):
                # transient, so an idempotent request is tried again like a dropped connection
                if isinstance(typed, BackendUnavailable) and attempt < attempts and self._pause(delay):
                    delay *= 2
                    continue
                if isinstance(typed, BackendUnavailable) and not idempotent:
                    typed = BackendUnavailable(
                        f"{typed}; the write was not retried and may or may not have been applied",
                        url=self.config.url,
                    )
                raise typed from exc
            except GraphctxError:
                raise
            except _Abandoned as exc:  # the operation's deadline ended the wait
                raise self._deadline(exc, what, attempt, idempotent) from exc
            except Exception as exc:
                if attempt < attempts and self._pause(delay):
                    delay *= 2
                    continue
                raise self._unavailable(exc, what, attempt, idempotent) from exc
        raise AssertionError("unreachable")  # pragma: no cover

    @staticmethod
    def _pause(delay: float) -> bool:
        """Sleep before another attempt if the deadline leaves room for one after it."""
        deadline = deadlines.current()
        if deadline is not None and deadline.remaining() < delay + 2 * deadlines.MIN_CALL_S:
            return False
        time.sleep(delay)
        return True

    def _once(self, bytecode: Bytecode) -> list[Any]:
        # the outer bound covers a read that the transport's own timeout did not end
        cap = self.config.connect_timeout_s + self.config.read_timeout_s + 1.0
        timeout = deadlines.budget(cap, f"a request to the {self.dialect.name} server")
        ends = time.monotonic() + timeout
        pooled = self._get_client()
        if not pooled.permits.acquire(timeout=timeout):
            self._abandon(pooled)  # every connection is held by a request that gets no answer
            raise _timed_out(timeout < cap, f"no pooled connection free within {timeout:.1f} s")
        try:
            result_set = pooled.client.submit_async(bytecode).result(
                timeout=max(0.0, ends - time.monotonic())
            )
            results: list[Any] = result_set.all().result(timeout=max(0.0, ends - time.monotonic()))
        except FutureTimeout:
            self._abandon(pooled)
            raise _timed_out(timeout < cap, f"no answer within {timeout:.1f} s") from None
        except GremlinServerError:  # an answer: the connection is fine
            pooled.permits.release()
            raise
        except BaseException:
            self._abandon(pooled)
            raise
        pooled.permits.release()
        out: list[Any] = []
        for item in results:  # bytecode answers come as traversers, bulked
            if isinstance(item, Traverser):
                out.extend([item.object] * int(item.bulk))
            else:
                out.append(item)
        return out

    def _deadline(self, exc: BaseException, what: str, attempts: int, idempotent: bool) -> BackendTimeout:
        outcome = "" if idempotent else "; the write may or may not have been applied"
        return BackendTimeout(
            f"the operation's deadline passed during {what} on the {self.dialect.name} server at "
            f"{self.config.url} ({exc}, {attempts} attempt(s)){outcome}",
            stage=what,
        )

    def _server_error(self, exc: GremlinServerError, what: str) -> GraphctxError:
        typed = self.dialect.translate_error(exc)
        if typed is not None:
            return typed
        code = getattr(exc, "status_code", None)
        message = str(getattr(exc, "status_message", exc))[:500]
        if code == 598:  # the server's own evaluation timeout
            return BackendUnavailable(
                f"{self.dialect.name} server at {self.config.url} timed out on {what}: {message}",
                url=self.config.url,
            )
        return ServerError(
            f"{self.dialect.name} server at {self.config.url} refused {what} (status {code}): {message}",
            url=self.config.url,
            status=code,
        )

    def _unavailable(
        self, exc: BaseException, what: str, attempts: int, idempotent: bool
    ) -> BackendUnavailable:
        if isinstance(exc, TimeoutError | asyncio.TimeoutError):
            cause = f"no answer within the timeout ({self.config.read_timeout_s:g} s read, "
            cause += f"{self.config.connect_timeout_s:g} s connect)"
        else:
            cause = f"{type(exc).__name__}: {str(exc)[:300]}"
        outcome = "" if idempotent else "; the write was not retried and may or may not have been applied"
        return BackendUnavailable(
            f"{self.dialect.name} server at {self.config.url} is unavailable for {what} "
            f"after {attempts} attempt(s): {cause}{outcome}",
            url=self.config.url,
        )
