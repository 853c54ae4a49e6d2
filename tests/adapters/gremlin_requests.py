"""What the tests of the Gremlin-speaking adapters (Gremlin, HugeGraph) share: the request recorder
and its inspection (every user value travels inside a binding), a run of every template with
injection payloads, and the fault rigs (a silent server, a killable proxy)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from graphctx.adapters.gremlin import GremlinGraphStore, TimedTransport, batch, keys
from graphctx.adapters.gremlin.dialect import ROW_FIELDS
from graphctx.contracts import datasets
from graphctx.kernel import templates as t
from graphctx.model import PREDICATES, Entity, Fact
from graphctx.scope import Scope
from tests.transports.live import free_port


def require_server(url: str, variable: str, needs: str) -> str:
    """`url` when set; otherwise skip, saying so (with GRAPHCTX_REQUIRE_SERVERS=1, fail instead)."""
    if url:
        return url
    if os.environ.get("GRAPHCTX_REQUIRE_SERVERS") == "1":
        pytest.fail(f"GRAPHCTX_REQUIRE_SERVERS=1 but {variable} is not set")
    pytest.skip(f"needs {needs}: {variable} is not set (source compose/native/env.sh)")


def finishes(call: Callable[[], Any], bound_s: float = 90.0) -> Any:
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


class Recorder:
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


STEP_CONSTANTS = {
    *(v for k, v in vars(keys).items() if k.isupper() and isinstance(v, str)),
    *PREDICATES,
    *("near", "out_total", "in_total", "out", "in", "entities", "facts", "by_type", "valid", "id", "hash"),
    *batch.STEP_KEYS,  # the row writes' step labels and side-effect key
    *ROW_FIELDS,  # the fields of a row that are not property keys
}
SIDE_EFFECT_KEY = re.compile(r"^_b\d+$")


def outside_bindings(value: Any, found: list[Any]) -> None:
    """Collect every scalar of a GraphSON bytecode argument that is not inside a g:Binding."""
    if isinstance(value, dict) and "@type" in value:
        kind, inner = value["@type"], value.get("@value")
        if kind == "g:Binding":
            return
        if kind == "g:Bytecode":
            for instruction in inner.get("step", []) + inner.get("source", []):
                for arg in instruction[1:]:
                    outside_bindings(arg, found)
            return
        if kind in ("g:T", "g:Cardinality", "g:Scope", "g:Order", "g:Direction"):
            return  # enums of the Gremlin language
        if kind == "g:P":  # a predicate's name is language; its value is checked like any other
            assert inner["predicate"] in ("eq", "gt", "gte", "lt", "lte", "within"), inner
            outside_bindings(inner["value"], found)
            return
        outside_bindings(inner, found)
        return
    if isinstance(value, dict):
        for v in value.values():
            outside_bindings(v, found)
    elif isinstance(value, list):
        for v in value:
            outside_bindings(v, found)
    else:
        found.append(value)


def bound_strings(value: Any, found: list[str]) -> None:
    if isinstance(value, dict):
        if value.get("@type") == "g:Binding":
            found.append(json.dumps(value["@value"]["value"], ensure_ascii=False))
            return
        for v in value.values():
            bound_strings(v, found)
    elif isinstance(value, list):
        for v in value:
            bound_strings(v, found)


def run_every_template(store: GremlinGraphStore, scope: Scope) -> None:
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


def assert_user_values_bound(
    requests: list[dict[str, Any]], scope: Scope, *, constant: Callable[[str], bool]
) -> None:
    """Every request is bytecode; each scalar outside a binding is a `constant` of the adapter, never a
    user value; every payload of run_every_template travels bound."""
    user_values = {*datasets.INJECTION_PAYLOADS, scope.tenant_id, scope.namespace}
    for request in requests:
        assert request["op"] == "bytecode", request["op"]  # never a script
        outside: list[Any] = []
        outside_bindings(request["args"]["gremlin"], outside)
        for value in outside:
            if isinstance(value, str):
                assert constant(value), f"unbound string {value!r}"
                assert value not in user_values
            else:
                assert value in (0, False, None), f"unbound value {value!r}"
    bound: list[str] = []
    for request in requests:
        bound_strings(request["args"]["gremlin"], bound)
    joined = "\n".join(bound)
    for payload in datasets.INJECTION_PAYLOADS[:-1]:
        assert json.dumps(payload, ensure_ascii=False)[1:-1] in joined, payload


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


class Proxy:
    """A TCP proxy to the live server that can be killed, restarted on the same port, told to
    swallow the next answer (the request reaches the server, the answer never reaches us), and
    frozen: connections are still accepted and bytes still taken in, but nothing goes through until
    it thaws, as with a SIGSTOPped server whose kernel still completes handshakes and buffers."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.port = free_port()
        self.swallow_next_answer = False
        self.frozen = False
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
                while self.frozen:
                    time.sleep(0.02)
                dst.sendall(data)
        except OSError:
            return
