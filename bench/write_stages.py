"""Where a write's time goes under read load, in one process (no HTTP): W writer threads call
`remember` (one entity a call) beside R reader threads (recall / explain) on the demo memory for a
bounded time, with the write path's stages timed (group-commit batch, graph apply, journal, index
sync, Tantivy write + commit, embedding + vector upsert), in wall time and in the calling thread's own
CPU time (the difference is waiting: for I/O, or for the interpreter lock and a core). Prints p50 / p95
per stage and the load average; writes nothing to docs/results.md (a probe to read beside bench/soak.py).

    python bench/write_stages.py --readers 24 --writers 8 --duration 20 [--read-slots 4]
"""

from __future__ import annotations

import argparse
import collections
import functools
import os
import random
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from service_load import demo_store

from graphctx import writes
from graphctx.adapters.flat import index as flat
from graphctx.adapters.tantivy import index as tantivy
from graphctx.errors import GraphctxError
from graphctx.service import ContextService
from graphctx.settings import Settings

TIMES: dict[str, list[float]] = collections.defaultdict(list)
CPU: dict[str, list[float]] = collections.defaultdict(list)
"""The calling thread's own CPU time in each timed call (time.thread_time): wall minus CPU is waiting,
for I/O (fsync) or for the interpreter lock and a core."""
LOCK = threading.Lock()


def timed(owner: Any, name: str, label: str) -> None:
    original = getattr(owner, name)

    @functools.wraps(original)
    def call(*args: Any, **kwargs: Any) -> Any:
        started, cpu = time.perf_counter(), time.thread_time()
        try:
            return original(*args, **kwargs)
        finally:
            with LOCK:
                TIMES[label].append((time.perf_counter() - started) * 1000)
                CPU[label].append((time.thread_time() - cpu) * 1000)

    setattr(owner, name, call)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--readers", type=int, default=24)
    parser.add_argument("--writers", type=int, default=8)
    parser.add_argument("--duration", type=float, default=20.0)
    parser.add_argument("--read-slots", type=int, default=0, help="settings.read_concurrency")
    parser.add_argument("--index-flush-ms", type=float, default=100.0, help="settings.index_flush_ms")
    parser.add_argument(
        "--switch-interval-ms", type=float, default=0.0, help="sys.setswitchinterval (0: Python's own, 5 ms)"
    )
    args = parser.parse_args()
    if args.switch_interval_ms > 0:
        sys.setswitchinterval(args.switch_interval_ms / 1000)
    timed(ContextService, "_commit_writes", "group-commit batch")
    timed(writes, "apply_plan", "graph apply (one plan)")
    timed(writes.IndexSync, "sync", "index sync")
    timed(tantivy.TantivyLexicalIndex, "_write", "tantivy write + commit")
    timed(writes.IndexSync, "_upsert_vectors", "embed + vector upsert")
    timed(flat.FlatVectorIndex, "upsert", "vector upsert")
    data = Path(tempfile.mkdtemp(prefix="graphctx-stages-")) / "data"
    store = demo_store(data, "wordllama")
    settings = Settings(
        data_dir=data,
        embedder="wordllama",
        read_concurrency=args.read_slots,
        index_flush_ms=args.index_flush_ms,
    )
    with ContextService.open(settings) as svc:
        journal = type(svc.stores.journal)
        timed(journal, "record_write", "journal record")
        timed(journal, "complete_write", "journal complete")
        stop_at = time.monotonic() + args.duration

        def write(i: int) -> None:
            n = 0
            while time.monotonic() < stop_at:
                n += 1
                note = {"id": f"w{i}-{n}", "type": "note", "name": f"note {i} {n}", "summary": f"mark{i}x{n}"}
                started, cpu = time.perf_counter(), time.thread_time()
                svc.remember(store.scope, [note])
                with LOCK:
                    TIMES["remember (caller)"].append((time.perf_counter() - started) * 1000)
                    CPU["remember (caller)"].append((time.thread_time() - cpu) * 1000)

        def read(i: int) -> None:
            rng = random.Random(i)
            while time.monotonic() < stop_at:
                started, cpu = time.perf_counter(), time.thread_time()
                try:
                    if rng.random() < 0.3:
                        svc.explain(store.scope, rng.choice(store.names))
                    else:
                        svc.recall(store.scope, rng.choice(store.queries))
                except GraphctxError:
                    pass  # an ambiguous name or a budget refusal is an answer
                with LOCK:
                    TIMES["read (caller)"].append((time.perf_counter() - started) * 1000)
                    CPU["read (caller)"].append((time.thread_time() - cpu) * 1000)

        threads = [threading.Thread(target=write, args=(i,)) for i in range(args.writers)]
        threads += [threading.Thread(target=read, args=(i,)) for i in range(args.readers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    print(f"load average {os.getloadavg()[0]:.1f}; {args.writers} writers, {args.readers} readers, "
          f"read slots {args.read_slots or 'unlimited'}, index flush {args.index_flush_ms:g} ms, "
          f"switch interval {sys.getswitchinterval() * 1000:g} ms")  # fmt: skip
    for label, values in sorted(TIMES.items()):
        values.sort()
        p50, p95 = values[len(values) // 2], values[int(len(values) * 0.95)]
        cpu = sorted(CPU.get(label, []))
        own = f"  CPU p50 {cpu[len(cpu) // 2]:6.1f} ms, mean {sum(cpu) / len(cpu):6.1f} ms" if cpu else ""
        print(f"{label:28s} n={len(values):6d}  p50 {p50:7.1f} ms  p95 {p95:7.1f} ms{own}")


if __name__ == "__main__":
    main()
