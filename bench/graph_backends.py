"""The same recall workload on every graph backend in one run: embedded SQLite, Apache HugeGraph
standalone, HugeGraph distributed (PD + 3 stores, hstore) and a TinkerPop Gremlin Server (lexical and
vector legs embedded in each case). p50/p95 per stage, the graph requests one recall costs (templates
run, and round trips on the wire for the server backends), and bulk-load throughput; with several
--sizes, how both grow with the entities per scope. Writes its section of docs/results.md.

    source compose/native/env.sh                     # the standalone servers
    source compose/native/hugegraph-cluster/env.sh   # the cluster (compose/native/up hugegraph-cluster)
    python bench/graph_backends.py --sizes 2000 10000 --queries 100

Before / after (`--compare BASE`, BASE a checkout of the code to compare with, its import package built
by `.ci/layout`): bulk-load throughput and the time of one fact.upsert of `--upsert-n` facts into the
loaded scope, for this checkout and BASE in turn, `--repeats` rounds interleaved, each run a fresh
process in a scope of its own; medians side by side, in a section of its own:

    git worktree add --detach /tmp/base main && (cd /tmp/base && .ci/layout)
    python bench/graph_backends.py --compare /tmp/base --backends hugegraph --sizes 500 --repeats 3

A server backend whose URL is not set or not reachable is left out, and the section says so.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit
from urllib.request import urlopen

from _report import header, median, percentile, write_section
from recall_latency import STAGES, make_scope_data, queries, vocabulary

import graphctx
from graphctx.kernel import templates as t
from graphctx.model import Fact
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
    "hugegraph-cluster": {
        "GRAPHCTX_HUGEGRAPH_URL": ("GRAPHCTX_TEST_HGCLUSTER_URL", "http://127.0.0.1:18641"),
        "GRAPHCTX_HUGEGRAPH_GREMLIN_URL": (
            "GRAPHCTX_TEST_HGCLUSTER_GREMLIN_URL",
            "ws://127.0.0.1:18651/gremlin",
        ),
    },
    "gremlin": {"GRAPHCTX_GREMLIN_URL": ("GRAPHCTX_TEST_GREMLIN_URL", "ws://127.0.0.1:18183/gremlin")},
}
# the graph store entry point each benchmarked backend opens
ADAPTER = {name: name for name in SERVERS} | {"hugegraph-cluster": "hugegraph"}


def _hugegraph_backend() -> str:
    """The standalone server's storage backend as it reports it (memory for tests, rocksdb for use)."""
    test_var, default = SERVERS["hugegraph"]["GRAPHCTX_HUGEGRAPH_URL"]
    url = (os.environ.get(test_var) or default).rstrip("/")
    try:
        with urlopen(f"{url}/graphs/hugegraph", timeout=5) as answer:
            return str(json.load(answer).get("backend", "unknown"))
    except (OSError, ValueError):
        return "unknown"


# what each server backend is, for the section's header (read when it runs)
DESCRIBED = {
    "hugegraph": lambda: f"HugeGraph 1.5.0 standalone ({_hugegraph_backend()} backend)",
    "hugegraph-cluster": lambda: (
        "HugeGraph 1.5.0 cluster (1 PD, 3 stores with 3 Raft replicas per partition, 2 servers; hstore)"
    ),
    "gremlin": lambda: "Gremlin Server (TinkerGraph)",
}


def reachable(url: str) -> bool:
    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname or "", parts.port or 80), timeout=2):
            return True
    except OSError:
        return False


def configure(backend: str) -> str | None:
    """Point the adapter's variables at the server; None when ready, else why it is left out. The
    test variables come first: the standalone server and the cluster share the adapter's variables."""
    for var, (test_var, default) in SERVERS[backend].items():
        url = os.environ.get(test_var) or default
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


