"""Bounded soak of `graphctx serve` on the embedded default: N concurrent HTTP clients on loopback, a
share of them writing (`remember`: one entity and one fact a call), the rest reading (recall, explain),
for a bounded time. Every 30 s the server's RSS and open file descriptors are sampled; latencies are
reported per minute (median, p95). Afterwards the server is stopped and every acknowledged write is
checked in the graph, the lexical index and the vector index. `--modes` runs the same load once per
mode, one after the other, each on a fresh data directory: `on` / `off` are this tree with group commit
on / off (GRAPHCTX_GROUP_COMMIT); `main` is another source tree (`--baseline DIR`, for example
`git archive main | tar -x -C DIR`) with its defaults; `floor` is bench/_fastapi_floor.py (a bare
FastAPI endpoint answering every route at once, no stores) under the same load client: what the
client, loopback and uvicorn cost on their own on this machine. A mode may add settings for its server:
`on+GRAPHCTX_READ_CONCURRENCY=4+GRAPHCTX_INDEX_FLUSH_MS=0`. `graphctx serve` limits glibc's malloc arenas
to 2 unless MALLOC_ARENA_MAX is set (graphctx/arenas.py): `on+MALLOC_ARENA_MAX=16` is glibc's own
default on 2 cores (8 a core). The server's CPU per request (utime +
stime over the run / requests answered) and the load average are reported beside the latencies: the
clients are a closed loop with no think time, so on a saturated machine latency is mostly queueing
(about clients / throughput), not the work of one request.

    python bench/soak.py --duration 180 --modes floor,main,on --baseline /tmp/graphctx-main --write

`--tracemalloc FRAMES` (off by default) traces the server's Python allocations from its start
(bench/_tracemalloc_site, a sitecustomize put on its PYTHONPATH; not in the `main` mode), takes a
snapshot at the end of the warm-up and one at the end of the load, and reports where the traced
memory grew in between (top lines and files); tracemalloc's own memory is reported beside it, since
RSS includes it. Results go to docs/results.md only with --write (`--section NAME`: between
`<!-- bench:NAME -->` markers, `soak` by default). Exits 1 on an error, a lost write or a stuck client.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import tempfile
import threading
import time
import tracemalloc
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from _report import header, percentile, write_section
from service_load import _tree_cpu_s, connect, demo_store, free_port, layout, start, stop

from graphctx.cli import DEMO_QUERIES
from graphctx.demo import sample_path
from graphctx.kernel.reads import batches
from graphctx.kernel.templates import ENTITY_GET, EntityGetParams
from graphctx.scope import Scope
from graphctx.service import ContextService
from graphctx.settings import Settings

SAMPLE_S = 30.0
TRACEMALLOC_SITE = Path(__file__).resolve().parent / "_tracemalloc_site"
SNAPSHOT_TIMEOUT_S = 120.0
EXPLAIN_SHARE = 0.3
SCOPE = Scope("demo", "default")
_LOGGED = re.compile(r"request (?P<rid>[0-9A-Za-z_-]+)(?: failed)?:?(?P<cause>.*)$")
"""The served surface's log line of a failed request (core/transports/http.py)."""
SHED = "over_capacity"
"""The served surface's admission control refusing a request past its concurrency limit (a typed 503
with Retry-After): counted apart from errors."""


@dataclass
class Run:
    mode: str
    started: float = field(default_factory=time.monotonic)
    lock: threading.Lock = field(default_factory=threading.Lock)
    calls: list[tuple[float, str, float]] = field(default_factory=list)
    """(seconds since start, read|write, ms) of each successful call."""
    errors: dict[str, int] = field(default_factory=dict)
    failures: list[tuple[str, str]] = field(default_factory=list)
    """(what, request id) of each error response that carried a request id."""
    causes: dict[str, int] = field(default_factory=dict)
    """Each error response's code with the server log's cause under its request id, counted."""
    acked: list[str] = field(default_factory=list)
    samples: list[tuple[float, int, int]] = field(default_factory=list)
    """(seconds since start, RSS bytes, open fds) of the server."""
    cpu_s: float = 0.0
    """The server's CPU seconds (utime + stime) over the load."""
    load: tuple[float, float] = (0.0, 0.0)
    """The 1-minute load average at the start and at the end of the load."""
    snapshots: list[Path] = field(default_factory=list)
    """tracemalloc snapshots of the server (--tracemalloc): at the end of the warm-up, at the end."""
    split: list[str] = field(default_factory=list)
    """What the snapshots say grew in between (report lines)."""

    def ok(self, kind: str, ms: float, written: str | None = None) -> None:
        with self.lock:
            self.calls.append((time.monotonic() - self.started, kind, ms))
            if written:
                self.acked.append(written)

    def error(self, what: str, response: httpx.Response | None = None) -> None:
        with self.lock:
            self.errors[what] = self.errors.get(what, 0) + 1
            rid = response.headers.get("x-request-id") if response is not None else None
            if rid and SHED not in what:
                self.failures.append((what, rid))


