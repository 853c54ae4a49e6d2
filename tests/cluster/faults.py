"""Faults on the native HugeGraph cluster (compose/native/hugegraph-cluster): kill -9 a store node
during a bulk load and during recalls, kill the partition leader, restart PD, stop a graph server with
clients connected -- and what graphctx's callers see.

Every call is timed and classified: done, a typed graphctx error, or anything else (a defect). After
each fault the node comes back, and the checks hold: every write reported done is on the cluster (read
through the *other* graph server), the failed writes are re-run (idempotent) and reconcile leaves
graph, lexical and vector indexes equal, and no call outlived its bound. Used by
tests/cluster/test_faults.py (small sizes, assertions) and bench/cluster_faults.py (the scripted run
whose figures go to docs/results.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphctx.adapters.hugegraph import HugeGraphSettings, HugeGraphStore
from graphctx.errors import GraphctxError
from graphctx.kernel import templates as t
from graphctx.scope import Scope
from graphctx.service import ContextService
from graphctx.settings import Settings

REPO = Path(__file__).resolve().parents[2]
CTL = REPO / "compose" / "native" / "hugegraph-cluster" / "ctl"


def _env(name: str, default: str) -> str:
    return os.environ.get(name) or default


URL = _env("GRAPHCTX_TEST_HGCLUSTER_URL", "http://127.0.0.1:18641")
GREMLIN_URL = _env("GRAPHCTX_TEST_HGCLUSTER_GREMLIN_URL", "ws://127.0.0.1:18651/gremlin")
URL_2 = _env("GRAPHCTX_TEST_HGCLUSTER_URL_2", "http://127.0.0.1:18642")
GREMLIN_URL_2 = _env("GRAPHCTX_TEST_HGCLUSTER_GREMLIN_URL_2", "ws://127.0.0.1:18652/gremlin")
STORES = ("store-0", "store-1", "store-2")


# ---- the cluster's nodes ------------------------------------------------------------------------


def ctl(*args: str, timeout_s: float = 600) -> str:
    """Run compose/native/hugegraph-cluster/ctl; its output, or an error carrying its log tail."""
    done = subprocess.run([str(CTL), *args], capture_output=True, text=True, timeout=timeout_s, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"ctl {' '.join(args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done.stdout


def pd_view() -> dict[str, Any]:
    """PD's view: {"state", "stores": {address: state}, "partitions": [{graph, id, leader, replicas}]}."""
    lines = [line for line in ctl("status").splitlines() if line.startswith("{")]
    if not lines:
        raise RuntimeError("PD does not answer (ctl status printed no view)")
    view: dict[str, Any] = json.loads(lines[-1])
    return view


def ours() -> bool:
    """True when the running cluster was started from this checkout (its pid files are here)."""
    try:
        status = ctl("status", timeout_s=60)
    except (RuntimeError, OSError, subprocess.TimeoutExpired):
        return False
    return "[hugegraph-cluster/pd] running" in status


def store_of(address: str) -> str:
    """`127.0.0.1:<grpc port>` -> store-N (the launcher's ports: base + 10 + N)."""
    ports = sorted(pd_view()["stores"])
    return STORES[ports.index(address)]


def busiest_leader() -> str:
    """The store node that leads the most partitions."""
    leaders = Counter(p["leader"] for p in pd_view()["partitions"] if p["leader"])
    return store_of(leaders.most_common(1)[0][0])


# ---- timed calls --------------------------------------------------------------------------------


@dataclass
class Outcome:
    what: str
    seconds: float
    error: str = ""  # "" = done; else the exception's type name
    typed: bool = True  # a graphctx error (or done)
    detail: str = ""


@dataclass
class Log:
    outcomes: list[Outcome] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def call(self, what: str, fn: Callable[[], Any]) -> Any:
        started = time.perf_counter()
        try:
            result = fn()
        except GraphctxError as exc:
            self._add(Outcome(what, time.perf_counter() - started, type(exc).__name__, True, str(exc)[:300]))
            return None
        except Exception as exc:  # an untyped error is what this run looks for
            self._add(Outcome(what, time.perf_counter() - started, type(exc).__name__, False, str(exc)[:300]))
            return None
        self._add(Outcome(what, time.perf_counter() - started))
        return result

    def _add(self, outcome: Outcome) -> None:
        with self.lock:
            self.outcomes.append(outcome)

    def summary(self) -> dict[str, Any]:
        done = [o for o in self.outcomes if not o.error]
        failed = [o for o in self.outcomes if o.error]
        return {
            "calls": len(self.outcomes),
            "done": len(done),
            "errors": dict(Counter(o.error for o in failed)),
            "untyped": [f"{o.error}: {o.detail}" for o in failed if not o.typed],
            "max_s": max((o.seconds for o in self.outcomes), default=0.0),
            "max_failed_s": max((o.seconds for o in failed), default=0.0),
        }


