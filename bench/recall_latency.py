"""Recall latency on the embedded default: synthetic memory at several sizes per scope, several
tenants in one store; p50/p95/p99 per stage and end to end, beside the floor: every store operation a
recall made (exact lookup, BM25, query embedding, dense search, hydration, expansion), recorded
during the call and replayed bare right after it in the same run, summed. Prints; writes its section
of docs/results.md only with --write.

    python bench/recall_latency.py --sizes 10000 100000 --tenants 3 --queries 200 --write
    python bench/recall_latency.py --sizes 100000 --keep --work /tmp/rl   # load once, then re-run on it
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from _report import header, median, percentile, summary, write_section

from graphctx.kernel.ports import Capabilities
from graphctx.kernel.templates import ENTITY_NAMES
from graphctx.scope import Scope
from graphctx.service import ContextService
from graphctx.settings import Settings

STAGES = ("exact", "legs", "hydrate", "fuse", "expand", "budget", "total")
CHUNK = 50_000
KINDS = ("service", "team", "person", "incident", "decision", "datastore", "host")
PREDICATES = ("depends_on", "owned_by", "relates_to", "affected", "member_of", "runs_on")


def vocabulary(rng: random.Random, n: int = 6000) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = {"".join(rng.choice(letters) for _ in range(rng.randint(3, 9))) for _ in range(n * 2)}
    return sorted(words)[:n]


def zipf_word(rng: random.Random, vocab: list[str]) -> str:
    return vocab[min(int(rng.paretovariate(1.1)) - 1, len(vocab) - 1)]


def make_scope_data(rng: random.Random, vocab: list[str], size: int):
    entities, facts = [], []
    for i in range(size):
        kind = KINDS[i % len(KINDS)]
        name = "-".join(zipf_word(rng, vocab) for _ in range(rng.randint(2, 3))) + f"-{i}"
        summary = " ".join(zipf_word(rng, vocab) for _ in range(rng.randint(12, 30)))
        entities.append(
            {"id": f"e{i}", "name": name, "type": kind, "aliases": [f"{kind[:3]}{i}"], "summary": summary}
        )
    for i in range(size):
        for _ in range(3):
            facts.append(
                {
                    "subject_id": f"e{i}",
                    "predicate": rng.choice(PREDICATES),
                    "object_id": f"e{rng.randrange(size)}",
                }
            )
    return entities, facts


def queries(rng: random.Random, entities: list[dict], n: int) -> list[str]:
    out = []
    for i in range(n):
        e = rng.choice(entities)
        if i % 3 == 0:
            out.append(e["name"])  # exact identifier
        elif i % 3 == 1:
            out.append(" ".join(e["summary"].split()[:3]))  # words from a summary
        else:
            out.append(f"who owns {e['name'].split('-')[0]}")  # natural-language-ish
    return out


class Recorder:
    """Stands in for one store: records each call of the named methods (the dense leg calls from
    its own thread; list.append is atomic) and passes everything else through."""

    def __init__(self, inner: Any, label: str, methods: tuple[str, ...], calls: list[tuple]) -> None:
        self._inner, self._label, self._methods, self._calls = inner, label, methods, calls

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        if name not in self._methods:
            return attr

        def recorded(*args: Any, **kwargs: Any) -> Any:
            what = f"{self._label} {args[0].name}" if name == "run" else f"{self._label} {name}"
            self._calls.append((what, attr, args, kwargs))
            return attr(*args, **kwargs)

        return recorded


class WithoutNames:
    """The same graph store, not declaring entity.names: expansion hydrates whole entities."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    @property
    def capabilities(self) -> Capabilities:
        real = self._inner.capabilities
        return Capabilities(templates=real.templates - {ENTITY_NAMES.name}, durable=real.durable)