def time_upserts(graph: Any, scope: Scope, size: int, n: int, rounds: int = 5) -> dict[str, list[float]]:
    """ms of one fact.upsert of `n` facts into the loaded scope: new facts (each round its own), then
    the same batch again (every fact found stored and unchanged)."""
    new_ms: list[float] = []
    same_ms: list[float] = []
    rng = random.Random(size + 7)
    for r in range(rounds):
        batch = [
            Fact(
                subject_id=f"e{rng.randrange(size)}",
                predicate="relates_to",
                object_id=f"e{rng.randrange(size)}",
                value=f"bench {r} {i}",
            )
            for i in range(n)
        ]
        params = t.FactUpsertParams(facts=tuple(batch))
        for into in (new_ms, same_ms):
            t0 = time.perf_counter()
            graph.run(t.FACT_UPSERT, scope, params)
            into.append((time.perf_counter() - t0) * 1000)
    return {"upsert_new_ms": new_ms, "upsert_same_ms": same_ms}


def run(
    backend: str,
    size: int,
    n_queries: int,
    work: Path,
    embedder: str,
    upsert_n: int = 0,
    upsert_rounds: int = 5,
    load_budget_s: float | None = None,
    recall_budget_s: float | None = None,
) -> dict[str, Any]:
    """Load `size` entities (3 facts each) into a fresh scope, then time recalls. With
    `load_budget_s`, a load still running past it stops after the chunk at hand: the result then
    says how far it got (`stopped`) and its rate, and no recall is timed. With `recall_budget_s`,
    recalls stop once past it (at least 10 are timed)."""
    rng = random.Random(size)
    vocab = vocabulary(rng)
    data_dir = work / f"graph-{backend}"
    shutil.rmtree(data_dir, ignore_errors=True)
    settings = Settings(data_dir=data_dir, embedder=embedder, graph_backend=ADAPTER[backend])
    scope = Scope(f"bench-{uuid.uuid4().hex[:8]}")  # servers are shared: a scope of our own
    entities, facts = make_scope_data(random.Random(size * 100), vocab, size)
    with ContextService.open(settings) as service:
        graph = Counting(service.stores.graph)
        service.stores.graph = graph
        started = time.perf_counter()
        chunks = [{"entities": entities[i : i + CHUNK]} for i in range(0, len(entities), CHUNK)]
        chunks += [{"facts": facts[i : i + CHUNK]} for i in range(0, len(facts), CHUNK)]
        loaded = 0
        for chunk in chunks:
            service.remember(scope, **chunk)
            loaded += len(next(iter(chunk.values())))
            if load_budget_s is not None and time.perf_counter() - started > load_budget_s:
                break
        load_s = time.perf_counter() - started
        if loaded < len(entities) + len(facts):
            print(f"{size} {backend}: stopped after {loaded:,} records in {load_s:.0f} s", flush=True)
            return {"load_s": load_s, "records": loaded, "stopped": len(entities) + len(facts)}
        upserts = time_upserts(graph, scope, size, upsert_n, upsert_rounds) if upsert_n else {}
        if len(entities) >= 50_000:  # few recalls at large sizes: the load dominates the run
            n_queries = min(n_queries, 50)
        qs = queries(random.Random(1), entities, n_queries)
        for q in qs[:5]:  # warm caches and connections
            service.recall(scope, q)
        timings: dict[str, list[float]] = {s: [] for s in STAGES}
        wall: list[float] = []
        templates: list[int] = []
        trips: list[int] = []
        timed_from = time.perf_counter()
        for q in qs:
            if (
                recall_budget_s is not None
                and len(wall) >= 10
                and time.perf_counter() - timed_from > recall_budget_s
            ):
                print(f"{size} {backend}: recalls stopped after {len(wall)} of {len(qs)}", flush=True)
                break
            runs, sent = graph.templates, graph.round_trips
            t0 = time.perf_counter()
            env = service.recall(scope, q)
            wall.append((time.perf_counter() - t0) * 1000)
            templates.append(graph.templates - runs)
            if sent is not None:
                trips.append((graph.round_trips or 0) - sent)
            for s in STAGES:
                timings[s].append(env["timings_ms"][s])
    return {
        "load_s": load_s,
        "records": len(entities) + len(facts),
        "timings": timings,
        "wall": wall,
        "templates": templates,
        "trips": trips,
        **upserts,
    }


def child(args: argparse.Namespace) -> None:
    """One backend, one size, in this process; the result as JSON (for --compare)."""
    (backend,) = args.backends
    why = configure(backend)
    if why:
        raise SystemExit(f"{backend}: {why}")
    (size,) = args.sizes
    result = run(backend, size, 0, args.work, args.embedder, args.upsert_n, args.upsert_rounds)
    result["code"] = str(Path(graphctx.__file__).resolve().parent)
    Path(args.json_out).write_text(json.dumps(result), encoding="utf-8")


def compare(args: argparse.Namespace, ready: list[str], left_out: list[str]) -> None:
    """This checkout and BASE in turn, --repeats rounds interleaved, every run a fresh process."""
    base = args.compare.resolve()
    layout = base / ".layout"
    if not (layout / "graphctx").is_dir():
        raise SystemExit(f"{layout} has no graphctx package: run .ci/layout in {base}")
    codes = {"before": {"PYTHONPATH": str(layout)}, "after": {}}
    results: dict[tuple[int, str, str], list[dict[str, Any]]] = {}
    for r in range(args.repeats):
        for size in args.sizes:
            for backend in ready:
                for code, extra in codes.items():
                    with tempfile.NamedTemporaryFile(suffix=".json") as out:
                        command = [
                            sys.executable, __file__, "--child", "--backends", backend, "--sizes", str(size),
                            "--upsert-n", str(args.upsert_n), "--upsert-rounds", str(args.upsert_rounds),
                            "--embedder", args.embedder,
                            "--work", str(args.work), "--json-out", out.name,
                        ]  # fmt: skip
                        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | extra
                        subprocess.run(command, env=env, check=True)
                        got = json.loads(Path(out.name).read_text(encoding="utf-8"))
                    results.setdefault((size, backend, code), []).append(got)
                    rate = got["records"] / got["load_s"]
                    print(
                        f"round {r + 1} {size} {backend} {code} ({got['code']}): {rate:.1f} records/s, "
                        f"upsert {median(got['upsert_new_ms']):.0f} ms new / "
                        f"{median(got['upsert_same_ms']):.0f} ms unchanged",
                        flush=True,
                    )
    lines = [
        f"| backend, entities per scope | bulk load records/s (before / after, ×) | fact.upsert of "
        f"{args.upsert_n} new facts, ms | the same {args.upsert_n} again (unchanged), ms |",
        "|---|---|---|---|",
    ]

    def cell(before: float, after: float, fmt: str) -> str:
        return f"{before:{fmt}} / {after:{fmt}} (×{after / before:.2f})"

    for size in args.sizes:
        for backend in ready:
            runs = {code: results[(size, backend, code)] for code in codes}
            rate = {c: median([x["records"] / x["load_s"] for x in runs[c]]) for c in codes}
            new = {c: median([median(x["upsert_new_ms"]) for x in runs[c]]) for c in codes}
            same = {c: median([median(x["upsert_same_ms"]) for x in runs[c]]) for c in codes}
            lines.append(
                f"| {backend}, {size:,} | {cell(rate['before'], rate['after'], ',.1f')} "
                f"| {cell(new['before'], new['after'], ',.0f')} "
                f"| {cell(same['before'], same['after'], ',.0f')} |"
            )
    text = "\n".join(lines)
    print(text)
    notes = "".join(f"\n- left out: {n}" for n in left_out)
    sizes = ", ".join(f"{z:,}" for z in args.sizes)
    body = (
        "### fact.upsert before / after: bulk load and one upsert into a loaded scope\n\n"
        + header(
            "python bench/graph_backends.py " + " ".join(sys.argv[1:]),
            f"synthetic memory, {sizes} entities (3 facts each) in a fresh scope per run; then "
            f"{args.upsert_n} new facts (relates_to with a value, random endpoints) in one fact.upsert, "
            f"{args.upsert_rounds} times, and each batch again; medians of {args.repeats} runs per side, "
            "the sides interleaved",
        )
        + f"- before: {base} (its .layout), after: this checkout\n"
        + notes
        + "\n\nBulk load = `remember` of the entities then the facts (graph + both indexes); the upsert "
        "times are the graph store's fact.upsert alone (client side, one call). × = after / before.\n\n"
        + text
        + "\n"
    )
    if not args.no_write:
        write_section(args.section if args.section != "graph_backends" else "fact_upsert", body)


