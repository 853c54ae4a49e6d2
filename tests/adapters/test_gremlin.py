"""The Gremlin adapter under attack: what goes over the wire, and servers that are down, silent or cut.

Tests marked `live` need the TinkerPop Gremlin Server at GRAPHCTX_TEST_GREMLIN_URL
(`source compose/native/env.sh`); without it they skip, saying so (with GRAPHCTX_REQUIRE_SERVERS=1
they fail instead). The down and silent-server tests need no server.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import socket
import threading
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from aiohttp import web
from gremlin_python.structure.io.graphsonV3d0 import GraphSONWriter

from graphctx import registry
from graphctx import templates as t
from graphctx.adapters.gremlin import ConnectionConfig, GremlinGraphStore, TimedTransport, keys
from graphctx.contracts import datasets
from graphctx.errors import BackendError, BackendUnavailable
from graphctx.model import PREDICATES, Entity, Fact
from graphctx.scope import Scope
from graphctx.settings import Settings

URL = os.environ.get("GRAPHCTX_TEST_GREMLIN_URL", "")


@pytest.fixture
def live_url() -> str:
    if URL:
        return URL
    if os.environ.get("GRAPHCTX_REQUIRE_SERVERS") == "1":
        pytest.fail("GRAPHCTX_REQUIRE_SERVERS=1 but GRAPHCTX_TEST_GREMLIN_URL is not set")
    pytest.skip("needs a Gremlin Server: GRAPHCTX_TEST_GREMLIN_URL is not set (source compose/native/env.sh)")


def _scope() -> Scope:
    return Scope(f"gt-{uuid.uuid4().hex[:10]}", "adv")


def _finishes(call: Callable[[], Any], bound_s: float = 90.0) -> Any:
    """Run `call` in a thread; a call still running after `bound_s` is a hang (the test fails).
    Returns the result, or the exception it raised."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["result"] = call()
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(bound_s)
    assert not thread.is_alive(), f"the call hung (still running after {bound_s} s)"
    return box.get("error", box.get("result"))


# ---- (a) every request, as sent ---------------------------------------------------------------


class _Recorder:
    def __init__(self) -> None:
        self.frames: list[bytes] = []

    def factory(self) -> TimedTransport:
        frames = self.frames

        class Recording(TimedTransport):
            def write(self, message: bytes) -> None:
                frames.append(bytes(message))
                super().write(message)

        return Recording(5.0, read_timeout=30.0, write_timeout=30.0, max_content_length=64 * 1024 * 1024)

    def requests(self) -> list[dict[str, Any]]:
        """GraphSON request messages: one length byte, the mime type, then JSON."""
        out = []
        for frame in self.frames:
            out.append(json.loads(frame[1 + frame[0] :].decode("utf-8")))
        return out


_STEP_CONSTANTS = {
    *(v for k, v in vars(keys).items() if k.isupper() and isinstance(v, str)),
    *PREDICATES,
    *("near", "out_total", "in_total", "out", "in", "entities", "facts", "by_type", "valid", "id", "hash"),
}
_SIDE_EFFECT_KEY = re.compile(r"^_b\d+$")


def _outside_bindings(value: Any, found: list[Any]) -> None:
    """Collect every scalar of a GraphSON bytecode argument that is not inside a g:Binding."""
    if isinstance(value, dict) and "@type" in value:
        kind, inner = value["@type"], value.get("@value")
        if kind == "g:Binding":
            return
        if kind == "g:Bytecode":
            for instruction in inner.get("step", []) + inner.get("source", []):
                for arg in instruction[1:]:
                    _outside_bindings(arg, found)
            return
        if kind in ("g:T", "g:Cardinality", "g:Scope", "g:Order", "g:Direction"):
            return  # enums of the Gremlin language
        if kind == "g:P":  # a predicate's name is language; its value is checked like any other
            assert inner["predicate"] in ("eq", "gt", "gte", "lt", "lte"), inner
            _outside_bindings(inner["value"], found)
            return
        _outside_bindings(inner, found)
        return
    if isinstance(value, dict):
        for v in value.values():
            _outside_bindings(v, found)
    elif isinstance(value, list):
        for v in value:
            _outside_bindings(v, found)
    else:
        found.append(value)


def _bound_strings(value: Any, found: list[str]) -> None:
    if isinstance(value, dict):
        if value.get("@type") == "g:Binding":
            found.append(json.dumps(value["@value"]["value"], ensure_ascii=False))
            return
        for v in value.values():
            _bound_strings(v, found)
    elif isinstance(value, list):
        for v in value:
            _bound_strings(v, found)


def _run_every_template(store: GremlinGraphStore, scope: Scope) -> None:
    payloads = list(datasets.INJECTION_PAYLOADS[:-1])  # the 1 KiB one is over the id bound
    entities = [
        Entity(id=p, name=p, aliases=(p, p[::-1]), summary=p, qualified_name=p, path=p, signature=p, source=p)
        for p in payloads
    ]
    facts = [
        Fact(
            id=f"{p}#f",
            subject_id=p,
            predicate="depends_on",
            object_id=payloads[(i + 1) % len(payloads)],
            source=p,
        )
        for i, p in enumerate(payloads)
    ] + [Fact(id=f"{p}#v", subject_id=p, predicate="note", value=p, source=p) for p in payloads]
    when = datetime(2024, 5, 1, tzinfo=UTC)
    store.run(t.ENTITY_UPSERT, scope, t.EntityUpsertParams(entities=tuple(entities)))
    store.run(t.FACT_UPSERT, scope, t.FactUpsertParams(facts=tuple(facts)))
    store.run(t.ENTITY_GET, scope, t.EntityGetParams(ids=tuple(payloads)))
    store.run(t.ENTITY_FIND_EXACT, scope, t.EntityFindExactParams(values=tuple(payloads)))
    for p in payloads:
        store.run(t.ENTITY_HASHES, scope, t.EntityHashesParams(after=p))
    store.run(t.FACTS_FROM_ROOTS, scope, t.FactsFromRootsParams(roots=tuple(payloads[:60]), as_of=when))
    store.run(t.NEIGHBOURHOOD, scope, t.NeighbourhoodParams(roots=tuple(payloads[:60]), depth=2, as_of=when))
    store.run(
        t.SHORTEST_PATH, scope, t.ShortestPathParams(source=payloads[0], target=payloads[3], as_of=when)
    )
    store.run(t.FACT_INVALIDATE, scope, t.FactInvalidateParams(ids=(facts[0].id,), valid_to=when))
    store.run(t.SCOPE_STATS, scope, t.NoParams())
    store.run(t.ENTITY_DELETE, scope, t.EntityDeleteParams(ids=(payloads[1],)))
    store.run(t.SCOPE_CLEAR, scope, t.NoParams())


def test_no_user_value_outside_a_binding(live_url: str) -> None:
    """Running every template with injection payloads as ids, names, aliases, values, sources,
    roots, path ends and paging keys: every scalar outside a binding is a constant of the adapter,
    and every payload and scope value travels inside bindings."""
    recorder = _Recorder()
    store = GremlinGraphStore(ConnectionConfig(url=live_url, transport_factory=recorder.factory))
    scope = _scope()
    try:
        _run_every_template(store, scope)
    finally:
        store.close()
    requests = recorder.requests()
    assert len(requests) == store.round_trips > 12
    user_values = {*datasets.INJECTION_PAYLOADS, scope.tenant_id, scope.namespace}
    for request in requests:
        assert request["op"] == "bytecode", request["op"]  # never a script
        outside: list[Any] = []
        _outside_bindings(request["args"]["gremlin"], outside)
        for value in outside:
            if isinstance(value, str):
                assert value in _STEP_CONSTANTS or _SIDE_EFFECT_KEY.match(value), f"unbound string {value!r}"
                assert value not in user_values
            else:
                assert value in (0, False, None), f"unbound value {value!r}"
    bound: list[str] = []
    for request in requests:
        _bound_strings(request["args"]["gremlin"], bound)
    joined = "\n".join(bound)
    for payload in datasets.INJECTION_PAYLOADS[:-1]:
        assert json.dumps(payload, ensure_ascii=False)[1:-1] in joined, payload


# ---- (b) down and silent servers --------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _config(port: int, **kw: Any) -> ConnectionConfig:
    base: dict[str, Any] = {"connect_timeout_s": 1.0, "read_timeout_s": 2.0, "retries": 1, "backoff_s": 0.05}
    return ConnectionConfig(url=f"ws://127.0.0.1:{port}/gremlin", **{**base, **kw})


def _get(store: GremlinGraphStore) -> Any:
    return store.run(t.ENTITY_GET, Scope("down"), t.EntityGetParams(ids=("a",)))


def test_down_server_is_backend_unavailable_naming_the_url() -> None:
    """Nothing listens on the port: a BackendUnavailable that names the URL, for reads and writes."""
    port = _free_port()
    store = GremlinGraphStore(_config(port))
    error = _finishes(lambda: _get(store))
    assert isinstance(error, BackendUnavailable), error
    assert f"127.0.0.1:{port}" in error.message
    write = _finishes(
        lambda: store.run(
            t.ENTITY_UPSERT, Scope("down"), t.EntityUpsertParams(entities=(Entity(id="a", name="a"),))
        )
    )
    assert isinstance(write, BackendUnavailable), write
    store.close()


@pytest.fixture
def silent_server() -> Iterator[int]:
    """Accepts TCP connections and never answers a byte."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
                held.append(conn)
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield int(listener.getsockname()[1])
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    listener.close()


def test_silent_server_times_out_with_backend_unavailable(silent_server: int) -> None:
    """A server that accepts and never answers: the connect timeout ends the wait with a typed error."""
    store = GremlinGraphStore(_config(silent_server))
    error = _finishes(lambda: _get(store))
    assert isinstance(error, BackendUnavailable), error
    assert "timeout" in error.message and f"127.0.0.1:{silent_server}" in error.message
    store.close()


@pytest.fixture
def mute_websocket() -> Iterator[int]:
    """Completes the websocket handshake, then reads requests and never answers one."""
    loop = asyncio.new_event_loop()
    started = threading.Event()
    port = _free_port()

    async def handler(request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        async for _ in ws:  # swallow every request
            pass
        return ws

    async def serve() -> web.AppRunner:
        app = web.Application()
        app.router.add_get("/gremlin", handler)
        runner = web.AppRunner(app)
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port).start()
        return runner

    def run() -> None:
        asyncio.set_event_loop(loop)
        runner = loop.run_until_complete(serve())
        started.set()
        loop.run_forever()
        loop.run_until_complete(runner.cleanup())

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    started.wait(10)
    yield port
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)


def test_mute_server_read_times_out_with_backend_unavailable(mute_websocket: int) -> None:
    """Connected, request sent, no answer ever: the read timeout ends it with a typed error, for a
    read (retried, then given up) and for a write (not retried, may or may not have been applied)."""
    store = GremlinGraphStore(_config(mute_websocket, read_timeout_s=0.5))
    error = _finishes(lambda: _get(store))
    assert isinstance(error, BackendUnavailable), error
    assert "timeout" in error.message and "2 attempt(s)" in error.message
    end = datetime(2024, 1, 1, tzinfo=UTC)
    write = _finishes(
        lambda: store.run(t.FACT_INVALIDATE, Scope("mute"), t.FactInvalidateParams(ids=("f",), valid_to=end))
    )
    assert isinstance(write, BackendUnavailable), write
    assert "1 attempt(s)" in write.message and "may or may not have been applied" in write.message
    store.close()


def test_closed_store_refuses_work() -> None:
    store = GremlinGraphStore(_config(_free_port()))
    store.close()
    store.close()
    with pytest.raises(BackendError):
        _get(store)


# ---- (c) a connection cut mid-run -------------------------------------------------------------


class _Proxy:
    """A TCP proxy to the live server that can be killed, restarted on the same port, and told to
    swallow the next answer (the request reaches the server, the answer never reaches us)."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.port = _free_port()
        self.swallow_next_answer = False
        self._sockets: list[socket.socket] = []
        self._listener: socket.socket | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen(16)
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def kill(self) -> None:
        with self._lock:
            listener, self._listener = self._listener, None
            sockets, self._sockets = self._sockets, []
        for s in [*sockets, *([listener] if listener else [])]:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
            except OSError:
                return
            server = socket.create_connection(self.upstream)
            with self._lock:
                self._sockets += [client, server]
            threading.Thread(target=self._pump, args=(client, server, False), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, True), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, answers: bool) -> None:
        handshake_done = False
        try:
            while data := src.recv(65536):
                if answers and handshake_done and self.swallow_next_answer:
                    # the request was delivered; the answer dies with this connection
                    self.swallow_next_answer = False
                    for s in (src, dst):
                        s.shutdown(socket.SHUT_RDWR)
                    return
                handshake_done = True
                dst.sendall(data)
        except OSError:
            return


@pytest.fixture
def proxy(live_url: str) -> Iterator[_Proxy]:
    host, port = re.match(r"wss?://([^:/]+):(\d+)", live_url).groups()  # type: ignore[union-attr]
    p = _Proxy((host, int(port)))
    p.start()
    yield p
    p.kill()


def _ids(store: GremlinGraphStore, scope: Scope) -> list[str]:
    page = store.run(t.ENTITY_HASHES, scope, t.EntityHashesParams(limit=5000))
    return [item.id for item in page.items]


def test_proxy_killed_and_restarted(proxy: _Proxy, live_url: str) -> None:
    """While the path to the server is gone, calls raise BackendUnavailable (no hang); every write
    reported as done is on the server; after the path returns, the same store works again."""
    store = GremlinGraphStore(_config(proxy.port, retries=2, backoff_s=0.05, pool_size=2))
    scope = _scope()
    done: list[str] = []
    for i in range(6):
        if i == 3:
            proxy.kill()
        outcome = _finishes(
            lambda i=i: store.run(
                t.ENTITY_UPSERT, scope, t.EntityUpsertParams(entities=(Entity(id=f"e{i}", name=f"e{i}"),))
            )
        )
        if isinstance(outcome, t.UpsertResult):
            done.append(f"e{i}")
        else:
            assert isinstance(outcome, BackendUnavailable), outcome
    assert done == ["e0", "e1", "e2"]
    proxy.start()
    assert _finishes(lambda: _ids(store, scope)) == done
    direct = GremlinGraphStore(ConnectionConfig(url=live_url))
    assert _ids(direct, scope) == done
    direct.close()
    store.close()


