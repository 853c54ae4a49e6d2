"""The connection layer of `graphctx serve`: uvicorn's httptools protocol with the limits uvicorn lacks.

uvicorn has no deadline for a request's headers (its keep-alive timer is only armed after a response
and is reset by every byte received), its `limit_concurrency` answers 503 without Retry-After and counts
connections that never send a request against the ones that do, and when an app answers before reading
a body it closes at once, so a client still uploading is reset instead of reading the answer. Here:

* headers: a connection must deliver complete request headers within `header_timeout_s` of opening or
  of its previous response, however it trickles them, or it is answered 408 and closed; headers over
  MAX_HEADER_BYTES are answered 431 (llhttp has no bound of its own, and httptools buffers a header
  until it ends);
* malformed requests: answered 400 in the API's error shape (uvicorn answers in plain text);
* send stall: a connection whose client accepts no response bytes for `send_timeout_s` is aborted;
* connection cap: past `max_connections`, the connection idle the longest (still sending headers,
  between requests, or lingering) is closed to make room, so a flood of idle connections never locks
  out a client that sends requests; when every connection is busy, the new one is answered 503 with
  Retry-After;
* lingering close: when a response ends a connection while its client is still sending a body the
  app did not read (401 before the body, 413), the connection half-closes and discards what still
  arrives for at most `linger_s` and `linger_bytes` (never buffered), then closes, so the client reads
  the answer instead of a reset.

ASGI middleware cannot do any of this: it runs only once the headers are complete. httptools (llhttp,
in C) rather than h11: h11 parses and frames every request in Python, ~12 % of a reader's CPU under
load (docs/results.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import http
import socket
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, cast

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from graphctx.errors import BoundExceeded, GraphctxError, InputError, OverCapacity, RequestTimeout
from graphctx.transports.admission import error_bytes, refusal

LINGER_S = 2.0
"""How long a refused upload is read and discarded so the client can read the answer (nginx and
Apache linger too; Go waits 0.5 s): enough for a LAN client to finish a 5 MiB body."""

MAX_HEADER_BYTES = 16 * 1024
"""A request line and headers past this are refused (h11's default, which uvicorn served before;
nginx allows 8-32 KiB, Node 16 KiB). Checked per read, so one read's worth more may be buffered."""


@dataclass(frozen=True)
class ConnectionLimits:
    max_connections: int
    header_timeout_s: float
    send_timeout_s: float
    retry_after_s: int
    linger_bytes: int
    linger_s: float = LINGER_S


class _Idle:
    """One server's connections without a request in flight, in the order they would be closed to
    make room: first those discarding a refused upload, then those that have sent part of a request
    (the slow-header attack), then those that have sent nothing yet; the longest waiting first in
    each. Busy connections are dropped lazily when met, so every operation is O(1) amortised."""

    def __init__(self) -> None:
        self.tiers: tuple[dict[GuardedProtocol, None], ...] = ({}, {}, {})

    def put(self, conn: GuardedProtocol, tier: int) -> None:
        self.discard(conn)
        self.tiers[tier][conn] = None

    def discard(self, conn: GuardedProtocol) -> None:
        for tier in self.tiers:
            tier.pop(conn, None)

    def tier_of(self, conn: GuardedProtocol) -> int | None:
        return next((i for i, tier in enumerate(self.tiers) if conn in tier), None)

    def evict(self, newcomer: GuardedProtocol) -> bool:
        for tier in self.tiers:
            while tier:
                conn = next(iter(tier))
                del tier[conn]
                if conn is not newcomer and conn._evictable() and not conn._closing():
                    conn._close_now()
                    return True
        return False


_LINGERING, _STARTED, _SILENT = 0, 1, 2


