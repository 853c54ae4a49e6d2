"""The served surface under the abuse a local attacker can send (issue 19), against the real server
configuration (`graphctx.transports.server`) on loopback: every limit closes what it must, answers
what it refuses with a clear status, and a legitimate client keeps being served throughout.

Timeouts here are short settings so the tests are quick; no test asserts on elapsed time. A socket
wait is bounded by raw.WAIT_S, so a connection the server fails to close fails the test, never hangs it.
"""

from __future__ import annotations

import json
import select
import socket
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from graphctx import registry
from graphctx.auth import Principal
from graphctx.kernel.ports import KeyStore
from graphctx.service import ContextService
from graphctx.settings import Settings
from graphctx.transports.connections import MAX_HEADER_BYTES
from graphctx.transports.server import build_app
from tests.conftest import TENANT_A, fixed_clock, make_settings
from tests.service.memory_data import load
from tests.transports import raw
from tests.transports.live import LiveServer

MIB = 1024 * 1024
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
MCP_ACCEPT = {"Accept": "application/json, text/event-stream"}
RECALL = json.dumps({"query": "checkout-api"}).encode()
LOOPS = ["asyncio"] if sys.platform == "win32" else ["asyncio", "uvloop"]  # uvloop: no Windows builds


@pytest.fixture(autouse=True, params=LOOPS)
def http_loop(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test here on each event loop `graphctx serve` may run on (Settings.http_loop): the
    limits live in the protocol, which sees asyncio's transports or uvloop's."""
    monkeypatch.setenv("GRAPHCTX_HTTP_LOOP", request.param)
    return str(request.param)


@dataclass
class Stores:
    service: ContextService
    keys: KeyStore
    data_dir: Any
    tokens: dict[str, str]


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stores]:
    data_dir = tmp_path_factory.mktemp("limits") / "data"
    settings = make_settings(data_dir)
    with ContextService.open(settings, clock=fixed_clock) as service:
        load(service, TENANT_A, "MARKER-A")
        keys: KeyStore = registry.factory("keys", settings.key_store_backend)(settings)
        tokens = {
            who: keys.create(Principal(f"agent-{who}", "tenant-a")).token for who in ("a", "b", "c", "d")
        }
        try:
            yield Stores(service, keys, data_dir, tokens)
        finally:
            keys.close()


@dataclass
class Served:
    port: int
    url: str
    tokens: dict[str, str]
    server: LiveServer

    def key(self, who: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[who]}"}

    def recall(self, who: str = "a") -> httpx.Response:
        """A legitimate request on a fresh connection."""
        with httpx.Client(base_url=self.url, headers=self.key(who), timeout=raw.WAIT_S) as client:
            return client.post("/v1/recall", json={"query": "checkout-api"})


@contextmanager
def served(stores: Stores, **limits: Any) -> Iterator[Served]:
    """graphctx's app (HTTP API + MCP) under `limits` (Settings fields), served as `serve` does."""
    settings = make_settings(stores.data_dir, **limits)
    with LiveServer(build_app(stores.service, stores.keys, settings), settings) as server:
        yield Served(server.port, server.url, stores.tokens, server)


def test_the_server_runs_on_the_event_loop_settings_name(stores: Stores, http_loop: str) -> None:
    with served(stores) as srv:
        assert srv.recall().status_code == 200
        listening = srv.server.server.servers[0]
        assert type(listening).__module__.split(".")[0] == http_loop


def assert_served(s: Served, who: str = "a") -> None:
    r = s.recall(who)
    assert r.status_code == 200, r.text
    assert r.json()["items"][0]["name"] == "checkout-api"


@contextmanager
def sockets() -> Iterator[list[socket.socket]]:
    opened: list[socket.socket] = []
    try:
        yield opened
    finally:
        for sock in opened:
            sock.close()


# -- headers and idle connections -----------------------------------------------------------------


def test_a_connection_that_sends_nothing_is_closed_after_the_header_timeout(stores):
    with served(stores, http_header_timeout_s=0.5) as s, sockets() as held:
        silent = raw.connect(s.port)
        held.append(silent)
        assert raw.closed_by_server(silent)
        assert_served(s)


def test_trickled_headers_do_not_reset_the_header_deadline(stores):
    """A byte every 50 ms keeps uvicorn's keep-alive timer from ever firing; the header deadline is
    absolute, so the connection is answered 408 and closed long before the trickle could finish."""
    request = raw.head("GET", "/healthz", {"X-Padding": "p" * 400})[:-4]  # never ends its headers
    with served(stores, http_header_timeout_s=1.0) as s, sockets() as held:
        sock = raw.connect(s.port)
        held.append(sock)
        sent, answer = raw.trickle(sock, request)
        assert sent < len(request), "the server waited for the whole trickle"
        assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
        error = json.loads(answer.partition(b"\r\n\r\n")[2])["error"]
        assert error["code"] == "request_timeout" and "headers" in error["message"]
        assert_served(s)


def test_a_body_nobody_reads_does_not_keep_its_connection(stores):
    """A path that answers without reading the body (here a 404) while the client trickles a long
    body: the server answers, discards the rest for a moment and closes, instead of reading it
    forever at the client's pace."""
    with served(stores) as s, sockets() as held:
        sock = raw.connect(s.port)
        held.append(sock)
        sock.sendall(raw.head("POST", "/nowhere", length=1000))
        sent, answer = raw.trickle(sock, b"x" * 1000)
        assert answer.startswith(b"HTTP/1.1 404 "), answer[:200]
        assert sent < 1000, "the server kept reading the unread body"
        assert_served(s)


def test_the_header_deadline_applies_again_after_each_response(stores):
    with served(stores, http_header_timeout_s=0.5, http_idle_timeout_s=60) as s, sockets() as held:
        sock = raw.connect(s.port)
        held.append(sock)
        sock.sendall(raw.head("GET", "/healthz"))
        assert raw.read_answer(sock).status == 200
        sock.sendall(b"GET /healthz HTTP/1.1\r\n")  # the next request starts and stalls
        assert raw.closed_by_server(sock)


def test_an_idle_keep_alive_connection_is_closed(stores):
    with served(stores, http_idle_timeout_s=1, http_header_timeout_s=60) as s, sockets() as held:
        sock = raw.connect(s.port)
        held.append(sock)
        sock.sendall(raw.head("GET", "/healthz"))
        assert raw.read_answer(sock).status == 200
        assert raw.closed_by_server(sock)


def test_headers_over_the_bound_are_answered_431_and_closed(stores):
    """A header that never ends, sent as fast as the socket takes it: refused once it passes
    MAX_HEADER_BYTES (not buffered until the header deadline), answered in the API's error shape."""
    endless = raw.head("GET", "/healthz")[:-4] + b"\r\nX-Padding: "
    with served(stores, http_header_timeout_s=60) as s, sockets() as held:
        sock = raw.connect(s.port)
        held.append(sock)
        sent, answer = _flood(sock, endless, 8 * MIB)
        assert sent < 8 * MIB, "the server buffered 8 MiB of one header"
        assert answer.startswith(b"HTTP/1.1 431 "), answer[:200]
        error = json.loads(answer.partition(b"\r\n\r\n")[2])["error"]
        assert error["code"] == "bound_exceeded"
        assert error["details"]["bound"] == "request headers"
        assert error["details"]["limit"] == MAX_HEADER_BYTES
        assert raw.closed_by_server(sock)
        assert_served(s)


def test_headers_under_the_bound_are_served_however_they_are_split(stores):
    padding = "p" * (MAX_HEADER_BYTES - 1024)
    request = raw.head("GET", "/healthz", {"X-Padding": padding})
    with served(stores) as s, sockets() as held:
        sock = raw.connect(s.port)
        held.append(sock)
        for start in range(0, len(request), 1000):  # many reads, each all header bytes
            sock.sendall(request[start : start + 1000])
            time.sleep(0.001)
        assert raw.read_answer(sock).status == 200


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03",
        b"GET / HTTP/9.9\r\n\r\n",
        b"GET /\x00 HTTP/1.1\r\n\r\n",
    ],
    ids=["tls-hello", "bad-version", "nul-in-target"],
)
def test_a_malformed_request_is_answered_400_in_the_error_shape(stores, request_bytes):
    with served(stores) as s, sockets() as held:
        sock = raw.connect(s.port)
        held.append(sock)
        sock.sendall(request_bytes)
        answer = raw.read_answer(sock)
        assert answer.status == 400, answer
        assert answer.json()["error"]["code"] == "invalid_input"
        assert raw.closed_by_server(sock)
        assert_served(s)


