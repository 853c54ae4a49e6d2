"""Admission of a request to the HTTP API or the MCP endpoint, shared by both: the key is checked from
the headers before any body is read, requests in flight are capped per key (and MCP streams in total),
and a body is read only then, bounded in bytes while it streams and in time. A refusal is one
response in the HTTP API's error shape that closes the connection when the body was not read (the
connection layer lingers so the client still reads it)."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import anyio
from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Send
from starlette.types import Scope as AsgiScope

from graphctx import api
from graphctx.auth import AuthError, Principal, api_key_from_headers, parse_token
from graphctx.envelope import dumps
from graphctx.errors import BoundExceeded, GraphctxError, InputError, OverCapacity, RequestTimeout


def request_id_of(scope: AsgiScope) -> str | None:
    rid = scope.get("state", {}).get("request_id")
    return rid if isinstance(rid, str) else None


def error_body(exc: GraphctxError | dict[str, Any], request_id: str | None) -> dict[str, Any]:
    error = exc.to_dict() if isinstance(exc, GraphctxError) else exc
    return {"error": error, "request_id": request_id or uuid.uuid4().hex}


def error_bytes(exc: GraphctxError, request_id: str | None = None) -> bytes:
    return dumps(error_body(exc, request_id)).encode("utf-8")


def error_headers(exc: GraphctxError) -> dict[str, str]:
    """The headers an error's status calls for: the auth scheme of a 401, when to retry a 503."""
    if isinstance(exc, AuthError):
        return {"WWW-Authenticate": "Bearer"}
    if isinstance(exc, OverCapacity):
        return {"Retry-After": str(exc.retry_after_s)}
    return {}


def refusal(exc: GraphctxError, *, close: bool = True, headers: Mapping[str, str] | None = None) -> ASGIApp:
    """The error response for `exc`; `close` (the default) when the request's body was not read."""

    async def respond(scope: AsgiScope, receive: Receive, send: Send) -> None:
        extra = {**error_headers(exc), **(headers or {})}
        if close:
            extra["Connection"] = "close"
        body = error_bytes(exc, request_id_of(scope))
        response = Response(body, api.http_status(exc), headers=extra, media_type="application/json")
        await response(scope, receive, send)

    return respond


def presented_key(headers: Headers) -> str:
    """The request's one API key, well formed (AuthError otherwise); checked without a thread, so
    requests with no key or garbage never wait for the key store."""
    token = api_key_from_headers(headers)
    parse_token(token)
    return token


class Slots:
    """Requests in flight, capped per key and, optionally, in total. Thread-safe."""

    def __init__(self, what: str, setting: str, per_key: int, retry_after_s: int, *,
                 total: int | None = None, total_setting: str = "") -> None:  # fmt: skip
        self.what, self.setting, self.per_key, self.retry_after_s = what, setting, per_key, retry_after_s
        self.total, self.total_setting = total, total_setting
        self._lock = threading.Lock()
        self._by_key: dict[str, int] = {}
        self._count = 0

    def acquire(self, key: str) -> None:
        """Take one slot for `key`; OverCapacity when none is free. Pair with release()."""
        with self._lock:
            if self.total is not None and self._count >= self.total:
                raise OverCapacity(self.what, self.total_setting, self.total, self.retry_after_s)
            held = self._by_key.get(key, 0)
            if held >= self.per_key:
                raise OverCapacity(f"{self.what} of this key", self.setting, self.per_key, self.retry_after_s)
            self._by_key[key] = held + 1
            self._count += 1

    def release(self, key: str) -> None:
        with self._lock:
            self._count -= 1
            left = self._by_key[key] - 1
            if left:
                self._by_key[key] = left
            else:
                del self._by_key[key]

    def in_flight(self, key: str | None = None) -> int:
        with self._lock:
            return self._count if key is None else self._by_key.get(key, 0)


async def read_body(
    headers: Headers, receive: Receive, limit: int, timeout_s: float
) -> bytes | GraphctxError | None:
    """The whole body, counted while it streams and never buffered past `limit`; a declared
    Content-Length over the limit is refused before a byte is read. Returns the error to answer
    (413, 408, a bad Content-Length), or None when the client went away."""
    declared = headers.get("content-length")
    if declared is not None:
        if not declared.isdigit():
            return InputError("the Content-Length header is not a number", field="Content-Length")
        if int(declared) > limit:
            return BoundExceeded("request body", limit, int(declared))
    chunks: list[bytes] = []
    size = 0
    with anyio.move_on_after(timeout_s):
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunk: bytes = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                return BoundExceeded("request body", limit, size)
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)
    return RequestTimeout(
        f"the request body did not arrive within {timeout_s:g} s ({size} bytes received)",
        timeout_s=timeout_s,
    )


@dataclass(frozen=True)
class Admission:
    """What an authenticated request must pass before its app runs: a slot of its key, then its
    body, read whole (bounded in bytes and time) and handed to the app."""

    slots: Slots
    max_body: int
    body_timeout_s: float

    async def run(
        self, app: ASGIApp, principal: Principal | str, scope: AsgiScope, receive: Receive, send: Send
    ) -> None:
        """`principal`: the caller, or the name its requests are counted under (the local CLI's)."""
        key = principal if isinstance(principal, str) else principal.key_id or principal.name
        try:
            self.slots.acquire(key)
        except OverCapacity as exc:
            await refusal(exc)(scope, receive, send)
            return
        try:
            body = await read_body(Headers(scope=scope), receive, self.max_body, self.body_timeout_s)
            if body is None:
                return  # the client went away
            if isinstance(body, GraphctxError):
                await refusal(body)(scope, receive, send)
                return
            await app(scope, replay(body, receive), send)
        finally:
            self.slots.release(key)


def replay(body: bytes, receive: Receive) -> Receive:
    """Hand the read body to the app once, then pass through (to see a disconnect)."""
    delivered = False

    async def replayed() -> Message:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed
