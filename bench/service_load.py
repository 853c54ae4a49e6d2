"""Load on the HTTP API, side by side in one run: `graphctx serve --workers N` (N = 1 and 2) beside a
minimal FastAPI endpoint (bench/_fastapi_floor.py, uvicorn with the same worker count) under the same
load client (threads, one keep-alive httpx connection each) at 1 / 8 / 32 clients, on the demo memory
and on a synthetic store of --entities entities. Reports req/s, p50/p95/p99, errors, the servers' own
CPU per request, and the ceiling "cores ÷ in-process CPU per call" (the same request mix called on
ContextService, no HTTP). Prints; writes docs/results.md only with --write.

`--baseline DIR` puts another source tree of graphctx (for example `git archive main | tar -x -C DIR`)
beside this one in the same run: its servers and its CPU per call run from DIR's code (through a
symlinked package layout, as .ci/layout builds it) on the same stores, interleaved with this tree's.

    python bench/service_load.py --entities 10000 --duration 8 --write
    python bench/service_load.py --baseline /tmp/graphctx-main --write
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from statistics import median
from typing import Any

import httpx
from _report import header, layout, percentile, write_section
from recall_latency import make_scope_data, queries, vocabulary

from graphctx import registry
from graphctx.auth import Principal
from graphctx.cli import DEMO_QUERIES
from graphctx.demo import sample_path
from graphctx.errors import GraphctxError
from graphctx.scope import Scope
from graphctx.service import ContextService
from graphctx.settings import Settings

START_TIMEOUT_S = 240.0
"""A server on a machine shared at load 30 took over 90 s to get ready."""
STOP_TIMEOUT_S = 20.0
EXPLAIN_SHARE = 0.3
LOAD_CHUNK = 5_000
BENCH = Path(__file__).resolve().parent
TICK = os.sysconf("SC_CLK_TCK")


@dataclass
class Store:
    label: str
    data_dir: Path
    scope: Scope
    tokens: list[str]
    names: list[str]
    queries: list[str]
    entities: int


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


KEYS = 32
"""One API key per client (up to 32): each key may have 16 requests in flight (the default
GRAPHCTX_HTTP_MAX_REQUESTS_PER_KEY); 32 clients on one key would measure that limit, not the server."""


def _keys(settings: Settings, scope: Scope) -> list[str]:
    keys = registry.factory("keys", settings.key_store_backend)(settings)
    try:
        return [
            keys.create(Principal(f"service-load-{i}", scope.tenant_id, (scope.namespace,))).token
            for i in range(KEYS)
        ]
    finally:
        keys.close()


def demo_store(data_dir: Path, embedder: str) -> Store:
    """The demo memory and a key; every store is closed before a server opens them."""
    scope = Scope("demo", "default")
    settings = Settings(data_dir=data_dir, embedder=embedder)
    with ContextService.open(settings) as service, sample_path().open(encoding="utf-8") as fh:
        service.remember_jsonl(scope, fh)
    names = [
        record["name"]
        for record in map(json.loads, sample_path().read_text(encoding="utf-8").splitlines())
        if record.get("kind") == "entity"
    ]
    asked = [*DEMO_QUERIES, *names, "who is on call for payments", "what changed in checkout"]
    return Store("demo memory", data_dir, scope, _keys(settings, scope), names, asked, len(names))


def synthetic_store(data_dir: Path, embedder: str, size: int) -> Store:
    """bench/recall_latency.py's synthetic memory: `size` entities and 3 facts each in one scope."""
    scope = Scope("tenant-0")
    rng = random.Random(size)
    entities, facts = make_scope_data(random.Random(size * 100), vocabulary(rng), size)
    settings = Settings(data_dir=data_dir, embedder=embedder)
    # chunks of 5,000 records: one remember of 10,000 ran past its deadline on a loaded machine
    with ContextService.open(settings) as service:
        for i in range(0, len(entities), LOAD_CHUNK):
            service.remember(scope, entities[i : i + LOAD_CHUNK])
        for i in range(0, len(facts), LOAD_CHUNK):
            service.remember(scope, facts=facts[i : i + LOAD_CHUNK])
    names = [e["name"] for e in entities[:2000]]
    asked = queries(random.Random(1), entities, 300)
    return Store(f"{size:,}-entity store", data_dir, scope, _keys(settings, scope), names, asked, size)


def request(rng: random.Random, store: Store) -> tuple[str, dict[str, object]]:
    if rng.random() < EXPLAIN_SHARE:
        return "explain", {"name": rng.choice(store.names)}
    return "recall", {"query": rng.choice(store.queries), "depth": rng.choice((1, 1, 2))}


def install_env(pythonpath: Path | None) -> dict[str, str]:
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def cpu_per_call(store: Store, embedder: str, calls: int, pythonpath: Path | None) -> float:
    """in_process_cpu_ms in a fresh process of the install (this tree's, or the baseline's)."""
    spec = {
        "data_dir": str(store.data_dir), "tenant": store.scope.tenant_id,
        "namespace": store.scope.namespace, "names": store.names, "queries": store.queries,
        "embedder": embedder, "calls": calls,
    }  # fmt: skip
    out = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--cpu-per-call", json.dumps(spec)],
        env=install_env(pythonpath),
        capture_output=True,
        text=True,
        check=True,
        cwd=BENCH,
    )
    return float(out.stdout.strip().splitlines()[-1])


def in_process_cpu_ms(store: Store, embedder: str, calls: int) -> float:
    """Process CPU per call of the same request mix called on the service directly (every thread of
    this process counted, the dense leg's included), after a short warm-up."""
    rng = random.Random(7)
    with ContextService.open(Settings(data_dir=store.data_dir, embedder=embedder)) as service:

        def one() -> None:
            op, body = request(rng, store)
            try:
                if op == "explain":
                    service.explain(store.scope, str(body["name"]))
                else:
                    service.recall(store.scope, str(body["query"]), depth=int(body["depth"]))  # type: ignore[call-overload]
            except GraphctxError:
                pass  # an ambiguous name or a budget refusal still cost the work

        for _ in range(20):
            one()
        cpu = time.process_time()
        for _ in range(calls):
            one()
        return (time.process_time() - cpu) * 1000 / calls


def _tree_cpu_s(pid: int) -> float:
    """utime + stime of a process and its live descendants (the server and its workers)."""
    total, todo = 0.0, [pid]
    while todo:
        p = todo.pop()
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / TICK
            for task in Path(f"/proc/{p}/task").iterdir():
                todo += [int(c) for c in (task / "children").read_text().split()]
        except (OSError, ValueError, IndexError):
            continue
    return total


def _acceptors(pid: int) -> list[int]:
    """The processes that take a server's connections: its workers (multiprocessing spawn children,
    for graphctx's readers and uvicorn's workers alike), or the server itself when it has none."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            try:
                cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
            except OSError:
                continue
            if b"spawn_main" in cmdline and b"resource_tracker" not in cmdline:
                found.append(int(child))
    return sorted(found) or [pid]


def split(pid: int, port: int) -> str:
    """Established connections to `port` held by each of the server's acceptors, most first: "4+4"."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "01":  # 01: ESTABLISHED
                inodes.add(f"socket:[{fields[9]}]")
    counts = []
    for acceptor in _acceptors(pid):
        held = 0
        for fd in Path(f"/proc/{acceptor}/fd").iterdir():
            with contextlib.suppress(OSError):
                held += os.readlink(fd) in inodes
        counts.append(held)
    return "+".join(map(str, sorted(counts, reverse=True)))


def split_midway(pid: int, port: int, after_s: float) -> Callable[[], str]:
    """Sample `split` once, `after_s` into a load point, from a thread; the returned call waits for it."""
    seen: list[str] = []
    sampler = threading.Timer(after_s, lambda: seen.append(split(pid, port)))
    sampler.start()

    def result() -> str:
        sampler.join()
        return seen[0] if seen else "?"

    return result