# ---- a graphctx service on the cluster ---------------------------------------------------------


def cluster_settings(data_dir: Path, *, server: int = 1) -> Settings:
    url, gremlin = (URL, GREMLIN_URL) if server == 1 else (URL_2, GREMLIN_URL_2)
    os.environ["GRAPHCTX_HUGEGRAPH_URL"] = url
    os.environ["GRAPHCTX_HUGEGRAPH_GREMLIN_URL"] = gremlin
    return Settings(data_dir=data_dir, embedder="hashing", graph_backend="hugegraph")


def other_server() -> HugeGraphStore:
    """A client of server 2: what a write reported done through server 1 must be visible from."""
    store = HugeGraphStore(HugeGraphSettings(url=URL_2, gremlin_url=GREMLIN_URL_2, pool_size=1))
    store.ensure_schema()
    return store


def entities(prefix: str, n: int) -> list[dict[str, Any]]:
    return [
        {"id": f"{prefix}-{i:05d}", "name": f"{prefix} item {i}", "type": "service",
         "summary": f"fault run entity {i} of {prefix}, talks to {prefix}-{(i + 1) % n:05d}"}
        for i in range(n)
    ]  # fmt: skip


def facts(prefix: str, n: int) -> list[dict[str, Any]]:
    return [
        {"subject_id": f"{prefix}-{i:05d}", "predicate": "depends_on",
         "object_id": f"{prefix}-{(i + 1) % n:05d}", "source": "fault-run"}
        for i in range(n)
    ]  # fmt: skip


def on_cluster(scope: Scope, ids: list[str]) -> set[str]:
    """The ids the cluster holds, read through server 2."""
    store = other_server()
    try:
        found: set[str] = set()
        for i in range(0, len(ids), 200):
            got = store.run(t.ENTITY_GET, scope, t.EntityGetParams(ids=tuple(ids[i : i + 200])))
            found |= {e.id for e in got.entities}
        return found
    finally:
        store.close()


@contextmanager
def service(data_dir: Path, *, server: int = 1) -> Iterator[ContextService]:
    with ContextService.open(cluster_settings(data_dir, server=server)) as svc:
        yield svc


def new_scope(kind: str) -> Scope:
    return Scope(f"fault-{kind}-{uuid.uuid4().hex[:8]}")


# ---- scenarios ----------------------------------------------------------------------------------


@dataclass
class Report:
    scenario: str
    node: str
    during: dict[str, Any]
    after: dict[str, Any]
    recovery_s: float
    checks: dict[str, bool]
    serving_s: float = 0.0
    """From PD reporting the cluster healthy to the first probe through server 1 that succeeded."""
    setup_s: float = 0.0
    """How long the scenario's setup write took to land (retried while the server failed it, typed)."""

    @property
    def ok(self) -> bool:
        return all(self.checks.values())


def call_bound_s() -> float:
    """No call may take longer than this: the adapter's read timeout (connect + read + 1, retries)."""
    settings = HugeGraphSettings()
    per_try = settings.connect_timeout_s + settings.read_timeout_s + 1.0
    return per_try * (1 + settings.retries) + 5.0


SERVING_BOUND_S = 180.0
"""How long after PD reports the cluster healthy a graph server may still fail reads on a store that
came back: its store client learns new leaders from PD and reconnects to the node with gRPC's
backoff (up to 120 s between attempts). Measured, then bounded; graphctx answers typed meanwhile."""


def _bring_back(node: str) -> float:
    started = time.perf_counter()
    # PD's own readiness wait is 600 s (ctl: the stores spin while PD is away and starve its start-up)
    ctl("start", node, timeout_s=900)
    # then each store's PD channel reconnects on gRPC's backoff (up to 120 s) before it reports Up
    ctl("wait-healthy", "240")
    return time.perf_counter() - started


def serving_again(
    svc: ContextService,
    scope: Scope,
    probe: Callable[[], Any] | None = None,
    bound_s: float = SERVING_BOUND_S,
) -> float:
    """Seconds until `probe` (default: a graph read of the scope's statistics) through the service's
    server succeeds (inf past `bound_s`); every failure meanwhile must be a typed graphctx error. A
    probe that touches every partition (a recall over the scope, a batch write) is the honest one: a
    read that lands only on partitions led by the stores that stayed up succeeds while the store that
    came back is still unreachable from the server."""
    check = probe or (lambda: svc.stores.graph.run(t.SCOPE_STATS, scope, t.NoParams()))
    started = time.perf_counter()
    while time.perf_counter() - started < bound_s:
        try:
            check()
            return time.perf_counter() - started
        except GraphctxError:
            time.sleep(1.0)
    return float("inf")