class GuardedProtocol(HttpToolsProtocol):
    """uvicorn's HttpToolsProtocol under ConnectionLimits; `protocol_class` binds the limits and a
    registry of the server's idle connections. The parser's callbacks keep where the client is: in
    a request's headers (`_in_headers`), in its body (`_in_body`), or between requests."""

    limits: ClassVar[ConnectionLimits]
    idle: ClassVar[_Idle]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._real: asyncio.Transport | None = None
        self._header_timer: asyncio.TimerHandle | None = None
        self._send_timer: asyncio.TimerHandle | None = None
        self._linger_timer: asyncio.TimerHandle | None = None
        self._lingered = 0
        self._lingering = False
        self._in_headers = False
        self._in_body = False
        self._requests_begun = 0
        self._header_bytes = 0
        self.released: Callable[[], None] | None = None
        """Run once the connection is lost (graphctx.transports.balance counts open connections)."""

    # -- the connection's life ------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # a stream transport: asyncio's, or uvloop's TCPTransport (not an asyncio.Transport subclass)
        self._real = cast(asyncio.Transport, transport)
        super().connection_made(_LingeringTransport(self._real, self))  # type: ignore[arg-type]
        if len(self.connections) > self.limits.max_connections and not self.idle.evict(self):
            self.app = _busy(self.limits)  # every connection is busy: answer 503, then close
        self.idle.put(self, _SILENT)
        self._await_headers()

    def connection_lost(self, exc: Exception | None) -> None:
        for timer in (self._header_timer, self._send_timer, self._linger_timer):
            if timer is not None:
                timer.cancel()
        self._header_timer = self._send_timer = self._linger_timer = None
        self.idle.discard(self)
        try:
            super().connection_lost(exc)
        finally:
            if self.released is not None:
                self.released()

    def data_received(self, data: bytes) -> None:
        if self._lingering:  # the rest of a body nobody reads: count it and drop it
            self._lingered += len(data)
            if self._lingered > self.limits.linger_bytes:
                self._close_now()
            return
        continued, begun = self._in_headers, self._requests_begun
        super().data_received(data)
        if self._lingering:  # refused as malformed
            return
        if continued and self._in_headers and begun == self._requests_begun:
            self._header_bytes += len(data)  # all of this read was one request's headers
            if self._header_bytes > MAX_HEADER_BYTES:
                too_large = BoundExceeded("request headers", MAX_HEADER_BYTES, self._header_bytes)
                self._refuse(431, too_large)
                return
        self._await_headers()

    def send_400_response(self, msg: str) -> None:
        self._refuse(400, InputError("malformed HTTP request: the request line or headers cannot be parsed"))

    # -- where the client is (httptools' callbacks) ---------------------------------------------

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._in_headers = True
        self._requests_begun += 1
        self._header_bytes = 0

    def on_headers_complete(self) -> None:
        self._in_headers = False
        self._in_body = True
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        self._in_body = False
        super().on_message_complete()

    def on_response_complete(self) -> None:
        if not self._closing():
            self.idle.put(self, _SILENT)
        # the answered request's body is still arriving (a 404, a 405 answered without reading it;
        # had a later request been parsed, its body would have ended): the connection cannot serve
        # another request, never wait for it
        unread_body = self._in_body and not self.pipeline
        super().on_response_complete()
        if unread_body:
            self._close()
        self._await_headers()

    def shutdown(self) -> None:
        if self._lingering:
            self._close_now()
            return
        super().shutdown()

    # -- headers deadline -----------------------------------------------------------------------

    def _waiting(self) -> bool:
        """Between requests or in a request's headers, with no request in flight."""
        if self.cycle is not None and not self.cycle.response_complete:
            return False
        return not (self._in_body or self.pipeline or self._lingering or self._closing())

    def _await_headers(self) -> None:
        """Arm the headers deadline while the connection waits for a request, disarm it otherwise."""
        waiting = self._waiting()
        if waiting and self._in_headers and self.idle.tier_of(self) == _SILENT:
            self.idle.put(self, _STARTED)  # part of a request is in: close it before silent ones
        if waiting and self._header_timer is None:
            self._header_timer = self.loop.call_later(self.limits.header_timeout_s, self._headers_late)
        elif not waiting and self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_late(self) -> None:
        self._header_timer = None
        if not self._waiting():
            return
        if self._in_headers and self._real is not None:  # a request was under way: say why
            timeout = RequestTimeout(
                f"the request headers did not arrive within {self.limits.header_timeout_s:g} s",
                timeout_s=self.limits.header_timeout_s,
            )
            self._real.write(_raw_response(408, error_bytes(timeout), {}))
        self._close_now()

    # -- send stall -----------------------------------------------------------------------------

    def pause_writing(self) -> None:
        super().pause_writing()
        if self._send_timer is None:
            self._send_timer = self.loop.call_later(self.limits.send_timeout_s, self._send_stalled)

    def resume_writing(self) -> None:
        super().resume_writing()
        if self._send_timer is not None:
            self._send_timer.cancel()
            self._send_timer = None

    def _send_stalled(self) -> None:
        """Reset the connection: what the kernel still holds for this client is dropped too."""
        self._send_timer = None
        if self._real is None:
            return
        sock = self._real.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self._real.abort()

    # -- the cap --------------------------------------------------------------------------------

    def _evictable(self) -> bool:
        return self.cycle is None or self.cycle.response_complete or self._lingering

    # -- closing --------------------------------------------------------------------------------

    def _closing(self) -> bool:
        return self._real is None or self._real.is_closing()

    def _close_now(self) -> None:
        self._lingering = False
        if self._real is not None and not self._real.is_closing():
            self._real.close()

    def _close(self) -> None:
        """uvicorn closes the transport: linger if the client is still sending an unread body."""
        real = self._real
        if real is None or real.is_closing() or self._lingering:
            return
        if not self._in_body:
            real.close()
            return
        self._linger(real)

    def _refuse(self, status: int, error: GraphctxError) -> None:
        """Answer outside the parser, which cannot go on, and close, lingering so that a client still
        sending reads the answer."""
        real = self._real
        if real is None or real.is_closing() or self._lingering:
            return
        real.write(_raw_response(status, error_bytes(error), {}))
        self._linger(real)

    def _linger(self, real: asyncio.Transport) -> None:
        self._lingering = True
        self.idle.put(self, _LINGERING)
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
        if real.can_write_eof():
            real.write_eof()  # the answer is out: FIN after it, keep reading to discard
        self.flow.resume_reading()
        self._linger_timer = self.loop.call_later(self.limits.linger_s, self._close_now)


