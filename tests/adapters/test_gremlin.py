"""The Gremlin adapter under attack: what goes over the wire, and servers that are down, silent or cut.

Tests marked `live` need the TinkerPop Gremlin Server at GRAPHCTX_TEST_GREMLIN_URL
(`source compose/native/env.sh`); without it they skip, saying so (with GRAPHCTX_REQUIRE_SERVERS=1
they fail instead). The down and silent-server tests need no server.
"""

from __future__ import annotations

import asyncio
import os
import re
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from typing import Any

import pytest
from aiohttp import web
from gremlin_python.structure.io.graphsonV3d0 import GraphSONWriter

from graphctx import deadlines, registry
from graphctx.adapters.gremlin import ConnectionConfig, GremlinGraphStore
from graphctx.errors import BackendError, BackendTimeout, BackendUnavailable, DeadlineExceeded
from graphctx.kernel import breaker
from graphctx.kernel import templates as t
from graphctx.model import Entity, Fact
from graphctx.scope import Scope
from graphctx.settings import Settings
from tests.adapters.gremlin_requests import (
    SIDE_EFFECT_KEY,
    STEP_CONSTANTS,
    Proxy,
    Recorder,
    assert_user_values_bound,
    finishes,
    free_port,
    require_server,
    run_every_template,
    silent_server,  # noqa: F401 - a fixture, used by name
)

URL = os.environ.get("GRAPHCTX_TEST_GREMLIN_URL", "")


@pytest.fixture
def live_url() -> str:
    return require_server(URL, "GRAPHCTX_TEST_GREMLIN_URL", "a Gremlin Server")


def _scope() -> Scope:
    return Scope(f"gt-{uuid.uuid4().hex[:10]}", "adv")


# ---- (a) every request, as sent ---------------------------------------------------------------


def test_no_user_value_outside_a_binding(live_url: str) -> None:
    """Running every template with injection payloads as ids, names, aliases, values, sources,
    roots, path ends and paging keys: every scalar outside a binding is a constant of the adapter,
    and every payload and scope value travels inside bindings."""
    recorder = Recorder()
    store = GremlinGraphStore(ConnectionConfig(url=live_url, transport_factory=recorder.factory))
    scope = _scope()
    try:
        run_every_template(store, scope)
    finally:
        store.close()
    requests = recorder.requests()
    assert len(requests) == store.round_trips > 12
    assert_user_values_bound(
        requests, scope, constant=lambda v: v in STEP_CONSTANTS or bool(SIDE_EFFECT_KEY.match(v))
    )


# ---- (b) down and silent servers --------------------------------------------------------------


def _config(port: int, **kw: Any) -> ConnectionConfig:
    base: dict[str, Any] = {"connect_timeout_s": 1.0, "read_timeout_s": 2.0, "retries": 1, "backoff_s": 0.05}
    return ConnectionConfig(url=f"ws://127.0.0.1:{port}/gremlin", **{**base, **kw})


def _get(store: GremlinGraphStore) -> Any:
    return store.run(t.ENTITY_GET, Scope("down"), t.EntityGetParams(ids=("a",)))


def test_down_server_is_backend_unavailable_naming_the_url() -> None:
    """Nothing listens on the port: a BackendUnavailable that names the URL, for reads and writes."""
    port = free_port()
    store = GremlinGraphStore(_config(port))
    error = finishes(lambda: _get(store))
    assert isinstance(error, BackendUnavailable), error
    assert f"127.0.0.1:{port}" in error.message
    write = finishes(
        lambda: store.run(
            t.ENTITY_UPSERT, Scope("down"), t.EntityUpsertParams(entities=(Entity(id="a", name="a"),))
        )
    )
    assert isinstance(write, BackendUnavailable), write
    store.close()


def test_silent_server_times_out_with_backend_unavailable(silent_server: int) -> None:  # noqa: F811
    """A server that accepts and never answers: the connect timeout ends the wait with a typed error."""
    store = GremlinGraphStore(_config(silent_server))
    error = finishes(lambda: _get(store))
    assert isinstance(error, BackendUnavailable), error
    assert "timeout" in error.message and f"127.0.0.1:{silent_server}" in error.message
    store.close()