def test_answer_lost_mid_write(proxy: _Proxy, live_url: str) -> None:
    """The request reaches the server and the connection dies before the answer. An idempotent
    upsert is retried and reported once applied; a non-idempotent write (invalidate) is not retried
    and says it may or may not have been applied. Either way the server holds what it applied."""
    store = GremlinGraphStore(_config(proxy.port, retries=2, backoff_s=0.05, pool_size=1))
    scope = _scope()
    store.run(t.ENTITY_UPSERT, scope, t.EntityUpsertParams(entities=(Entity(id="a", name="a"),)))
    original = store.write

    def write(traversal: Any, b: Any, what: str, *, idempotent: bool) -> list[Any]:
        proxy.swallow_next_answer = True  # every write loses its first answer
        return original(traversal, b, what, idempotent=idempotent)

    store.write = write  # type: ignore[method-assign]
    fact = Fact(id="f1", subject_id="a", predicate="note", value="v")
    result = _finishes(lambda: store.run(t.FACT_UPSERT, scope, t.FactUpsertParams(facts=(fact,))))
    assert result == t.UpsertResult(created=1), result
    end = datetime(2024, 1, 1, tzinfo=UTC)
    invalidated = _finishes(
        lambda: store.run(t.FACT_INVALIDATE, scope, t.FactInvalidateParams(ids=("f1",), valid_to=end))
    )
    assert isinstance(invalidated, BackendUnavailable), invalidated
    assert "may or may not have been applied" in invalidated.message
    store.close()
    direct = GremlinGraphStore(ConnectionConfig(url=live_url))
    got = direct.run(t.FACTS_FROM_ROOTS, scope, t.FactsFromRootsParams(roots=("a",), include_invalid=True))
    direct.close()
    assert [(f.id, f.value, f.valid_to) for f in got.facts] == [("f1", "v", end)]


# ---- request size -------------------------------------------------------------------------------


class _Measuring(GremlinGraphStore):
    """Records the GraphSON size of every request instead of sending it; answers as an empty graph
    in which every fact endpoint exists."""

    def __init__(self, budget: int) -> None:
        super().__init__(ConnectionConfig(url="ws://unused.invalid/gremlin", max_request_bytes=budget))
        self.sizes: list[int] = []
        self.endpoints: list[str] = []

    def submit(self, traversal: Any, b: Any, what: str, *, idempotent: bool) -> list[Any]:
        bytecode = b.finish(traversal).bytecode
        self.sizes.append(len(GraphSONWriter().write_object(bytecode)))
        last = bytecode.step_instructions[-1][0]
        if last == "values":
            return list(self.endpoints)
        return [1] if last == "count" else []


@pytest.mark.parametrize("budget", [16 * 1024, 48 * 1024])
def test_batches_are_split_under_the_request_budget(budget: int) -> None:
    """Big batches (long summaries, many aliases, long ids) go out in several requests, each within
    the configured budget, and every item is sent."""
    store = _Measuring(budget)
    scope = Scope("t" * 100, "n" * 100, "g" * 100)
    entities = [
        Entity(id=f"{i:04d}" + "x" * 400, name=f"n{i}", aliases=tuple(f"alias {j} {i}" for j in range(20)),
               summary="s" * 3000, qualified_name="q" * 500)
        for i in range(120)
    ]  # fmt: skip
    facts = [
        Fact(
            subject_id=entities[i].id, predicate="relates_to", object_id=entities[i + 1].id, source="x" * 900
        )
        for i in range(119)
    ]
    store.endpoints = [e.id for e in entities]
    assert store.run(t.ENTITY_UPSERT, scope, t.EntityUpsertParams(entities=tuple(entities))).created == 120
    assert store.run(t.FACT_UPSERT, scope, t.FactUpsertParams(facts=tuple(facts))).created == 119
    store.run(t.ENTITY_GET, scope, t.EntityGetParams(ids=tuple(e.id for e in entities)))
    assert len(store.sizes) > 10
    assert max(store.sizes) <= budget, (max(store.sizes), budget)


def test_entry_point_reports_a_down_server_at_open(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """Opening the store through the registry with a down server fails right away, naming the URL."""
    port = _free_port()
    monkeypatch.setenv("GRAPHCTX_GREMLIN_URL", f"ws://127.0.0.1:{port}/gremlin")
    monkeypatch.setenv("GRAPHCTX_GREMLIN_RETRIES", "0")
    error = _finishes(lambda: registry.factory("graph", "gremlin")(Settings(data_dir=tmp_path)))
    assert isinstance(error, BackendUnavailable), error
    assert f"127.0.0.1:{port}" in error.message