def p50_p95(values: list[float]) -> str:
    return f"{percentile(values, 0.5):.1f} / {percentile(values, 0.95):.1f}"


def rate(result: dict[str, Any]) -> str:
    """Bulk-load records/s; for a load stopped at the budget, how far it got."""
    text = f"{result['records'] / result['load_s']:,.0f}"
    if "stopped" in result:
        text += f" (stopped after {result['records']:,} of {result['stopped']:,} records, "
        text += f"{result['load_s']:.0f} s)"
    return text


def table(all_results: dict[str, dict[str, Any]]) -> str:
    results = {n: r for n, r in all_results.items() if "stopped" not in r}
    names = list(results)
    if not names:
        return "\n".join(
            f"- {n}: bulk load {rate(r)} records/s; no recall timed" for n, r in all_results.items()
        )
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
    lines.append("| recalls timed | " + " | ".join(str(len(results[n]["wall"])) for n in names) + " |")
    lines.append("| load (s) | " + " | ".join(f"{results[n]['load_s']:.0f}" for n in names) + " |")
    lines.append("| bulk load (records/s) | " + " | ".join(rate(results[n]) for n in names) + " |")
    lines += [
        f"\n- {n}: bulk load {rate(r)} records/s; no recall timed"
        for n, r in all_results.items()
        if n not in results
    ]
    return "\n".join(lines)