class _LingeringTransport:
    """The transport uvicorn's protocol and request cycles see: the real one, except that `close()`
    lingers (GuardedProtocol._close) and the connection counts as closing from then on."""

    def __init__(self, real: asyncio.Transport, protocol: GuardedProtocol) -> None:
        self._transport = real
        self._protocol = protocol
        self._closed = False

    def close(self) -> None:
        self._closed = True
        self._protocol._close()

    def is_closing(self) -> bool:
        return self._closed or self._protocol._lingering or self._transport.is_closing()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


def _raw_response(status: int, body: bytes, headers: dict[str, str]) -> bytes:
    """A response written outside uvicorn's request cycle (there is none for a request not parsed)."""
    reason = http.HTTPStatus(status).phrase
    lines = [f"HTTP/1.1 {status} {reason}", "Content-Type: application/json", "Connection: close"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    lines.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def _busy(limits: ConnectionLimits) -> Any:
    """The ASGI app that answers a request on a connection over the cap."""
    error: GraphctxError = OverCapacity(
        "open connections", "http_max_connections", limits.max_connections, limits.retry_after_s
    )

    async def busy(scope: Any, receive: Any, send: Any) -> None:
        await refusal(error)(scope, receive, send)

    return busy


def protocol_class(limits: ConnectionLimits) -> type[GuardedProtocol]:
    """The protocol class for uvicorn.Config(http=...), bound to `limits`."""
    return type("GraphctxHttpProtocol", (GuardedProtocol,), {"limits": limits, "idle": _Idle()})