@pytest.fixture
def mute_websocket() -> Iterator[int]:
    """Completes the websocket handshake, then reads requests and never answers one."""
    loop = asyncio.new_event_loop()
    started = threading.Event()
    port = free_port()

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
    read (retried, then given up) and for a write, which reads each fact's own end first: it fails
    at that read, so it says nothing was sent to apply (a write request cut mid-run is not retried
    and says it may or may not have been applied: test_answer_lost_mid_write)."""
    store = GremlinGraphStore(_config(mute_websocket, read_timeout_s=0.5))
    error = finishes(lambda: _get(store))
    assert isinstance(error, BackendUnavailable), error
    assert "timeout" in error.message and "2 attempt(s)" in error.message
    end = datetime(2024, 1, 1, tzinfo=UTC)
    write = finishes(
        lambda: store.run(t.FACT_INVALIDATE, Scope("mute"), t.FactInvalidateParams(ids=("f",), valid_to=end))
    )
    assert isinstance(write, BackendUnavailable), write
    assert "timeout" in write.message and "2 attempt(s)" in write.message
    assert "may or may not have been applied" not in write.message
    store.close()


def test_closed_store_refuses_work() -> None:
    store = GremlinGraphStore(_config(free_port()))
    store.close()
    store.close()
    with pytest.raises(BackendError):
        _get(store)


# ---- (c) a connection cut mid-run -------------------------------------------------------------


@pytest.fixture
def proxy(live_url: str) -> Iterator[Proxy]:
    host, port = re.match(r"wss?://([^:/]+):(\d+)", live_url).groups()  # type: ignore[union-attr]
    p = Proxy((host, int(port)))
    p.start()
    yield p
    p.kill()


def _ids(store: GremlinGraphStore, scope: Scope) -> list[str]:
    page = store.run(t.ENTITY_HASHES, scope, t.EntityHashesParams(limit=5000))
    return [item.id for item in page.items]


def test_proxy_killed_and_restarted(proxy: Proxy, live_url: str) -> None:
    """While the path to the server is gone, calls raise BackendUnavailable (no hang); every write
    reported as done is on the server; after the path returns, the same store works again."""
    store = GremlinGraphStore(_config(proxy.port, retries=2, backoff_s=0.05, pool_size=2))
    scope = _scope()
    done: list[str] = []
    for i in range(6):
        if i == 3:
            proxy.kill()
        outcome = finishes(
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
    assert finishes(lambda: _ids(store, scope)) == done
    direct = GremlinGraphStore(ConnectionConfig(url=live_url))
    assert _ids(direct, scope) == done
    direct.close()
    store.close()


def test_answer_lost_mid_write(proxy: Proxy, live_url: str) -> None:
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
    result = finishes(lambda: store.run(t.FACT_UPSERT, scope, t.FactUpsertParams(facts=(fact,))))
    assert result == t.UpsertResult(created=1), result
    end = datetime(2024, 1, 1, tzinfo=UTC)
    invalidated = finishes(
        lambda: store.run(t.FACT_INVALIDATE, scope, t.FactInvalidateParams(ids=("f1",), valid_to=end))
    )
    assert isinstance(invalidated, BackendUnavailable), invalidated
    assert "may or may not have been applied" in invalidated.message
    store.close()
    direct = GremlinGraphStore(ConnectionConfig(url=live_url))
    got = direct.run(t.FACTS_FROM_ROOTS, scope, t.FactsFromRootsParams(roots=("a",), include_invalid=True))
    direct.close()
    assert [(f.id, f.value, f.valid_to) for f in got.facts] == [("f1", "v", end)]


# ---- (d) silence against the operation's deadline ---------------------------------------------

DEADLINE_S = 1.0
SLACK_S = 2.0
"""Thread start-up and scheduling on a loaded 2-core machine. The adapter's own timeouts in these
tests are several times longer: a call that ends within DEADLINE_S + SLACK_S was ended by the
deadline, not by them."""


def _timed(call: Any) -> tuple[Any, float]:
    started = time.monotonic()
    outcome = finishes(call, 120)
    return outcome, time.monotonic() - started


def _within(call: Any, seconds: float = DEADLINE_S) -> Any:
    def run() -> Any:
        with deadlines.within(seconds):
            return call()

    return run


def test_a_silent_server_ends_the_call_at_the_operation_deadline(silent_server: int) -> None:  # noqa: F811
    """Accepts and never answers; the adapter would wait 10 s per connect and retry twice: the
    operation's deadline ends it with a typed error naming the backend and the template."""
    store = GremlinGraphStore(_config(silent_server, connect_timeout_s=10.0, read_timeout_s=10.0, retries=2))
    outcome, elapsed = _timed(_within(lambda: _get(store)))
    assert isinstance(outcome, DeadlineExceeded), outcome
    assert elapsed < DEADLINE_S + SLACK_S, elapsed
    assert outcome.details["store"] == "graph" and outcome.details["backend"] == "gremlin"
    assert "deadline" in outcome.message and "gremlin" in outcome.message, outcome.message
    store.close()


def test_a_mute_server_ends_reads_and_writes_at_the_deadline(mute_websocket: int) -> None:
    """Connected, request sent, never answered: reads and writes end at the deadline, not after the
    adapter's 10 s read timeout times three attempts."""
    store = GremlinGraphStore(_config(mute_websocket, read_timeout_s=10.0, retries=2))
    read, elapsed = _timed(_within(lambda: _get(store)))
    assert isinstance(read, DeadlineExceeded) and elapsed < DEADLINE_S + SLACK_S, (read, elapsed)
    end = datetime(2024, 1, 1, tzinfo=UTC)
    write, elapsed = _timed(
        _within(
            lambda: store.run(
                t.FACT_INVALIDATE, Scope("mute"), t.FactInvalidateParams(ids=("f",), valid_to=end)
            )
        )
    )
    assert isinstance(write, DeadlineExceeded) and elapsed < DEADLINE_S + SLACK_S, (write, elapsed)
    store.close()