def start(
    kind: str,
    workers: int,
    store: Store,
    embedder: str,
    port: int,
    pythonpath: Path | None = None,
    log: Path | None = None,
) -> subprocess.Popen[bytes]:
    """Start a server; its stdout and stderr go to `log` when given (else nowhere)."""
    if kind == "graphctx":
        env = {**install_env(pythonpath), "GRAPHCTX_DATA_DIR": str(store.data_dir)}
        env["GRAPHCTX_EMBEDDER"] = embedder
        cmd = [sys.executable, "-m", "graphctx.cli", "serve", "--port", str(port)]
        cmd += ["--workers", str(workers), "--log-level", "warning"]
    else:
        env = dict(os.environ)
        cmd = [sys.executable, "-m", "uvicorn", "_fastapi_floor:app", "--app-dir", str(BENCH)]
        cmd += ["--port", str(port), "--workers", str(workers), "--log-level", "warning", "--no-access-log"]
    if log is None:
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    else:
        with log.open("ab") as out:  # the child keeps its own copy of the descriptor
            proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        if proc.poll() is not None:
            raise SystemExit(
                f"{kind} --workers {workers} exited with status {proc.returncode} before it was ready"
            )
        try:
            if httpx.get(url + "/readyz", timeout=2.0).status_code == 200:
                time.sleep(0.5 if workers > 1 else 0.0)  # every reader up (they share the socket)
                return proc
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            stop(proc)
            raise SystemExit(f"{kind} --workers {workers} was not ready within {START_TIMEOUT_S:.0f} s")
        time.sleep(0.1)


def stop(proc: subprocess.Popen[bytes]) -> int:
    proc.terminate()
    try:
        return proc.wait(STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait(STOP_TIMEOUT_S)


@dataclass
class Results:
    lock: threading.Lock = field(default_factory=threading.Lock)
    latency: list[float] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)

    def ok(self, ms: float) -> None:
        with self.lock:
            self.latency.append(ms)

    def error(self, what: str) -> None:
        with self.lock:
            self.errors[what] = self.errors.get(what, 0) + 1


def connect(url: str, store: Store, i: int = 0) -> httpx.Client:
    """One client's keep-alive connection, opened (and its first request answered) before timing: a
    new httpx.Client costs tens of ms of CPU, which 32 threads starting at once would count as load."""
    http = httpx.Client(
        base_url=url, headers={"Authorization": f"Bearer {store.tokens[i % KEYS]}"}, timeout=30.0
    )
    http.get("/readyz")
    return http


def client(http: httpx.Client, store: Store, seed: int, stop_at: float, results: Results) -> None:
    rng = random.Random(seed)
    while time.monotonic() < stop_at:
        op, body = request(rng, store)
        started = time.perf_counter()
        try:
            response = http.post(f"/v1/{op}", json=body)
        except httpx.HTTPError as exc:
            results.error(type(exc).__name__)
            continue
        ms = (time.perf_counter() - started) * 1000
        if response.status_code == 200 or (op == "explain" and response.status_code == 409):
            results.ok(ms)  # an ambiguous name is a correct answer, not an error
        else:
            try:
                code = response.json()["error"]["code"]
            except (ValueError, KeyError, TypeError):
                code = "?"
            results.error(f"{op} HTTP {response.status_code} {code}")


def load(url: str, store: Store, clients: int, duration: float, pid: int) -> dict[str, object]:
    results = Results()
    https = [connect(url, store, i) for i in range(clients)]
    stop_at = time.monotonic() + duration
    threads = [
        threading.Thread(target=client, args=(http, store, 1000 * clients + i, stop_at, results))
        for i, http in enumerate(https)
    ]
    cpu, loadavg = _tree_cpu_s(pid), os.getloadavg()[0]
    midway = split_midway(pid, int(url.rsplit(":", 1)[1]), duration / 2)
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join(duration + 60)
    elapsed = time.perf_counter() - started
    server_cpu = _tree_cpu_s(pid) - cpu
    for http in https:
        http.close()
    done = len(results.latency)
    return {
        "rps": done / elapsed,
        "p": [percentile(results.latency, q) for q in (0.5, 0.95, 0.99)],
        "errors": sum(results.errors.values()),
        "error_kinds": dict(results.errors),
        "stuck": sum(t.is_alive() for t in threads),
        "server_cpu_ms": server_cpu * 1000 / done if done else float("nan"),
        "load": loadavg,
        "split": midway(),
    }