def _code(response: httpx.Response) -> str:
    try:
        return str(response.json()["error"]["code"])
    except (ValueError, KeyError, TypeError):
        return "?"


def writer(http: httpx.Client, run: Run, index: int, ids: list[str], stop_at: float) -> None:
    rng = random.Random(index)
    n = 0
    while time.monotonic() < stop_at:
        n += 1
        eid = f"soak-{index}-{n}"
        body = {
            "entities": [
                {
                    "id": eid,
                    "type": "note",
                    "name": f"soak note {index} {n}",
                    "summary": f"soakmark{index}x{n} written by client {index} of the soak",
                }
            ],
            "facts": [{"subject_id": eid, "predicate": "relates_to", "object_id": rng.choice(ids)}],
        }
        started = time.perf_counter()
        try:
            response = http.post("/v1/remember", json=body)
        except httpx.HTTPError as exc:
            run.error(f"remember {type(exc).__name__}")
            continue
        ms = (time.perf_counter() - started) * 1000
        if response.status_code == 200:
            run.ok("write", ms, eid)
        else:
            run.error(f"remember HTTP {response.status_code} {_code(response)}", response)


def reader(http: httpx.Client, run: Run, index: int, names: list[str], stop_at: float) -> None:
    rng = random.Random(1000 + index)
    queries = [*DEMO_QUERIES, *names]
    while time.monotonic() < stop_at:
        if rng.random() < EXPLAIN_SHARE:
            op, body = "explain", {"name": rng.choice(names)}
        else:
            op, body = "recall", {"query": rng.choice(queries), "depth": rng.choice((1, 1, 2))}
        started = time.perf_counter()
        try:
            response = http.post(f"/v1/{op}", json=body)
        except httpx.HTTPError as exc:
            run.error(f"{op} {type(exc).__name__}")
            continue
        ms = (time.perf_counter() - started) * 1000
        # an ambiguous demo name and an envelope over the default budget are typed, correct answers
        if response.status_code in {200, 409}:
            run.ok("read", ms)
        else:
            run.error(f"{op} HTTP {response.status_code} {_code(response)}", response)


def sampler(pid: int, run: Run, stop: threading.Event, every: float) -> None:
    while True:
        try:
            status = Path(f"/proc/{pid}/status").read_text()
            rss = next(
                int(line.split()[1]) * 1024 for line in status.splitlines() if line.startswith("VmRSS")
            )
            fds = len(os.listdir(f"/proc/{pid}/fd"))
            run.samples.append((time.monotonic() - run.started, rss, fds))
        except (OSError, StopIteration):
            pass
        if stop.wait(every):
            return


def snapshot(pid: int, where: Path, run: Run) -> None:
    """Ask the server for a tracemalloc snapshot (SIGUSR1) and wait until it is written."""
    path = where / f"snapshot-{len(run.snapshots)}.pickle"
    os.kill(pid, signal.SIGUSR1)
    deadline = time.monotonic() + SNAPSHOT_TIMEOUT_S
    while not path.exists():
        if time.monotonic() > deadline:
            raise SystemExit(f"the server wrote no tracemalloc snapshot within {SNAPSHOT_TIMEOUT_S:.0f} s")
        time.sleep(0.2)
    run.snapshots.append(path)


def _site(filename: str) -> str:
    """A file of the tree, a library or the standard library, without the machine's paths."""
    for marker, shown in (("site-packages/", ""), ("/core/", "core/"), ("/adapters/", "adapters/")):
        if marker in filename:
            return shown + filename.rsplit(marker, 1)[1]
    if "/lib/python3" in filename:
        return "stdlib/" + filename.split("/lib/python3", 1)[1].split("/", 1)[-1]
    return filename


