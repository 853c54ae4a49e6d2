"""The same recall workload on every graph backend in one run: embedded SQLite, Apache HugeGraph and a
TinkerPop Gremlin Server (lexical and vector legs embedded in each case). p50/p95 per stage, and the
graph requests one recall costs: templates run, and round trips on the wire for the server backends.
Writes its section of docs/results.md.

    source compose/native/env.sh   # GRAPHCTX_TEST_HUGEGRAPH_URL, ..._GREMLIN_URL, GRAPHCTX_TEST_GREMLIN_URL
    python bench/graph_backends.py --size 2000 --queries 100

A server backend whose URL is not set or not reachable is left out, and the section says so.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import socket
import sys
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from _report import header, percentile, write_section
from recall_latency import STAGES, make_scope_data, queries, vocabulary

from graphctx.scope import Scope
from graphctx.service import ContextService
from graphctx.settings import Settings

CHUNK = 5000
# backend -> {adapter variable: test variable (with the native launchers' defaults)}
SERVERS: dict[str, dict[str, tuple[str, str]]] = {
    "sqlite": {},
    "hugegraph": {
        "GRAPHCTX_HUGEGRAPH_URL": ("GRAPHCTX_TEST_HUGEGRAPH_URL", "http://127.0.0.1:18080"),
        "GRAPHCTX_HUGEGRAPH_GREMLIN_URL": (
            "GRAPHCTX_TEST_HUGEGRAPH_GREMLIN_URL",
            "ws://127.0.0.1:18182/gremlin",
        ),
    },
    "gremlin": {"GRAPHCTX_GREMLIN_URL": ("GRAPHCTX_TEST_GREMLIN_URL", "ws://127.0.0.1:18183/gremlin")},
}


def reachable(url: str) -> bool:
    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname or "", parts.port or 80), timeout=2):
            return True
    except OSError:
        return False


def configure(backend: str) -> str | None:
    """Point the adapter's variables at the server; None when ready, else why it is left out."""
    for var, (test_var, default) in SERVERS[backend].items():
        url = os.environ.get(var) or os.environ.get(test_var) or default
        if not reachable(url):
            return f"{url} is not reachable"
        os.environ[var] = url
    return None


class Counting:
    """Wraps the graph store: counts template runs (and reads the store's own round-trip counter)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.templates = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def run(self, template: Any, scope: Scope, params: Any) -> Any:
        self.templates += 1
        return self.inner.run(template, scope, params)

    @property
    def round_trips(self) -> int | None:
        return getattr(self.inner, "round_trips", None)


def run(backend: str, size: int, n_queries: int, work: Path, embedder: str) -> dict[str, Any]:
    rng = random.Random(size)
    vocab = vocabulary(rng)
    data_dir = work / f"graph-{backend}"
    shutil.rmtree(data_dir, ignore_errors=True)
    settings = Settings(data_dir=data_dir, embedder=embedder, graph_backend=backend)
    scope = Scope(f"bench-{uuid.uuid4().hex[:8]}")  # servers are shared: a scope of our own
    entities, facts = make_scope_data(random.Random(size * 100), vocab, size)
    with ContextService.open(settings) as service:
        graph = Counting(service.stores.graph)
        service.stores.graph = graph
        started = time.perf_counter()
        for i in range(0, len(entities), CHUNK):
            service.remember(scope, entities[i : i + CHUNK])
        for i in range(0, len(facts), CHUNK):
            service.remember(scope, facts=facts[i : i + CHUNK])
        load_s = time.perf_counter() - started
        qs = queries(random.Random(1), entities, n_queries)
        for q in qs[:5]:  # warm caches and connections
            service.recall(scope, q)
        timings: dict[str, list[float]] = {s: [] for s in STAGES}
        wall: list[float] = []
        templates: list[int] = []
        trips: list[int] = []
        for q in qs:
            runs, sent = graph.templates, graph.round_trips
            t0 = time.perf_counter()
            env = service.recall(scope, q)
            wall.append((time.perf_counter() - t0) * 1000)
            templates.append(graph.templates - runs)
            if sent is not None:
                trips.append((graph.round_trips or 0) - sent)
            for s in STAGES:
                timings[s].append(env["timings_ms"][s])
    return {"load_s": load_s, "timings": timings, "wall": wall, "templates": templates, "trips": trips}


def p50_p95(values: list[float]) -> str:
    return f"{percentile(values, 0.5):.1f} / {percentile(values, 0.95):.1f}"


def table(results: dict[str, dict[str, Any]]) -> str:
    names = list(results)
    lines = ["| stage (p50 / p95 ms) | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for s in STAGES:
        lines.append(f"| {s} | " + " | ".join(p50_p95(results[n]["timings"][s]) for n in names) + " |")
    lines.append("| wall (client side) | " + " | ".join(p50_p95(results[n]["wall"]) for n in names) + " |")

    def counts(values: list[int]) -> str:
        return f"{percentile(values, 0.5):.0f} / {max(values)}" if values else "in-process (no wire)"

    lines.append(
        "| graph templates per recall (p50 / max) | "
        + " | ".join(counts(results[n]["templates"]) for n in names)
        + " |"
    )
    lines.append(
        "| round trips per recall (p50 / max) | "
        + " | ".join(counts(results[n]["trips"]) for n in names)
        + " |"
    )
    lines.append("| load (s) | " + " | ".join(f"{results[n]['load_s']:.0f}" for n in names) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--size", type=int, default=2000, help="entities in the scope (3 facts each)")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--backends", nargs="+", default=list(SERVERS), choices=list(SERVERS))
    parser.add_argument("--embedder", default="hashing")
    parser.add_argument("--work", type=Path, default=Path(__file__).parent / ".work")
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/results.md alone")
    args = parser.parse_args()
    results: dict[str, dict[str, Any]] = {}
    left_out: list[str] = []
    for backend in args.backends:
        why = configure(backend)
        if why:
            left_out.append(f"{backend}: {why}")
            continue
        results[backend] = run(backend, args.size, args.queries, args.work, args.embedder)
        print(f"{backend}: done", flush=True)
    text = table(results) if results else "(no backend ran)"
    print(text)
    notes = "".join(f"\n- left out: {n}" for n in left_out)
    body = (
        "### Graph backends: one recall workload on SQLite, HugeGraph and Gremlin Server\n\n"
        + header(
            "python bench/graph_backends.py " + " ".join(sys.argv[1:]),
            f"synthetic memory, {args.size:,} entities and {args.size * 3:,} facts in one scope, "
            f"{args.queries} queries (⅓ exact names, ⅓ summary words, ⅓ phrases), embedder {args.embedder}; "
            "HugeGraph 1.5.0 memory backend and Gremlin Server (TinkerGraph) on this machine",
        )
        + notes
        + "\n\nStage timings come from the envelope; lexical (tantivy) and vector (qdrant-edge) legs are "
        "embedded for every backend, so the differences are the graph's. Round trips are requests on the "
        "Gremlin connection (retries included).\n\n" + text + "\n"
    )
    if not args.no_write:
        write_section("graph_backends", body)


if __name__ == "__main__":
    main()