def growth(by_size: dict[int, dict[str, dict[str, Any]]]) -> str:
    """Recall p50 and load throughput per size, side by side, with the ratio to the smallest size."""
    sizes = sorted(by_size)
    names = list(by_size[sizes[0]])
    head = "| entities per scope | " + " | ".join(f"{n} recall p50 ms / records/s" for n in names) + " |"
    lines = [head, "|---|" + "---|" * len(names)]
    for z in sizes:
        cells = []
        for n in names:
            r, base = by_size[z].get(n), by_size[sizes[0]][n]
            if r is None:
                cells.append("not run")
                continue
            per_s, per_s_0 = r["records"] / r["load_s"], base["records"] / base["load_s"]
            if "stopped" in r:
                cells.append(
                    f"— / {per_s:,.0f} (×{per_s / per_s_0:.2f}; stopped after {r['records']:,} records)"
                )
                continue
            # a backend stopped at the smallest size ran no larger one, so `base` has recall timings
            p50, p50_0 = percentile(r["wall"], 0.5), percentile(base["wall"], 0.5)
            cells.append(f"{p50:.1f} (×{p50 / p50_0:.2f}) / {per_s:,.0f} (×{per_s / per_s_0:.2f})")
        lines.append(f"| {z:,} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--sizes", type=int, nargs="+", default=[2000], help="entities per scope (3 facts each), one run each"
    )
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--backends", nargs="+", default=list(SERVERS), choices=list(SERVERS))
    parser.add_argument("--embedder", default="hashing")
    parser.add_argument("--work", type=Path, default=Path(__file__).parent / ".work")
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/results.md alone")
    parser.add_argument(
        "--section", default="graph_backends", help="the docs/results.md section this run replaces"
    )
    parser.add_argument("--compare", type=Path, help="a checkout to compare with (before / after)")
    parser.add_argument("--repeats", type=int, default=3, help="--compare: runs per side")
    parser.add_argument(
        "--upsert-n", type=int, default=0, help="time fact.upsert of this many facts after the load"
    )
    parser.add_argument("--upsert-rounds", type=int, default=5, help="fact.upsert timings per run")
    parser.add_argument(
        "--load-budget-s",
        type=float,
        help="stop a backend's load past this many seconds (its rate is reported, larger sizes skipped)",
    )
    parser.add_argument(
        "--recall-budget-s", type=float, help="stop timing a backend's recalls past this (at least 10 run)"
    )
    parser.add_argument("--render", type=Path, help="write the section of a run saved with --save")
    parser.add_argument("--command", help="--render: the command of the saved run, for the header")
    parser.add_argument("--save", type=Path, help="also write every result as JSON to this file")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--json-out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    if args.compare and not args.upsert_n:
        args.upsert_n = 100
    by_size: dict[int, dict[str, dict[str, Any]]] = {z: {} for z in args.sizes}
    left_out: list[str] = []
    ready = []
    for backend in args.backends:
        why = configure(backend)
        if why:
            left_out.append(f"{backend}: {why}")
        else:
            ready.append(backend)
    if args.compare:
        compare(args, ready, left_out)
        return
    stopped: set[str] = set()
    loads: list[float] = []  # the 1-minute load average before and after each backend's run
    command = "python bench/graph_backends.py " + " ".join(sys.argv[1:])
    if args.render:  # a saved run (--save), perhaps still going: its sections from what it finished
        saved = json.loads(args.render.read_text(encoding="utf-8"))
        by_size = {int(z): r for z, r in saved.items() if r}
        args.sizes = sorted(by_size)
        ready = [b for b in args.backends if any(b in r for r in by_size.values())]
        loads = [x for r in by_size.values() for got in r.values() for x in got.get("load_avg", [])]
        command = args.command or command
        left_out = [f"(this section was written from {args.render.name}, saved by that run; sizes and "
                    "backends it had not finished are absent)"]  # fmt: skip
    for size in [] if args.render else args.sizes:
        for backend in ready:  # each size: every backend in turn, in one run
            if backend in stopped:
                continue  # stopped at a smaller size: a larger one would not finish either
            configure(backend)
            loads.append(os.getloadavg()[0])
            got = run(
                backend, size, args.queries, args.work, args.embedder,
                load_budget_s=args.load_budget_s, recall_budget_s=args.recall_budget_s,
            )  # fmt: skip
            loads.append(os.getloadavg()[0])
            got["load_avg"] = loads[-2:]
            by_size[size][backend] = got
            if "stopped" in got:
                stopped.add(backend)
            print(f"{size} {backend}: done (load {got['load_s']:.0f} s)", flush=True)
            if args.save:
                args.save.write_text(json.dumps({str(z): r for z, r in by_size.items()}), encoding="utf-8")
    parts = []
    for size in args.sizes:
        text = table(by_size[size]) if by_size[size] else "(no backend ran: each stopped at a smaller size)"
        parts.append(f"#### {size:,} entities and {size * 3:,} facts in one scope\n\n{text}\n")
    if len(args.sizes) > 1 and ready:
        parts.append("#### Growth (ratio to the smallest size)\n\n" + growth(by_size) + "\n")
    text = "\n".join(parts)
    print(text)
    notes = "".join(f"\n- left out: {n}" for n in left_out)
    sizes = ", ".join(f"{z:,}" for z in args.sizes)
    body = (
        "### Graph backends: one recall workload on SQLite, HugeGraph (standalone and distributed) and "
        "Gremlin Server\n\n"
        + header(
            command,
            f"synthetic memory, {sizes} entities (3 facts each) in one scope per run, "
            f"{args.queries} queries (⅓ exact names, ⅓ summary words, ⅓ phrases; 50 from 50k entities on), "
            f"embedder {args.embedder}; "
            + "; ".join(DESCRIBED[b]() for b in ready if b in DESCRIBED)
            + "; all on this machine",
        )
        + (
            f"- 1-minute load average, sampled before and after each run: {min(loads):.1f}–{max(loads):.1f}\n"
            if loads
            else ""
        )
        + notes
        + "\n\nStage timings come from the envelope; lexical (tantivy) and vector (qdrant-edge) legs are "
        "embedded for every backend, so the differences are the graph's. Round trips are requests on the "
        "Gremlin connection (retries included). Bulk load = `remember` of the entities then the facts in "
        f"chunks of {CHUNK:,} (graph + both indexes).\n\n" + text + "\n"
    )
    if not args.no_write:
        write_section(args.section, body)


if __name__ == "__main__":
    main()