def tracemalloc_split(run: Run, top: int = 10) -> list[str]:
    """Where the server's traced Python memory grew between the warm-up and the end."""
    if len(run.snapshots) < 2:
        return []
    ignore = [tracemalloc.Filter(False, tracemalloc.__file__), tracemalloc.Filter(False, "<frozen *>")]
    warm, end = (tracemalloc.Snapshot.load(str(p)).filter_traces(ignore) for p in run.snapshots[:2])
    meta = [json.loads(p.with_suffix(".json").read_text()) for p in run.snapshots[:2]]
    mib = 2**20
    lines = [
        f"- {run.mode}, tracemalloc ({warm.traceback_limit} frame): Python-traced memory "
        f"{meta[0]['traced'] / mib:.1f} MiB at the end of the warm-up, {meta[1]['traced'] / mib:.1f} MiB "
        f"at the end ({(meta[1]['traced'] - meta[0]['traced']) / mib:+.1f} MiB); tracemalloc's own "
        f"memory (in the RSS) {meta[0]['overhead'] / mib:.1f} / {meta[1]['overhead'] / mib:.1f} MiB"
    ]
    for key, label in (("filename", "files"), ("lineno", "lines")):
        stats = sorted(end.compare_to(warm, key), key=lambda s: s.size_diff, reverse=True)[:top]
        grown = "; ".join(
            f"{_site(str(s.traceback[0].filename))}"
            + (f":{s.traceback[0].lineno}" if key == "lineno" else "")
            + f" {s.size_diff / mib:+.2f} MiB ({s.count_diff:+,} blocks; {s.size / mib:.2f} MiB in all)"
            for s in stats
        )
        lines.append(f"  - grew most, by {label}: {grown}")
    return lines


def explain_errors(run: Run, log: Path, data: Path) -> None:
    """What the server's log says under the request id of each error response (the causes, counted)."""
    text = log.read_text("utf-8", errors="replace") if log.exists() else ""
    said: dict[str, str] = {}
    for line in text.splitlines():
        m = _LOGGED.search(line)
        if m:
            said.setdefault(m["rid"], m["cause"].replace(str(data), "DATA").strip())
    for what, rid in run.failures:
        cause = f"{what} <- {said.get(rid, 'nothing in the server log under its request id')[:300]}"
        run.causes[cause] = run.causes.get(cause, 0) + 1


def check_writes(data_dir: Path, embedder: str, acked: list[str]) -> dict[str, int]:
    """Acknowledged writes missing from each store, read after the server stopped."""
    settings = Settings(data_dir=data_dir, embedder=embedder)
    with ContextService.open(settings, mode="read") as service:
        in_graph: set[str] = set()
        for ids in batches(acked, 1000):
            found = service.stores.graph.run(ENTITY_GET, SCOPE, EntityGetParams(ids=tuple(ids)))
            in_graph.update(e.id for e in found.entities)
        lexical = service.stores.lexical.hashes(SCOPE)
        vector = service.stores.vector.hashes(SCOPE) if service.stores.vector is not None else {}
    wanted = set(acked)
    return {
        "graph": len(wanted - in_graph),
        "lexical": len(wanted - set(lexical)),
        "vector": len(wanted - set(vector)),
    }


def soak(
    mode: str, work: Path, args: argparse.Namespace, baseline: Path | None
) -> tuple[Run, dict[str, int], int, int]:
    data = work / mode / "data"
    store = demo_store(data, args.embedder)
    ids = [
        r["id"]
        for r in map(json.loads, sample_path().read_text("utf-8").splitlines())
        if r.get("kind") == "entity"
    ]
    base, *overrides = mode.split("+")
    extra = dict(o.split("=", 1) for o in overrides)
    traces = work / mode / "tracemalloc"
    if args.tracemalloc and base in ("on", "off"):
        traces.mkdir(parents=True)
        path = os.pathsep.join(p for p in (str(TRACEMALLOC_SITE), os.environ.get("PYTHONPATH")) if p)
        extra |= {
            "PYTHONPATH": path,
            "GRAPHCTX_BENCH_TRACEMALLOC": str(traces),
            "GRAPHCTX_BENCH_TRACEMALLOC_FRAMES": str(args.tracemalloc),
        }
    os.environ["GRAPHCTX_GROUP_COMMIT"] = "0" if base == "off" else "1"
    os.environ.update(extra)
    port = free_port()
    kind = "floor" if base == "floor" else "graphctx"
    log = work / mode / "server.log"
    try:
        proc = start(
            kind, args.workers, store, args.embedder, port, baseline if base == "main" else None, log=log
        )
    finally:
        for name in extra:
            os.environ.pop(name, None)
    writers = max(1, round(args.clients * args.write_share))
    run = Run(mode)
    stop_event = threading.Event()
    try:
        url = f"http://127.0.0.1:{port}"
        clients = [connect(url, store, i) for i in range(args.clients)]
        run.load = (os.getloadavg()[0], 0.0)
        cpu = _tree_cpu_s(proc.pid)
        stop_at = time.monotonic() + args.duration
        run.started = time.monotonic()
        watch = threading.Thread(target=sampler, args=(proc.pid, run, stop_event, args.sample), daemon=True)
        watch.start()

        def client(i: int) -> None:
            http = clients[i]
            try:
                if i < writers:
                    writer(http, run, i, ids, stop_at)
                else:
                    reader(http, run, i, store.names, stop_at)
            finally:
                http.close()

        threads = [threading.Thread(target=client, args=(i,)) for i in range(args.clients)]
        for t in threads:
            t.start()
        if traces.is_dir():
            time.sleep(max(0.0, run.started + args.warmup - time.monotonic()))
            snapshot(proc.pid, traces, run)
        for t in threads:
            t.join(args.duration + 120)
        stuck = sum(t.is_alive() for t in threads)
        if traces.is_dir():
            snapshot(proc.pid, traces, run)
        run.cpu_s = _tree_cpu_s(proc.pid) - cpu
        run.load = (run.load[0], os.getloadavg()[0])
        stop_event.set()
        watch.join(5)
    finally:
        stop_event.set()
        exit_status = stop(proc)
    explain_errors(run, log, data)
    if base == "floor":
        return run, {"graph": 0, "lexical": 0, "vector": 0}, stuck, exit_status
    if args.keep_logs:
        shutil.copy(log, args.keep_logs / f"soak-{mode}.log")
    missing = check_writes(data, args.embedder, run.acked)
    run.split = tracemalloc_split(run)
    return run, missing, stuck, exit_status