WRK_SCRIPT = r"""
local queries = {%(queries)s}
local names = {%(names)s}
local tokens = {%(tokens)s}
local explain_share = %(explain)s
local counter = 0
errors = {}  -- a global: done() reads each thread's with thread:get
local threads = {}

function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end

function init(args)
  math.randomseed(1000 + id)
end

local function quote(text)
  return '"' .. text:gsub('[%%c"\\]', function(c) return string.format("\\u%%04x", c:byte()) end) .. '"'
end

function request()
  counter = counter + 1
  local headers = {
    ["Content-Type"] = "application/json",
    ["Authorization"] = "Bearer " .. tokens[(counter %% #tokens) + 1],
  }
  if math.random() < explain_share then
    local body = '{"name":' .. quote(names[math.random(#names)]) .. '}'
    return wrk.format("POST", "/v1/explain", headers, body)
  end
  local depth = (math.random(3) == 3) and 2 or 1
  local body = '{"query":' .. quote(queries[math.random(#queries)]) .. ',"depth":' .. depth .. '}'
  return wrk.format("POST", "/v1/recall", headers, body)
end

function response(status, headers, body)
  if status ~= 200 and status ~= 409 then  -- 409: an ambiguous name, a correct answer
    errors[status] = (errors[status] or 0) + 1
  end
end

function done(summary, latency, requests)
  local bad = 0
  for _, thread in ipairs(threads) do
    for status, n in pairs(thread:get("errors")) do bad = bad + n end
  end
  io.write(string.format("RESULT %%d %%f %%f %%f %%f %%d %%d\n", summary.requests, summary.duration / 1e6,
    latency:percentile(50) / 1e3, latency:percentile(95) / 1e3, latency:percentile(99) / 1e3,
    bad + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.errors.status))
end
"""


def _lua_list(values: list[str]) -> str:
    return ", ".join(json.dumps(v, ensure_ascii=False) for v in values)  # valid Lua strings too


def load_wrk(
    url: str, store: Store, clients: int, duration: float, pid: int, work: Path
) -> dict[str, object]:
    """The same mix from wrk (C, one thread per core, `clients` connections; API keys in turn per
    request): a load client that takes little of the cores the server needs."""
    script = work / "mix.lua"
    script.write_text(
        WRK_SCRIPT
        % {
            "queries": _lua_list(store.queries),
            "names": _lua_list(store.names),
            "tokens": _lua_list(store.tokens),
            "explain": EXPLAIN_SHARE,
        }
    )
    threads = max(1, min(clients, os.cpu_count() or 1))
    cpu, loadavg = _tree_cpu_s(pid), os.getloadavg()[0]
    argv = ["wrk", f"-t{threads}", f"-c{clients}", f"-d{duration:g}s", "--timeout", "30s", "-s", str(script)]
    midway = split_midway(pid, int(url.rsplit(":", 1)[1]), duration / 2)
    out = subprocess.run([*argv, url], capture_output=True, text=True, check=True).stdout
    server_cpu = _tree_cpu_s(pid) - cpu
    line = next(ln for ln in out.splitlines() if ln.startswith("RESULT "))
    done, seconds, p50, p95, p99, errors, non2xx = line.split()[1:]
    ok = int(done) - int(errors)
    return {
        "rps": ok / float(seconds),
        "p": [float(p50), float(p95), float(p99)],
        "errors": int(errors),
        "error_kinds": {f"non-2xx/409 or socket errors (wrk counted {non2xx} non-2xx)": int(errors)}
        if int(errors)
        else {},
        "stuck": 0,
        "server_cpu_ms": server_cpu * 1000 / ok if ok else float("nan"),
        "load": loadavg,
        "split": midway(),
    }