def test_pipelined_requests_are_answered_in_order_on_one_connection(stores):
    """Requests sent back to back without waiting for answers, one with a body, one a 404 whose body
    arrives whole, a stray CRLF between two: each answered in turn, and the connection stays open."""
    with served(stores) as s, sockets() as held:
        sock = raw.connect(s.port)
        held.append(sock)
        sock.sendall(
            raw.head("GET", "/healthz")
            + raw.head("POST", "/v1/recall", s.key("a"), length=len(RECALL))
            + RECALL
            + b"\r\n"  # some clients send one after a body
            + raw.head("POST", "/nowhere", length=3)
            + b"abc"
            + raw.head("GET", "/healthz")
        )
        answers = _answers(sock, 4)
        assert [a.status for a in answers] == [200, 200, 404, 200]
        assert answers[1].json()["items"][0]["name"] == "checkout-api"
        sock.sendall(raw.head("GET", "/healthz"))
        assert raw.read_answer(sock).status == 200


def _answers(sock: socket.socket, count: int) -> list[raw.Answer]:
    """`count` responses that may share a read (raw.read_answer drops what follows its one)."""
    data, answers = b"", []
    while len(answers) < count:
        top, sep, rest = data.partition(b"\r\n\r\n")
        length = int(next((v for k, v in _fields(top) if k == "content-length"), "-1")) if sep else -1
        if 0 <= length <= len(rest):
            answers.append(raw.Answer(int(top.split()[1]), dict(_fields(top)), rest[:length]))
            data = rest[length:]
            continue
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError(f"closed after {len(answers)} of {count} answers")
        data += chunk
    return answers


def _fields(top: bytes) -> list[tuple[str, str]]:
    lines = top.decode("latin-1").split("\r\n")[1:]
    return [(k.strip().lower(), v.strip()) for k, _, v in (line.partition(":") for line in lines)]


def _flood(sock: socket.socket, prefix: bytes, total: int) -> tuple[int, bytes]:
    """Send `prefix` then filler up to `total` bytes as fast as the server reads, collecting what it
    answers, until it closes or the bytes run out. Returns (bytes sent, bytes received)."""
    sent, answer = 0, b""
    chunk = b"p" * 65536
    sock.setblocking(False)
    try:
        deadline = time.monotonic() + raw.WAIT_S
        pending = prefix
        while sent < total and time.monotonic() < deadline:
            readable, writable, _ = select.select([sock], [sock], [], 1.0)
            if readable:
                try:
                    data = sock.recv(65536)
                except (ConnectionResetError, BrokenPipeError):
                    break
                if not data:
                    break
                answer += data
            if writable:
                try:
                    sent += sock.send(pending or chunk[: total - sent])
                    pending = b""
                except BlockingIOError:
                    continue
                except (ConnectionResetError, BrokenPipeError):
                    break
        sock.setblocking(True)
        sock.settimeout(raw.WAIT_S)
        if b"\r\n\r\n" not in answer:
            answer += _read_until_close(sock)
    finally:
        sock.settimeout(raw.WAIT_S)
    return sent, answer


def _read_until_close(sock: socket.socket) -> bytes:
    data = b""
    try:
        while chunk := sock.recv(65536):
            data += chunk
    except (ConnectionResetError, BrokenPipeError, TimeoutError):
        pass
    return data


# -- the connection cap ---------------------------------------------------------------------------


def test_a_flood_of_stalled_connections_never_locks_out_a_client(stores):
    """Four times the cap in connections that never finish their headers: each new connection closes
    the one idle the longest, so the server never holds more than the cap, and every legitimate
    request between the waves is answered."""
    cap, waves, per_wave = 16, 8, 8
    with served(stores, http_max_connections=cap, http_header_timeout_s=60) as s, sockets() as stalled:
        for _ in range(waves):
            for _ in range(per_wave):
                sock = raw.connect(s.port)
                sock.sendall(b"POST /v1/recall HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                stalled.append(sock)
            assert_served(s)
        still_open = sum(raw.is_open(sock) for sock in stalled)
        assert still_open <= cap, f"{still_open} stalled connections held with a cap of {cap}"
        assert still_open >= cap - 2, "eviction closed more than it needed to"
        # the newest survive, the oldest went first
        assert not any(raw.is_open(sock) for sock in stalled[: len(stalled) - cap])


def test_when_every_connection_is_busy_a_new_request_gets_503_with_retry_after(stores):
    cap = 3
    with served(stores, http_max_connections=cap, http_retry_after_s=7) as s, sockets() as busy:
        for who in ("a", "b", "c"):  # three requests in flight: each still sending its body
            sock = raw.connect(s.port)
            sock.sendall(raw.head("POST", "/v1/recall", s.key(who), length=len(RECALL)) + RECALL[:5])
            busy.append(sock)
        s.server.wait_in_flight(3)
        # nothing to evict: the next connection is answered 503 once its headers are in
        extra = raw.connect(s.port)
        busy.append(extra)
        extra.sendall(raw.head("GET", "/healthz"))
        answer = raw.read_answer(extra)
        assert answer.status == 503
        assert answer.headers["retry-after"] == "7" and answer.headers["connection"] == "close"
        error = answer.json()["error"]
        assert error["code"] == "over_capacity"
        assert error["details"] == {"limit": "http_max_connections", "max": cap, "retry_after_s": 7}
        assert raw.closed_by_server(extra)
        for sock in busy[:3]:  # the busy requests were never disturbed: they finish and are answered
            sock.sendall(RECALL[5:])
            assert raw.read_answer(sock).status == 200
        assert_served(s)


# -- authentication before the body ---------------------------------------------------------------

UNAUTHENTICATED = [
    ("POST", "/v1/recall", {}),
    ("POST", "/v1/remember", {"Authorization": "Bearer gctx_000000000000_" + "x" * 43}),
    ("POST", "/v1/recall", {"X-API-Key": "garbage"}),
    ("POST", "/mcp", {**MCP_ACCEPT}),
    ("POST", "/mcp", {**MCP_ACCEPT, "X-API-Key": "gctx_000000000000_" + "x" * 43}),
]


@pytest.mark.parametrize(("method", "path", "headers"), UNAUTHENTICATED)
def test_an_unauthenticated_request_is_refused_before_a_byte_of_its_body(stores, method, path, headers):
    with served(stores) as s, sockets() as held:
        sock = raw.connect(s.port)
        held.append(sock)
        sock.sendall(raw.head(method, path, headers, length=5 * MIB - 1))  # the body never comes
        answer = raw.read_answer(sock)
        assert answer.status == 401, answer.body
        assert answer.headers["www-authenticate"] == "Bearer"
        assert answer.headers["connection"] == "close"
        assert answer.json()["error"]["code"] == "unauthenticated"
        assert raw.closed_by_server(sock)
        assert_served(s)


def test_a_declared_oversized_body_is_refused_before_it_is_read(stores):
    with served(stores) as s, sockets() as held:
        for path in ("/v1/remember", "/mcp"):
            sock = raw.connect(s.port)
            held.append(sock)
            sock.sendall(raw.head("POST", path, {**s.key("a"), **MCP_ACCEPT}, length=5 * MIB + 1))
            answer = raw.read_answer(sock)
            assert answer.status == 413, (path, answer.body)
            assert answer.json()["error"]["details"]["bound"] == "request body"
            assert raw.closed_by_server(sock)


@pytest.mark.parametrize("path", ["/v1/remember", "/mcp"])
def test_a_client_uploading_a_refused_body_still_reads_the_answer(stores, path):
    """The client writes its whole body before it reads: the server answers at once, then discards
    what still arrives (never buffered) so the client reads a 401 instead of a reset."""
    big = b'{"entities": [], "pad": "' + b"x" * (5 * MIB - 64) + b'"}'
    with served(stores) as s, httpx.Client(base_url=s.url, timeout=raw.WAIT_S) as client:
        for headers in [{}, {"X-API-Key": "gctx_000000000000_" + "x" * 43}] * 5:  # a reset is a race
            r = client.post(path, content=big, headers={"Content-Type": "application/json", **MCP_ACCEPT,
                                                        **headers})  # fmt: skip
            assert r.status_code == 401 and r.json()["error"]["code"] == "unauthenticated"
        assert_served(s)


# -- caps on requests in flight -------------------------------------------------------------------


def _hold(s: Served, path: str, who: str, held: list[socket.socket], body: bytes = RECALL) -> socket.socket:
    """An authenticated request whose body is still on its way: in flight until release()."""
    sock = raw.connect(s.port)
    extra = MCP_ACCEPT if path == "/mcp" else {}
    sock.sendall(raw.head("POST", path, {**s.key(who), **extra}, length=len(body)) + body[:5])
    held.append(sock)
    return sock


def _release(sock: socket.socket, body: bytes = RECALL) -> raw.Answer:
    sock.sendall(body[5:])
    return raw.read_answer(sock)


def _split(held: list[socket.socket], refused: int) -> tuple[list[socket.socket], list[socket.socket]]:
    """Requests held at once: the ones refused are answered at once (their 503 is readable before
    their body is complete), the admitted ones wait for their bodies. Waits (bounded) until
    `refused` of them have an answer; returns (admitted, refused)."""
    answered: list[socket.socket] = []
    deadline = time.monotonic() + raw.WAIT_S
    while len(answered) < refused and time.monotonic() < deadline:
        waiting = [sock for sock in held if sock not in answered]
        readable, _, _ = select.select(waiting, [], [], max(0.0, deadline - time.monotonic()))
        answered += readable
    assert len(answered) == refused, f"{len(answered)} of {len(held)} requests refused, not {refused}"
    return [sock for sock in held if sock not in answered], answered


def _busy(sock: socket.socket, limit: str, maximum: int) -> None:
    answer = raw.read_answer(sock)
    assert answer.status == 503, answer.body
    assert answer.headers["retry-after"] == "1" and answer.headers["connection"] == "close"
    error = answer.json()["error"]
    assert error["code"] == "over_capacity"
    assert error["details"] == {"limit": limit, "max": maximum, "retry_after_s": 1}


def _request(s: Served, path: str, who: str, body: bytes = RECALL) -> raw.Answer:
    with sockets() as held:
        sock = raw.connect(s.port)
        held.append(sock)
        extra = MCP_ACCEPT if path == "/mcp" else {}
        sock.sendall(raw.head("POST", path, {**s.key(who), **extra}, length=len(body)) + body)
        return raw.read_answer(sock)


def test_one_key_at_its_cap_gets_503_while_other_keys_are_served(stores):
    with served(stores, http_max_requests_per_key=2) as s, sockets() as held:
        mine = [_hold(s, "/v1/recall", "a", held) for _ in range(4)]
        theirs = _hold(s, "/v1/recall", "b", held)
        admitted, refused = _split([*mine, theirs], refused=2)
        for sock in refused:
            assert sock in mine
            _busy(sock, "http_max_requests_per_key", 2)
        assert_served(s, "c")  # other keys are served while "a" is at its cap
        for sock in admitted:
            assert _release(sock).status == 200
        assert_served(s, "a")  # slots free as soon as requests end


MCP_CALL = json.dumps(INITIALIZE).encode()


def _initialized(answer: raw.Answer) -> None:
    assert answer.status == 200, answer.body
    assert answer.json()["result"]["serverInfo"]["name"] == "graphctx"


def test_mcp_streams_are_capped_per_key(stores):
    with served(stores, mcp_max_streams_per_key=2) as s, sockets() as held:
        mine = [_hold(s, "/mcp", "a", held, MCP_CALL) for _ in range(4)]
        theirs = _hold(s, "/mcp", "b", held, MCP_CALL)
        admitted, refused = _split([*mine, theirs], refused=2)
        for sock in refused:
            assert sock in mine
            _busy(sock, "mcp_max_streams_per_key", 2)
        assert_served(s, "a")  # the HTTP API has its own caps: "a" is still served there
        for sock in admitted:
            _initialized(_release(sock, MCP_CALL))
        _initialized(_request(s, "/mcp", "a", MCP_CALL))


def test_mcp_streams_are_capped_in_total(stores):
    with served(stores, mcp_max_streams=3) as s, sockets() as held:
        streams = [_hold(s, "/mcp", who, held, MCP_CALL) for who in ("a", "b", "c", "d", "a")]
        admitted, refused = _split(streams, refused=2)
        for sock in refused:
            _busy(sock, "mcp_max_streams", 3)
        for who in ("a", "d"):
            assert_served(s, who)
        for sock in admitted:
            _initialized(_release(sock, MCP_CALL))
        _initialized(_request(s, "/mcp", "d", MCP_CALL))


def test_get_on_mcp_opens_no_stream(stores):
    """A stateless endpoint has nothing to push: GET is 405 at once, as the spec allows, so no event
    stream is ever held open (before: each GET held a stream, a thread and descriptors forever)."""
    with served(stores) as s, httpx.Client(base_url=s.url, timeout=raw.WAIT_S) as client:
        for _ in range(50):
            r = client.get("/mcp", headers={**s.key("a"), "Accept": "text/event-stream"})
            assert r.status_code == 405 and r.headers["allow"] == "POST"
            assert r.json()["error"]["code"] == "method_not_allowed"
        assert client.get("/mcp", headers={"Accept": "text/event-stream"}).status_code == 401
        assert_served(s)


# -- bodies and slow readers ----------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/v1/recall", "/mcp"])
def test_a_body_that_does_not_arrive_in_time_is_answered_408(stores, path):
    with served(stores, http_body_timeout_s=0.5) as s, sockets() as held:
        sock = _hold(s, path, "a", held, MCP_CALL if path == "/mcp" else RECALL)
        answer = raw.read_answer(sock)
        assert answer.status == 408, answer.body
        assert answer.json()["error"]["code"] == "request_timeout"
        assert raw.closed_by_server(sock)
        assert _request(s, path, "a", MCP_CALL if path == "/mcp" else RECALL).status == 200


def test_a_client_that_stops_reading_is_cut_off(stores):
    """Pipelined requests for the OpenAPI document, never read: once the server's send buffer is full
    for the send timeout, the connection is dropped instead of holding its task forever."""
    requests = 400
    with served(stores, http_send_timeout_s=0.5) as s, sockets() as held:
        sock = raw.connect(s.port, rcvbuf=4096)
        held.append(sock)
        sock.sendall(raw.head("GET", "/openapi.json") * requests)
        assert raw.reset_by_server(sock)  # waits, never reading, until the server gives up
        assert_served(s)


def test_settings_reject_nonsense_limits():
    for field, value in [("http_max_connections", 0), ("http_header_timeout_s", 0), ("mcp_max_streams", -1)]:
        with pytest.raises(ValueError):
            Settings(**{field: value})