def test_a_frozen_server_costs_each_call_its_deadline_and_the_store_recovers_by_itself(
    proxy: Proxy, live_url: str
) -> None:
    """The server goes silent (the proxy freezes: connections accepted, nothing answered) for longer
    than every timeout of the adapter's pool, with more calls in flight than the pool has
    connections. Every call ends with a typed error within its deadline; the hung connections are
    abandoned; when the server answers again the same store answers within seconds, no restart."""
    config = _config(
        proxy.port, connect_timeout_s=2.0, read_timeout_s=3.0, retries=2, backoff_s=0.05, pool_size=2
    )
    store = GremlinGraphStore(config)
    scope = _scope()
    store.run(t.ENTITY_UPSERT, scope, t.EntityUpsertParams(entities=(Entity(id="a", name="a"),)))
    assert _ids(store, scope) == ["a"]
    end = datetime(2024, 1, 1, tzinfo=UTC)

    def call(i: int) -> tuple[Any, float]:
        if i % 3 == 2:
            return _timed(
                _within(
                    lambda: store.run(
                        t.FACT_INVALIDATE, scope, t.FactInvalidateParams(ids=("f",), valid_to=end)
                    )
                )
            )
        return _timed(_within(lambda: _ids(store, scope)))

    proxy.frozen = True
    frozen_at = time.monotonic()
    outcomes: list[tuple[Any, float]] = []
    with ThreadPoolExecutor(6) as pool:
        while time.monotonic() - frozen_at < config.connect_timeout_s + config.read_timeout_s + 2.0:
            outcomes += pool.map(call, range(6))  # three times the pool's connections in flight
    proxy.frozen = False
    assert len(outcomes) >= 12
    for outcome, elapsed in outcomes:
        assert isinstance(outcome, DeadlineExceeded | BackendUnavailable), outcome
        assert elapsed < DEADLINE_S + SLACK_S, (outcome, elapsed)

    thawed = time.monotonic()
    answer: Any = None
    while time.monotonic() - thawed < 15.0 and answer != ["a"]:
        answer = finishes(_within(lambda: _ids(store, scope), 5.0), 30)
    assert answer == ["a"], answer
    assert time.monotonic() - thawed < 15.0
    store.close()


def test_the_breaker_stops_asking_a_frozen_server_and_probes_it_back(proxy: Proxy) -> None:
    """After THRESHOLD calls in a row abandoned at their deadline, the next calls fail at once with
    backend_unavailable and a retry hint (they no longer wait on the silent server); once the server
    answers again, the probe after the cooldown closes the breaker and calls go through."""
    store = GremlinGraphStore(_config(proxy.port, read_timeout_s=10.0, retries=2, backoff_s=0.05))
    scope = _scope()
    store.run(t.ENTITY_UPSERT, scope, t.EntityUpsertParams(entities=(Entity(id="a", name="a"),)))
    proxy.frozen = True
    for _ in range(breaker.THRESHOLD):
        outcome, elapsed = _timed(_within(lambda: _ids(store, scope)))
        assert isinstance(outcome, BackendTimeout), outcome
    refused, elapsed = _timed(_within(lambda: _ids(store, scope)))
    assert isinstance(refused, BackendUnavailable), refused
    assert elapsed < 0.5 * DEADLINE_S, elapsed  # refused without waiting on the server
    assert refused.details["retry_after_s"] >= 1 and refused.details["backend"] == "gremlin"
    proxy.frozen = False
    time.sleep(breaker.COOLDOWN_S)
    assert finishes(_within(lambda: _ids(store, scope), 5.0)) == ["a"]
    assert finishes(lambda: _ids(store, scope)) == ["a"]
    store.close()


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


def test_entry_point_reports_a_silent_server_at_open_within_the_deadline(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Any,
    silent_server: int,  # noqa: F811
) -> None:
    """The open pings the server: a silent one fails it at the operation deadline (1 s here), not
    after the adapter's 5 s connect timeout times three attempts."""
    monkeypatch.setenv("GRAPHCTX_GREMLIN_URL", f"ws://127.0.0.1:{silent_server}/gremlin")
    error, elapsed = _timed(
        lambda: registry.factory("graph", "gremlin")(Settings(data_dir=tmp_path, deadline_s=1.0))
    )
    assert isinstance(error, DeadlineExceeded), error
    assert elapsed < DEADLINE_S + SLACK_S, elapsed
    assert (error.details["store"], error.details["backend"]) == ("graph", "gremlin"), error.details
    public = error.public_message()  # what a tenant would see: the store, never its address
    assert "graph store (gremlin)" in public and str(silent_server) not in public, public


def test_entry_point_reports_a_down_server_at_open(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """Opening the store through the registry with a down server fails right away, naming the URL."""
    port = free_port()
    monkeypatch.setenv("GRAPHCTX_GREMLIN_URL", f"ws://127.0.0.1:{port}/gremlin")
    monkeypatch.setenv("GRAPHCTX_GREMLIN_RETRIES", "0")
    error = finishes(lambda: registry.factory("graph", "gremlin")(Settings(data_dir=tmp_path)))
    assert isinstance(error, BackendUnavailable), error
    assert f"127.0.0.1:{port}" in error.message