def combined(trials: list[dict[str, Any]]) -> dict[str, Any]:
    """One point's trials: medians, errors summed, every trial's split of the connections, worst p99."""

    def mid(values: list[float]) -> float:
        return sorted(values)[len(values) // 2]

    kinds: dict[str, int] = {}
    for t in trials:
        for kind, count in t["error_kinds"].items():
            kinds[kind] = kinds.get(kind, 0) + count
    return {
        "rps": mid([t["rps"] for t in trials]),
        "p": [mid([t["p"][i] for t in trials]) for i in range(3)],
        "worst_p99": max(t["p"][2] for t in trials),
        "errors": sum(t["errors"] for t in trials),
        "error_kinds": kinds,
        "stuck": sum(t["stuck"] for t in trials),
        "server_cpu_ms": mid([t["server_cpu_ms"] for t in trials]),
        "load": trials[0]["load"],
        "splits": ", ".join(t["split"] for t in trials),
    }


def measure(store: Store, args: argparse.Namespace, installs: dict[str, Path | None]) -> tuple[str, bool]:
    cores = os.cpu_count() or 1
    # the machine's speed drifts over a run (shared cores): the CPU per call is sampled before the
    # load and again after each worker count's points, and the ceiling is the median of the samples
    samples: dict[str, list[float]] = {name: [] for name in installs}

    def sample_cpu() -> None:
        for name, path in installs.items():
            samples[name].append(cpu_per_call(store, args.embedder, args.calls, path))

    sample_cpu()
    got: dict[tuple[str, int, int], dict[str, Any]] = {}
    exits: list[str] = []
    servers = [(name, path) for name, path in installs.items()] + [("FastAPI floor", None)]
    for workers in args.workers:
        for name, path in servers:
            kind = "fastapi" if name == "FastAPI floor" else "graphctx"
            port = free_port()
            url = f"http://127.0.0.1:{port}"
            proc = start(kind, workers, store, args.embedder, port, path)
            try:
                warm = connect(url, store)
                client(warm, store, 0, time.monotonic() + args.warmup, Results())
                warm.close()
                for n in args.clients:
                    trials = []
                    for _ in range(args.trials):  # each trial opens its connections afresh
                        if args.client == "wrk":
                            trials.append(load_wrk(url, store, n, args.duration, proc.pid, args.work))
                        else:
                            trials.append(load(url, store, n, args.duration, proc.pid))
                        print(name, workers, n, trials[-1], flush=True)
                    got[(name, workers, n)] = combined(trials)
            finally:
                status = stop(proc)
            if status not in (0, -15):
                exits.append(f"{name} --workers {workers}: exit status {status}")
        sample_cpu()
    cpu_ms = {name: median(values) for name, values in samples.items()}
    rows = []
    bad = bool(exits)
    for workers in args.workers:
        for n in args.clients:
            floor = got[("FastAPI floor", workers, n)]
            for name in installs:
                ours = got[(name, workers, n)]
                ceiling = cores * 1000 / cpu_ms[name]
                p50, p95, p99 = ours["p"]
                kinds = ", ".join(f"{k}: {v}" for k, v in sorted(ours["error_kinds"].items()))
                bad = bad or bool(ours["errors"]) or bool(ours["stuck"])
                rows.append(
                    f"| {name} | {workers} | {n} | {ours['rps']:,.0f} | {p50:.1f} / {p95:.1f} / {p99:.1f} | "
                    f"{ours['worst_p99']:.1f} | {ours['splits']} | "
                    f"{ours['errors']}{f' ({kinds})' if kinds else ''} | {ours['server_cpu_ms']:.1f} | "
                    f"{floor['rps']:,.0f} | {ours['rps'] / floor['rps']:.2f} | "
                    f"{ours['rps'] / ceiling:.2f} | {ours['load']:.1f} |"
                )
    cpu_text = "; ".join(
        f"{name}: {ms:.2f} ms (samples {', '.join(f'{v:.2f}' for v in samples[name])}), cores ÷ CPU per "
        f"call = {cores} ÷ {ms:.2f} ms = **{cores * 1000 / ms:,.0f} req/s**"
        for name, ms in cpu_ms.items()
    )
    text = (
        f"#### {store.label} ({store.entities:,} entities in one scope)\n\n"
        f"In-process CPU per call (same mix on ContextService in a fresh process, no HTTP, mean of "
        f"{args.calls} calls after 20 warm-up calls; sampled before the load and after each worker "
        f"count's points, the median taken): {cpu_text}.\n\n"
        "| install | workers | clients | graphctx req/s | p50 / p95 / p99 ms | worst p99 ms | "
        "connections per reader | errors | server CPU ms / req | FastAPI floor req/s | ÷ floor | "
        "÷ ceiling | load avg |\n"
        "|---|---:|---:|---:|---|---:|---|---|---:|---:|---:|---:|---:|\n" + "\n".join(rows) + "\n"
    )
    if exits:
        text += "\n- " + "; ".join(exits) + "\n"
    return text, bad


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--entities", type=int, default=10_000, help="Synthetic store size (0: demo only).")
    parser.add_argument("--duration", type=float, default=8.0, help="Seconds of load per client count.")
    parser.add_argument("--warmup", type=float, default=1.5)
    parser.add_argument(
        "--trials", type=int, default=1, help="Load runs per point, each on fresh connections (medians)."
    )
    parser.add_argument("--calls", type=int, default=300, help="In-process calls for the CPU per call.")
    parser.add_argument("--embedder", default="wordllama")
    parser.add_argument("--write", action="store_true", help="write the section into docs/results.md")
    parser.add_argument(
        "--baseline", type=Path, help="another graphctx source tree measured beside this one (see above)"
    )
    parser.add_argument(
        "--client",
        choices=("threads", "wrk"),
        default="threads",
        help="the load client: Python threads with httpx (default), or wrk (`apt-get install wrk`), which "
        "leaves the server more of the cores",
    )
    parser.add_argument("--cpu-per-call", help=argparse.SUPPRESS)  # the child of cpu_per_call
    args = parser.parse_args()
    if args.client == "wrk" and not shutil.which("wrk"):
        raise SystemExit("--client wrk: wrk is not installed (Debian: apt-get install wrk)")
    if args.cpu_per_call:
        spec = json.loads(args.cpu_per_call)
        store = Store(
            "", Path(spec["data_dir"]), Scope(spec["tenant"], spec["namespace"]), [], spec["names"],
            spec["queries"], 0,
        )  # fmt: skip
        print(in_process_cpu_ms(store, spec["embedder"], spec["calls"]))
        return
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the servers on the way out

    work = Path(tempfile.mkdtemp(prefix="graphctx-service-load-"))
    args.work = work
    installs: dict[str, Path | None] = {"this tree": None}
    if args.baseline:
        installs["baseline"] = layout(args.baseline)
    parts, bad = [], False
    load_start = os.getloadavg()
    try:
        stores = [demo_store(work / "demo", args.embedder)]
        if args.entities:
            stores.append(synthetic_store(work / "synthetic", args.embedder, args.entities))
        for store in stores:
            text, failed = measure(store, args, installs)
            print(text, flush=True)
            parts.append(text)
            bad = bad or failed
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if installs.get("baseline"):
            shutil.rmtree(installs["baseline"], ignore_errors=True)  # type: ignore[arg-type]
    command = "python bench/service_load.py " + " ".join(sys.argv[1:])
    body = (
        "### HTTP API under concurrent load "
        "(`graphctx serve --workers N` beside a minimal FastAPI endpoint)\n\n"
        + header(
            command,
            f"the demo memory and a synthetic {args.entities:,}-entity store (bench/recall_latency.py's "
            f"generator), embedder {args.embedder}; {', '.join(map(str, args.clients))} "
            + (
                "client threads (one keep-alive httpx connection and API key each, one process)"
                if args.client == "threads"
                else "keep-alive connections from wrk (one thread per core, API keys in turn)"
            )
            + " on loopback, "
            f"{args.duration:g} s per point after a {args.warmup:g} s warm-up; "
            f"{int((1 - EXPLAIN_SHARE) * 100)} % recall (depth "
            f"1 or 2), {int(EXPLAIN_SHARE * 100)} % explain",
        )
        + "\nLatency is measured by the client around each request. The servers and the load client "
        "share the machine's cores (and other engineers' work: the load average column is the 1-minute "
        f"figure at the start of each point; {load_start[0]:.1f} when the run began). The FastAPI floor "
        "is bench/_fastapi_floor.py (same routes, a fixed small answer, no auth or stores) with the same "
        "uvicorn worker count, so `÷ floor` is the share of what the client and HTTP stack alone allow; "
        "`÷ ceiling` is req/s over cores ÷ in-process CPU per call. Server CPU per request is the "
        "server process tree's utime + stime over the point, divided by the requests completed. With "
        "--trials, each point runs that many times on fresh connections: the medians, the worst p99, and "
        "how each trial's connections were spread over the processes accepting them (sampled halfway "
        "through).\n\n" + "\n".join(parts)
    )
    print(body)
    if args.write:
        write_section("service_load", body)
    if bad:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