def _minutes(run: Run, duration: float) -> list[str]:
    rows = []
    minutes = max(1, round(duration / 60))

    def minute_of(t: float) -> int:  # calls answered after the end count in the last minute
        return min(int(t // 60), minutes - 1)

    for minute in range(minutes):
        reads = [ms for t, k, ms in run.calls if k == "read" and minute_of(t) == minute]
        writes = [ms for t, k, ms in run.calls if k == "write" and minute_of(t) == minute]
        rows.append(
            f"| {run.mode} | {minute + 1} | {len(reads):,} | {percentile(reads, 0.5):.0f} / "
            f"{percentile(reads, 0.95):.0f} | {len(writes):,} | {percentile(writes, 0.5):.0f} / "
            f"{percentile(writes, 0.95):.0f} |"
        )
    return rows


def _memory(run: Run, warmup: float) -> tuple[str, float]:
    if not run.samples:
        return "no samples", float("nan")
    warm = [s for s in run.samples if s[0] >= warmup] or run.samples
    first, last = warm[0], run.samples[-1]
    growth = (last[1] - first[1]) / first[1] * 100
    series = ", ".join(f"{t:.0f} s: {rss / 2**20:.0f} MiB / {fds} fds" for t, rss, fds in run.samples)
    return series, growth


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--write-share", type=float, default=0.25, help="Share of the clients that write.")
    parser.add_argument("--duration", type=float, default=180.0, help="Seconds of load per mode.")
    parser.add_argument("--sample", type=float, default=SAMPLE_S, help="Seconds between RSS / fd samples.")
    parser.add_argument("--warmup", type=float, default=30.0, help="RSS growth is measured from here on.")
    parser.add_argument(
        "--modes", default="on,off", help="Comma-separated: on, off, main (needs --baseline), floor."
    )
    parser.add_argument(
        "--workers", type=int, default=1, help="serve --workers (1: one process; N: a writer + N readers)"
    )
    parser.add_argument("--baseline", type=Path, help="another graphctx source tree, the `main` mode")
    parser.add_argument("--embedder", default="wordllama")
    parser.add_argument(
        "--tracemalloc",
        type=int,
        default=0,
        metavar="FRAMES",
        help="Trace the server's allocations with this many frames (0, the default: off); on/off modes.",
    )
    parser.add_argument(
        "--keep-logs", type=Path, metavar="DIR", help="Copy each mode's server log here (soak-MODE.log)."
    )
    parser.add_argument("--write", action="store_true", help="Write the results to docs/results.md.")
    parser.add_argument("--section", default="soak", help="The docs/results.md section --write replaces.")
    args = parser.parse_args()
    if not 0 <= args.tracemalloc <= 100:
        raise SystemExit("--tracemalloc takes a number of frames in 0..100")
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if not modes or any(m.split("+")[0] not in ("on", "off", "main", "floor") for m in modes):
        raise SystemExit("--modes takes a comma-separated list of on, off, main, floor")
    if any(m.split("+")[0] == "main" for m in modes) and args.baseline is None:
        raise SystemExit("the main mode needs --baseline DIR")

    if args.keep_logs:
        args.keep_logs.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="graphctx-soak-"))
    baseline = layout(args.baseline) if args.baseline else None
    results = []
    try:
        for mode in modes:
            results.append(soak(mode, work, args, baseline))
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if baseline is not None:
            shutil.rmtree(baseline, ignore_errors=True)

    summary_rows, minute_rows, memory_lines = [], [], []
    failed = False
    for run, missing, stuck, exit_status in results:
        reads = [ms for _, k, ms in run.calls if k == "read"]
        writes = [ms for _, k, ms in run.calls if k == "write"]
        series, growth = _memory(run, args.warmup)
        shed = sum(v for k, v in run.errors.items() if SHED in k)
        errors = sum(run.errors.values()) - shed
        lost = max(missing.values())
        failed |= bool(errors or lost or stuck)
        summary_rows.append(
            f"| {run.mode} | {len(reads):,} | {percentile(reads, 0.5):.0f} / {percentile(reads, 0.95):.0f} | "
            f"{len(writes):,} | {len(writes) / args.duration:.1f} | {percentile(writes, 0.5):.0f} / "
            f"{percentile(writes, 0.95):.0f} / {percentile(writes, 0.99):.0f} | "
            f"{run.cpu_s * 1000 / max(1, len(reads) + len(writes)):.1f} | {errors} | {shed} | "
            f"{missing['graph']} / {missing['lexical']} / {missing['vector']} | {growth:+.1f} % | "
            f"{run.load[0]:.1f} / {run.load[1]:.1f} |"
        )
        minute_rows += _minutes(run, args.duration)
        error_text = ", ".join(f"{k}: {v}" for k, v in sorted(run.errors.items())) or "none"
        memory_lines.append(
            f"- {run.mode}: RSS / open fds every {args.sample:g} s: {series}; "
            f"errors: {error_text}; "
            f"clients stuck: {stuck}; server exit status after SIGTERM: {exit_status}"
        )
        if run.causes:
            memory_lines.append(
                f"  - {run.mode}, the cause of each error response (its code <- the server log under its "
                "request id): " + "; ".join(f"{c} ({n})" for c, n in sorted(run.causes.items()))
            )
        memory_lines += run.split
    writers = max(1, round(args.clients * args.write_share))
    command = (
        f"python bench/soak.py --clients {args.clients} --write-share {args.write_share:g} "
        f"--workers {args.workers} "
        f"--duration {args.duration:g} --modes {','.join(modes)}"
        + (" --baseline DIR" if args.baseline else "")
        + (f" --tracemalloc {args.tracemalloc}" if args.tracemalloc else "")
        + (f" --section {args.section}" if args.section != "soak" else "")
        + " --write"
    )
    body = (
        "### Soak: `graphctx serve` under mixed reads and writes (embedded default)\n\n"
        + header(
            command,
            f"the demo memory, embedder {args.embedder}; `serve --workers {args.workers}`; "
            f"{args.clients} clients on loopback (one keep-alive "
            f"httpx connection each), {writers} writing (`remember`: one entity + one fact a call, as fast "
            f"as answered), the others reading ({int((1 - EXPLAIN_SHARE) * 100)} % recall, "
            f"{int(EXPLAIN_SHARE * 100)} % explain); {args.duration:g} s per mode, modes run one after the "
            "other, each on a fresh data directory",
        )
        + "\nLatency is measured by the client around each request. Shed requests are the served surface's "
        "typed 503 `over_capacity` (admission control, docs/operations.md), counted apart. Lost writes "
        "are acknowledged writes "
        "missing afterwards from the graph / lexical / vector store. RSS growth is from the first sample "
        f"after {args.warmup:g} s to the last. The server and all clients share the machine's 2 cores "
        "(and other engineers' jobs), so compare the modes with each other, not with other tables.\n\n"
        "Modes: `on` / `off` this tree with group commit on / off, `main` the baseline tree, `floor` a "
        "bare FastAPI endpoint (bench/_fastapi_floor.py, no stores) under the same clients.\n\n"
        "| mode | reads | read p50 / p95 ms | writes | writes/s | write p50 / p95 / p99 ms | "
        "server CPU ms / request | errors | shed (503) | lost (graph / lexical / vector) | "
        "RSS growth after warm-up | load avg start / end |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|---|\n"
        + "\n".join(summary_rows)
        + "\n\nPer minute:\n\n"
        "| mode | minute | reads | read p50 / p95 ms | writes | write p50 / p95 ms |\n"
        "|---|---|---|---|---|---|\n" + "\n".join(minute_rows) + "\n\n" + "\n".join(memory_lines) + "\n"
    )
    print(body)
    if args.write:
        write_section(args.section, body)
    if failed:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