def names_ab(service: ContextService, scope: Scope, qs: list[str]) -> str:
    """Expansion naming fact ends through entity.names vs whole entities: every query run both
    ways, the order alternating, in one process; medians of the envelope's stage timings."""
    real = service.stores.graph
    ways = {"entity.names": real, "whole entities": WithoutNames(real)}
    got: dict[str, dict[str, list[float]]] = {w: {"expand": [], "total": []} for w in ways}
    try:
        for n, q in enumerate(qs):
            for way in list(ways) if n % 2 == 0 else list(ways)[::-1]:
                service.stores.graph = ways[way]  # type: ignore[assignment]
                env = service.recall(scope, q)
                for stage in ("expand", "total"):
                    got[way][stage].append(env["timings_ms"][stage])
    finally:
        service.stores.graph = real
    rows = [f"| {w} | {summary(d['expand'])} | {summary(d['total'])} |" for w, d in got.items()]
    ratio = median(got["entity.names"]["expand"]) / median(got["whole entities"]["expand"])
    return (
        "Naming the far ends of facts (same queries, each run both ways, alternating):\n\n"
        "| expansion names through | expand p50 / p95 / p99 ms | total p50 / p95 / p99 ms |\n|---|---|---|\n"
        + "\n".join(rows)
        + f"\n\nexpand median ratio entity.names ÷ whole entities: {ratio:.2f}×.\n"
    )


def record(service: ContextService) -> tuple[list[tuple], dict[str, Any]]:
    stores, calls = service.stores, []
    originals = {"graph": stores.graph, "lexical": stores.lexical}
    stores.graph = Recorder(stores.graph, "graph", ("run",), calls)  # type: ignore[assignment]
    stores.lexical = Recorder(stores.lexical, "bm25", ("search",), calls)  # type: ignore[assignment]
    if stores.vector is not None and stores.embedder is not None:
        originals |= {"vector": stores.vector, "embedder": stores.embedder}
        stores.vector = Recorder(stores.vector, "dense", ("search",), calls)  # type: ignore[assignment]
        stores.embedder = Recorder(stores.embedder, "embed", ("embed",), calls)  # type: ignore[assignment]
    return calls, originals


def replay(calls: list[tuple], parts: dict[str, list[float]]) -> float:
    """Each recorded operation called again, bare and one after the other; the sum in ms."""
    total = 0.0
    mine: dict[str, float] = {}
    for what, fn, args, kwargs in calls:
        t0 = time.perf_counter()
        fn(*args, **kwargs)
        ms = (time.perf_counter() - t0) * 1000
        total += ms
        mine[what] = mine.get(what, 0.0) + ms
    for what, ms in mine.items():
        parts.setdefault(what, []).append(ms)
    return total


WARM_UP = 50
"""Recalls before the timed ones, with other queries than the timed ones (no answer is memoised)."""


def warm_up(
    service: ContextService, scope: Scope, qs: list[str], size: int, timeout_s: float = 120.0
) -> None:
    """A running server's steady state: pages and mappings touched, and the dense leg's background
    work (the flat index's int8 codes, built once a large scope has been searched twice) finished,
    so that no timed recall shares the cores with it."""
    for q in qs:
        service.recall(scope, q)
    min_rows = getattr(service.stores.vector, "codes_min_rows", 0)  # the flat index's threshold
    if not 0 < min_rows <= size:
        return
    deadline = time.monotonic() + timeout_s
    while service.memory()["caches"].get("flat_codes", {}).get("bytes", 0) == 0:
        if time.monotonic() > deadline:
            raise SystemExit(f"the dense leg's codes were not built within {timeout_s:.0f} s")
        time.sleep(0.05)


