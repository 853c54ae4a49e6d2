"""One pooled connection to a Gremlin Server: timeouts, bounded retries, typed errors.

A request is sent as bytecode (op `bytecode`). Failures of the transport (refused, reset, timed out)
drop the whole driver client -- a websocket that timed out may still deliver a stale answer -- and
open a fresh one on the next request. Only requests marked idempotent are tried again.
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

from graphctx.errors import BackendError, BackendUnavailable, GraphctxError

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


class ServerError(BackendError):
    """The server answered with an error status (the request reached it and was refused)."""


class GremlinConnection:
    """Thread-safe: the driver's pool serves concurrent requests; re-opening is serialised."""

    def __init__(self, config: ConnectionConfig, dialect: GremlinDialect) -> None:
        self.config = config
        self.dialect = dialect
        self._lock = threading.Lock()
        self._client: Client | None = None
        self._closed = False

    # ---- lifecycle --------------------------------------------------------------------------

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._drop_client()

    @property
    def closed(self) -> bool:
        return self._closed

    def _drop_client(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            # closing a broken client must not mask the error that made us drop it
            with contextlib.suppress(Exception):
                client.close()

    def _get_client(self) -> Client:
        with self._lock:
            if self._closed:
                raise BackendUnavailable(f"{self.dialect.name} graph store for {self.config.url} is closed")
            if self._client is None:
                self._client = Client(
                    self.config.url,
                    self.config.traversal_source,
                    pool_size=self.config.pool_size,
                    message_serializer=self.dialect.message_serializer(),
                    username=self.config.username,
                    password=self.config.password,
                    transport_factory=self._transport_factory(),
                )
            return self._client

    def _transport_factory(self) -> Any:
        if self.config.transport_factory is not None:
            return self.config.transport_factory
        cfg = self.config
        return lambda: TimedTransport(
            cfg.connect_timeout_s,
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
                if isinstance(typed, BackendUnavailable) and attempt < attempts:
                    time.sleep(delay)
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
            except Exception as exc:
                with self._lock:
                    self._drop_client()
                if attempt < attempts:
                    time.sleep(delay)
                    delay *= 2
                    continue
                raise self._unavailable(exc, what, attempt, idempotent) from exc
        raise AssertionError("unreachable")  # pragma: no cover

    def _once(self, bytecode: Bytecode) -> list[Any]:
        client = self._get_client()
        # the outer bound covers a read that the transport's own timeout did not end
        deadline = self.config.connect_timeout_s + self.config.read_timeout_s + 1.0
        try:
            result_set = client.submit_async(bytecode).result(timeout=deadline)
            results: list[Any] = result_set.all().result(timeout=deadline)
        except FutureTimeout as exc:
            raise TimeoutError(f"no answer within {deadline:.1f} s") from exc
        out: list[Any] = []
        for item in results:  # bytecode answers come as traversers, bulked
            if isinstance(item, Traverser):
                out.extend([item.object] * int(item.bulk))
            else:
                out.append(item)
        return out

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
