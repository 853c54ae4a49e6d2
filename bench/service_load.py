"""Load on the HTTP API: `graphctx serve` as a subprocess on loopback with the demo memory, N concurrent
clients (threads, one httpx connection each) sending mixed recall / explain requests for a bounded
time. Reports throughput, p50/p95/p99 and errors, and writes its section of docs/results.md.

    python bench/service_load.py --clients 8 --duration 20
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
from _report import header, summary, write_section

from graphctx import registry
from graphctx.auth import Principal
from graphctx.cli import DEMO_QUERIES
from graphctx.demo import sample_path
from graphctx.scope import Scope
from graphctx.service import ContextService
from graphctx.settings import Settings

START_TIMEOUT_S = 90.0
STOP_TIMEOUT_S = 20.0
SCOPE = Scope("demo", "default")
EXPLAIN_SHARE = 0.3


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def prepare(data_dir: Path, embedder: str) -> tuple[str, list[str], int]:
    """Load the demo memory and create a key, then close every store before the server opens them."""
    settings = Settings(data_dir=data_dir, embedder=embedder)
    with ContextService.open(settings) as service, sample_path().open(encoding="utf-8") as fh:
        service.remember_jsonl(SCOPE, fh)
    names = [
        record["name"]
        for record in map(json.loads, sample_path().read_text(encoding="utf-8").splitlines())
        if record.get("kind") == "entity"
    ]
    keys = registry.factory("keys", settings.key_store_backend)(settings)
    try:
        token = keys.create(Principal("service-load", SCOPE.tenant_id, (SCOPE.namespace,))).token
    finally:
        keys.close()
    return token, names, len(names)


def start_server(data_dir: Path, embedder: str, port: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "GRAPHCTX_DATA_DIR": str(data_dir), "GRAPHCTX_EMBEDDER": embedder}
    cmd = [sys.executable, "-m", "graphctx.cli", "serve", "--port", str(port), "--log-level", "warning"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        if proc.poll() is not None:
            raise SystemExit(f"`graphctx serve` exited with status {proc.returncode} before it was ready")
        try:
            if httpx.get(url + "/readyz", timeout=2.0).status_code == 200:
                return proc
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            stop_server(proc)
            raise SystemExit(f"`graphctx serve` was not ready within {START_TIMEOUT_S:.0f} s")
        time.sleep(0.1)


def stop_server(proc: subprocess.Popen[bytes]) -> int:
    proc.terminate()
    try:
        return proc.wait(STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait(STOP_TIMEOUT_S)


class Results:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latency: dict[str, list[float]] = {"recall": [], "explain": []}
        self.errors: dict[str, int] = {}

    def ok(self, op: str, ms: float) -> None:
        with self.lock:
            self.latency[op].append(ms)

    def error(self, what: str) -> None:
        with self.lock:
            self.errors[what] = self.errors.get(what, 0) + 1


def client(url: str, token: str, names: list[str], seed: int, stop_at: float, results: Results) -> None:
    rng = random.Random(seed)
    queries = [*DEMO_QUERIES, *names, "who is on call for payments", "what changed in checkout"]
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=url, headers=headers, timeout=30.0) as http:
        while time.monotonic() < stop_at:
            if rng.random() < EXPLAIN_SHARE:
                op, body = "explain", {"name": rng.choice(names)}
            else:
                op, body = "recall", {"query": rng.choice(queries), "depth": rng.choice((1, 1, 2))}
            started = time.perf_counter()
            try:
                response = http.post(f"/v1/{op}", json=body)
            except httpx.HTTPError as exc:
                results.error(type(exc).__name__)
                continue
            ms = (time.perf_counter() - started) * 1000
            if response.status_code == 200 or (op == "explain" and response.status_code == 409):
                results.ok(op, ms)  # an ambiguous demo name is a correct answer, not an error
            else:
                try:
                    code = response.json()["error"]["code"]
                except (ValueError, KeyError, TypeError):
                    code = "?"
                results.error(f"{op} HTTP {response.status_code} {code}")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--duration", type=float, default=20.0, help="Seconds of load (after warm-up).")
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--baseline", type=float, default=5.0, help="Seconds of one client alone first.")
    parser.add_argument("--embedder", default="wordllama")
    parser.add_argument("--no-write", action="store_true", help="Do not write docs/results.md.")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="graphctx-service-load-"))
    try:
        token, names, entities = prepare(work / "data", args.embedder)
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        proc = start_server(work / "data", args.embedder, port)
        try:
            warm = Results()
            client(url, token, names, 0, time.monotonic() + args.warmup, warm)
            baseline = Results()  # one client alone: the per-request cost without queueing
            base_started = time.perf_counter()
            client(url, token, names, 99, time.monotonic() + args.baseline, baseline)
            base_elapsed = time.perf_counter() - base_started
            results = Results()
            load_before = os.getloadavg()[0]
            stop_at = time.monotonic() + args.duration
            threads = [
                threading.Thread(target=client, args=(url, token, names, i + 1, stop_at, results))
                for i in range(args.clients)
            ]
            started = time.perf_counter()
            for t in threads:
                t.start()
            for t in threads:
                t.join(args.duration + 60)
            elapsed = time.perf_counter() - started
            load_after = os.getloadavg()[0]
            stuck = sum(t.is_alive() for t in threads)
        finally:
            exit_status = stop_server(proc)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    everything = [ms for values in results.latency.values() for ms in values]
    errors = sum(results.errors.values())
    total = len(everything) + errors
    rows = [
        f"| all | {len(everything):,} | {len(everything) / elapsed:,.1f} | {summary(everything)} |",
        *(
            f"| {op} | {len(values):,} | {len(values) / elapsed:,.1f} | {summary(values)} |"
            for op, values in results.latency.items()
        ),
    ]
    alone = [ms for values in baseline.latency.values() for ms in values]
    rows.append(
        f"| all, 1 client alone ({args.baseline:g} s before the load) | {len(alone):,} | "
        f"{len(alone) / base_elapsed:,.1f} | {summary(alone)} |"
    )
    error_text = ", ".join(f"{k}: {v}" for k, v in sorted(results.errors.items())) or "none"
    notes = ""
    if any("budget_too_small" in k for k in results.errors):
        notes = (
            "\n- `budget_too_small` is the service's typed answer when a recall envelope does not fit "
            "the default `max_tokens` (1,500), not a transport failure"
        )
    command = f"python bench/service_load.py --clients {args.clients} --duration {args.duration:g}"
    body = (
        "### HTTP API under concurrent load (`graphctx serve`, embedded default)\n\n"
        + header(
            command,
            f"the demo memory ({entities} entities, tenant `demo`), embedder {args.embedder}; "
            f"{args.clients} client threads (one keep-alive httpx connection each) on loopback, "
            f"{args.duration:g} s after a {args.warmup:g} s warm-up; "
            f"{int((1 - EXPLAIN_SHARE) * 100)} % recall (depth 1 or 2), {int(EXPLAIN_SHARE * 100)} % explain",
        )
        + "\nLatency is measured by the client around each request (HTTP, auth, validation, the "
        "service call and JSON included). The server and the clients share the machine's cores; "
        f"1-minute load average {load_before:.1f} before and {load_after:.1f} after the run.\n\n"
        "| requests | completed | throughput req/s | p50 / p95 / p99 ms |\n|---|---|---|---|\n"
        + "\n".join(rows)
        + f"\n\n- errors: {errors} of {total} requests ({error_text})"
        + notes
        + f"\n- clients still running at the end: {stuck}; server exit status after SIGTERM: {exit_status}\n"
    )
    print(body)
    if not args.no_write:
        write_section("service_load", body)
    if errors or stuck:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