def set_up(
    svc: ContextService, scope: Scope, data: list[dict[str, Any]], links: list[dict[str, Any]]
) -> float:
    """Write a scenario's data (idempotent upserts) until it lands, within SERVING_BOUND_S: right after
    an earlier scenario's store came back, the server may still fail writes (typed) for a while. The
    seconds it took; a setup that never lands raises."""
    last: list[str] = []

    def write() -> None:
        try:
            svc.remember(scope, data, links) if links else svc.remember(scope, data)
        except GraphctxError as exc:
            last[:] = [f"{type(exc).__name__}: {str(exc)[:300]}"]
            raise

    waited = serving_again(svc, scope, write, SERVING_BOUND_S)
    if waited == float("inf"):
        raise RuntimeError(f"the setup write did not land within {SERVING_BOUND_S:.0f} s: {last}")
    return waited


def bulk_load_with_kill(work: Path, node: str, *, batches: int = 12, batch: int = 100) -> Report:
    """Load `batches` remember() calls; kill -9 `node` after the second one; bring it back after the
    load. Every batch reported done must be on the cluster; the failed ones, re-run, converge."""
    scope = new_scope("load")
    data = entities("e", batches * batch)
    log = Log()
    reported: list[str] = []
    failed: list[list[dict[str, Any]]] = []
    with service(work / "load") as svc:
        for k in range(batches):
            if k == 2:
                ctl("kill", node)
            chunk = data[k * batch : (k + 1) * batch]
            answer = log.call("remember", lambda chunk=chunk: svc.remember(scope, chunk))
            (reported.extend(e["id"] for e in chunk) if answer is not None else failed.append(chunk))
        during = log.summary()
        recovery = _bring_back(node)
        first = data[:batch]  # an idempotent rewrite: a write probe reaching the partitions
        serving = serving_again(svc, scope, lambda: svc.remember(scope, first))
        missing = set(reported) - on_cluster(scope, reported)
        after = Log()
        for chunk in failed:  # the caller's retry of what raised
            after.call("remember (re-run)", lambda chunk=chunk: svc.remember(scope, chunk))
        after.call("remember facts", lambda: svc.remember(scope, facts=facts("e", len(data))))
        repair = after.call("reconcile", lambda: svc.reconcile(scope))
        second = after.call("reconcile again", lambda: svc.reconcile(scope))
        all_ids = [e["id"] for e in data]
        held = on_cluster(scope, all_ids)
        stats = svc.stores.graph.run(t.SCOPE_STATS, scope, t.NoParams())
        lexical = svc.stores.lexical.hashes(scope)
    after_summary = after.summary()
    return Report(
        "kill -9 a store node during a bulk load",
        node,
        during,
        {**after_summary, "reconcile": repair, "reconcile_again": second, "facts": stats.facts},
        recovery,
        {
            "server 1 serves again within the bound": serving <= SERVING_BOUND_S,
            "no write reported done is missing": not missing,
            "every error typed": not during["untyped"] and not after_summary["untyped"],
            "no call outlived its bound": during["max_s"] <= call_bound_s(),
            "after recovery every call succeeds": not after_summary["errors"],
            "nothing lost": held == set(all_ids) and stats.entities == len(all_ids),
            "graph and lexical index agree": set(lexical) == set(all_ids),
            "second reconcile repairs nothing": bool(second)
            and not any(second[k] for k in ("lexical_repaired", "vector_repaired", "removed_from_indexes")),
        },
        serving,
    )