def run(
    size: int, tenants: int, n_queries: int, work: Path, embedder: str, keep: bool = False
) -> tuple[str, float]:
    rng = random.Random(size)
    vocab = vocabulary(rng)
    data_dir = work / f"recall-{size}"
    marker = data_dir / "loaded.json"
    loaded = {"size": size, "tenants": tenants, "embedder": embedder}
    reuse = keep and marker.exists() and json.loads(marker.read_text()).get("load") == loaded
    if not reuse:
        shutil.rmtree(data_dir, ignore_errors=True)
    settings = Settings(data_dir=data_dir, embedder=embedder)
    with ContextService.open(settings) as service:
        started = time.perf_counter()
        first: list[dict] = []
        for t in range(tenants):
            entities, facts = make_scope_data(random.Random(size * 100 + t), vocab, size)
            first = first or entities
            if reuse:
                continue
            for i in range(0, len(entities), CHUNK):  # one call holds at most 100k records (the bound)
                service.remember(Scope(f"tenant-{t}"), entities[i : i + CHUNK])
            for i in range(0, len(facts), CHUNK):
                service.remember(Scope(f"tenant-{t}"), facts=facts[i : i + CHUNK])
        load_s = time.perf_counter() - started
        if reuse:
            load_s = json.loads(marker.read_text())["load_s"]
        elif keep:
            marker.write_text(json.dumps({"load": loaded, "load_s": load_s}))
        scope = Scope("tenant-0")
        qs = queries(random.Random(1), first, n_queries)
        warm_up(service, scope, queries(random.Random(2), first, WARM_UP), size)
        timings: dict[str, list[float]] = {s: [] for s in STAGES}
        wall: list[float] = []
        floor: list[float] = []
        ratio: list[float] = []
        parts: dict[str, list[float]] = {}
        calls, originals = record(service)
        try:
            for q in qs:
                calls.clear()
                t0 = time.perf_counter()
                env = service.recall(scope, q)
                wall.append((time.perf_counter() - t0) * 1000)
                for s in STAGES:
                    timings[s].append(env["timings_ms"][s])
                floor.append(replay(list(calls), parts))
                ratio.append(wall[-1] / floor[-1])
        finally:
            for name, store in originals.items():
                setattr(service.stores, name, store)
        ab = names_ab(service, scope, qs)
    rows = [f"| {s} | {summary(timings[s])} |" for s in STAGES]
    rows.append(f"| wall (client side) | {summary(wall)} |")
    rows.append(f"| **floor** (the same operations replayed bare, summed) | {summary(floor)} |")
    rows += [
        f"| floor: {what} ({len(ms)} of {len(qs)} recalls) | {summary(ms)} |"
        for what, ms in sorted(parts.items())
    ]
    table = "| stage | p50 / p95 / p99 ms |\n|---|---|\n" + "\n".join(rows)
    text = (
        f"#### {size:,} entities per scope × {tenants} tenants ({size * tenants:,} entities, "
        f"{size * tenants * 3:,} facts; load {load_s:.0f} s)\n\n{table}\n\n"
        f"Wall ÷ floor: median per recall {median(ratio):.2f}×, p95 wall ÷ p95 floor "
        f"{percentile(wall, 0.95) / percentile(floor, 0.95):.2f}×.\n\n{ab}"
    )
    return text, load_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--tenants", type=int, default=3)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--embedder", default="wordllama")
    parser.add_argument("--work", type=Path, default=Path(__file__).parent / ".work")
    parser.add_argument("--write", action="store_true", help="write the section into docs/results.md")
    parser.add_argument(
        "--keep",
        action="store_true",
        help="keep each loaded store in --work and reuse it on the next run with the same size, tenants and "
        "embedder (the load time reported is the first run's)",
    )
    args = parser.parse_args()
    parts = []
    for size in args.sizes:
        text, _ = run(size, args.tenants, args.queries, args.work, args.embedder, args.keep)
        print(text, flush=True)
        parts.append(text)
    command = "python bench/recall_latency.py " + " ".join(sys.argv[1:])
    sizes = ", ".join(f"{s:,}" for s in args.sizes)
    body = (
        "### Recall latency (embedded default)\n\n"
        + header(
            command,
            f"synthetic memory, {sizes} entities per scope, {args.tenants} tenants, "
            f"{args.queries} queries (⅓ exact names, ⅓ summary words, ⅓ phrases), embedder {args.embedder}",
        )
        + f"\nTimed after {WARM_UP} recalls of other queries and once the dense leg's background work is "
        "done (a running server's steady state). Stage timings come from the envelope; wall is measured "
        "around the call. 1-minute load "
        f"average {os.getloadavg()[0]:.1f} at the end (the 2-core machine is shared; compare within one "
        "run). The floor skips the Python around the operations (fusion, isolation re-check, "
        "rendering, budget, models) and runs the two legs one after the other, as the issue defines it.\n\n"
        + "\n".join(parts)
    )
    print(body)
    if args.write:
        write_section("recall_latency", body)


if __name__ == "__main__":
    main()