def _recall_all(svc: ContextService, scope: Scope, size: int) -> None:
    """Ten recalls spread over the scope: between them they reach every partition."""
    for i in range(0, size, max(1, size // 10)):
        svc.recall(scope, f"r item {i}")


def recalls_with_kill(work: Path, node: str, *, seconds: float = 30.0, size: int = 300) -> Report:
    """Recall in a loop for `seconds`; kill -9 `node` a third of the way in; bring it back."""
    scope = new_scope("recall")
    data = entities("r", size)
    log = Log()
    with service(work / "recall") as svc:
        setup_s = set_up(svc, scope, data, facts("r", size))
        stop = time.monotonic() + seconds
        killed = False
        k = 0
        while time.monotonic() < stop:
            if not killed and time.monotonic() > stop - seconds * 2 / 3:
                ctl("kill", node)
                killed = True
            q = f"r item {k % size}"
            log.call("recall", lambda q=q: svc.recall(scope, q))
            k += 1
        during = log.summary()
        recovery = _bring_back(node)
        serving = serving_again(svc, scope, lambda: _recall_all(svc, scope, size))
        after = Log()
        for i in range(10):
            after.call("recall", lambda i=i: svc.recall(scope, f"r item {i}"))
    after_summary = after.summary()
    return Report(
        "kill -9 a store node during recalls",
        node,
        during,
        after_summary,
        recovery,
        {
            "every error typed": not during["untyped"],
            "no call outlived its bound": during["max_s"] <= call_bound_s(),
            "server 1 serves again within the bound": serving <= SERVING_BOUND_S,
            "after recovery every recall succeeds": not after_summary["errors"],
        },
        serving,
        setup_s,
    )


def pd_restart(work: Path, *, seconds: float = 20.0, size: int = 200) -> Report:
    """Recalls and writes while PD is killed (-9) and started again."""
    scope = new_scope("pd")
    data = entities("p", size)
    log = Log()
    with service(work / "pd") as svc:
        setup_s = set_up(svc, scope, data, [])
        ctl("kill", "pd")
        stop = time.monotonic() + seconds
        k = 0
        while time.monotonic() < stop:
            q = f"p item {k % size}"
            log.call("recall", lambda q=q: svc.recall(scope, q))
            chunk = [{**data[k % size], "summary": f"rewritten while PD is down ({k})"}]
            log.call("remember", lambda chunk=chunk: svc.remember(scope, chunk))
            k += 1
        during = log.summary()
        recovery = _bring_back("pd")
        serving = serving_again(svc, scope, lambda: svc.remember(scope, data))
        restart: dict[str, bool] = {}
        if serving == float("inf"):
            # HugeGraph 1.5.0 never applies a store's NOT_PARTITION_LEADER notice to the server's cached
            # leaders (docs/operations.md, "Faults"): the operator's remedy is a restart of the server
            ctl("stop", "server-1")
            ctl("start", "server-1")
            again = serving_again(svc, scope, lambda: svc.remember(scope, data))
            restart = {"server 1 serves once restarted": again <= SERVING_BOUND_S}
        after = Log()
        after.call("remember", lambda: svc.remember(scope, data))
        for i in range(5):
            after.call("recall", lambda i=i: svc.recall(scope, f"p item {i}"))
        held = on_cluster(scope, [e["id"] for e in data])
    after_summary = after.summary()
    return Report(
        "restart PD (kill -9, then start) under recalls and writes",
        "pd",
        during,
        after_summary,
        recovery,
        {
            "every error typed": not during["untyped"],
            "no call outlived its bound": during["max_s"] <= call_bound_s(),
            "server 1 serves again within the bound": serving <= SERVING_BOUND_S,
            "after recovery every call succeeds": not after_summary["errors"],
            "nothing lost": held == {e["id"] for e in data},
            **restart,
        },
        serving,
        setup_s,
    )


def server_stop_with_clients(work: Path, *, size: int = 200) -> Report:
    """A service connected to server 1 while server 1 is stopped (SIGTERM) and started again: calls
    fail typed and fast while it is down, and the same service works again once it is back."""
    scope = new_scope("server")
    data = entities("s", size)
    log = Log()
    with service(work / "server") as svc:
        setup_s = set_up(svc, scope, data, [])
        log.call("recall", lambda: svc.recall(scope, "s item 1"))
        ctl("stop", "server-1")
        for i in range(5):
            log.call("recall", lambda i=i: svc.recall(scope, f"s item {i}"))
            log.call("remember", lambda i=i: svc.remember(scope, data[i : i + 1]))
        during = log.summary()
        started = time.perf_counter()
        ctl("start", "server-1")
        recovery = time.perf_counter() - started
        after = Log()
        for i in range(5):
            after.call("recall", lambda i=i: svc.recall(scope, f"s item {i}"))
        after.call("remember", lambda: svc.remember(scope, data))
        held = on_cluster(scope, [e["id"] for e in data])
    after_summary = after.summary()
    down_errors = set(during["errors"])
    # a read fails BackendUnavailable; a write is journaled first, so it fails WriteIncomplete (a
    # BackendError: recorded, completed by the next write or recover) or, when an earlier one is still
    # pending, WriteIncomplete with recorded=False ("send it again"); either way nothing is lost
    expected = {"recall": {"BackendUnavailable"}, "remember": {"BackendUnavailable", "WriteIncomplete"}}
    as_expected = all(o.error in expected[o.what] for o in log.outcomes if o.error)
    return Report(
        "stop a graph server with clients connected",
        "server-1",
        during,
        after_summary,
        recovery,
        {
            "calls to the stopped server fail typed": bool(down_errors) and not during["untyped"],
            "reads fail BackendUnavailable, writes WriteIncomplete": as_expected,
            "no call outlived its bound": during["max_s"] <= call_bound_s(),
            "the same client works once the server is back": not after_summary["errors"],
            "nothing lost": held == {e["id"] for e in data},
        },
        setup_s=setup_s,
    )
