"""The fault run on loopback, bounded in count and time:

- kill -9 of the writer (`graphctx remember --file`, a bulk load on the embedded default) part way,
  then `graphctx reconcile`: graph, lexical and vector agree, and loading the same file again finishes
  it with nothing duplicated;
- a silent graph server: Gremlin Server behind a TCP proxy that freezes (connections accepted, nothing
  answered, as a SIGSTOPped server) with clients calling recall and remember, then thaws; then the
  same proxy killed (connections refused) and restarted. Every call is timed and classified; afterwards
  every write reported done must be in the graph. Needs GRAPHCTX_TEST_GREMLIN_URL (source
  compose/native/env.sh); skipped, and said so, without it;
- a slow dense leg: every vector search takes `--dense-delay` s for a while, then the store is healthy:
  recalls answer within the dense budget from the lexical leg, and at full speed again at once.

    python bench/faults.py --records 20000 --kill-at 0.3 --freeze 12 --write

Results go to docs/results.md only with --write. Exits 1 when a check fails.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _report import header, median, percentile, write_section

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from graphctx.errors import GraphctxError
from graphctx.kernel import templates as t
from graphctx.kernel.reads import batches, stored_hashes
from graphctx.kernel.stores import open_stores
from graphctx.scope import Scope
from graphctx.service import ContextService
from graphctx.settings import Settings
from tests.adapters.gremlin_requests import Proxy  # the repository root is on the path only now

SCOPE = Scope("faults", "default")
STEP_TIMEOUT_S = 600.0
BACKOFF_S = 0.05
"""A client's pause after a failed call (the breaker refuses at once; without it a client spins)."""


@dataclass
class Scenario:
    name: str
    calls: int = 0
    done: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    untyped: list[str] = field(default_factory=list)
    slowest_s: float = 0.0
    checks: dict[str, bool] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def call(self, fn: Callable[[], Any]) -> Any:
        """fn's answer, or None when it failed (counted by error code)."""
        return self.outcome(fn)[0]

    def outcome(self, fn: Callable[[], Any]) -> tuple[Any, str | None]:
        started = time.monotonic()
        try:
            result = fn()
        except GraphctxError as exc:
            self._count(started, exc.code)
            if exc.code == "write_incomplete" and exc.details.get("recorded") is False:
                return None, "not_recorded"  # an earlier write blocks it: nothing of it was written
            return None, exc.code
        except Exception as exc:  # an untyped failure is what this run looks for
            self._count(started, None, repr(exc)[:120])
            return None, "untyped"
        self._count(started, "")
        return result, None

    def _count(self, started: float, code: str | None, untyped: str = "") -> None:
        took = time.monotonic() - started
        with self.lock:
            self.calls += 1
            self.slowest_s = max(self.slowest_s, took)
            if code == "":
                self.done += 1
            elif code is None:
                self.untyped.append(untyped)
            else:
                self.errors[code] = self.errors.get(code, 0) + 1


def _cli(
    env: dict[str, str], *args: str, timeout: float = STEP_TIMEOUT_S
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "graphctx.cli", "-q", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _consistent(settings: Settings) -> tuple[bool, int]:
    stores = open_stores(settings, "read")
    try:
        graph = {h.id: h.content_hash for h in stored_hashes(stores.graph, SCOPE)}
        lexical = stores.lexical.hashes(SCOPE)
        vector = stores.vector.hashes(SCOPE) if stores.vector is not None else graph
    finally:
        stores.close()
    return graph == lexical == vector, len(graph)


def _entities(settings: Settings) -> int:
    try:
        stores = open_stores(settings, "read")
    except GraphctxError:
        return 0
    try:
        return int(stores.graph.run(t.SCOPE_STATS, SCOPE, t.NoParams()).entities)
    except GraphctxError:
        return 0
    finally:
        stores.close()


def kill_during_load(work: Path, args: argparse.Namespace) -> Scenario:
    report = Scenario("kill -9 of the writer during a bulk load, then reconcile")
    data = work / "kill" / "data"
    lines = work / "load.jsonl"
    with lines.open("w", encoding="utf-8") as fh:
        for i in range(args.records):
            entity = {"kind": "entity", "id": f"k{i}", "name": f"loaded-{i}", "summary": f"bulk record {i}"}
            fh.write(json.dumps(entity) + "\n")
        for i in range(1, args.records, 2):
            fh.write(
                json.dumps(
                    {
                        "kind": "fact",
                        "subject_id": f"k{i}",
                        "predicate": "relates_to",
                        "object_id": f"k{i - 1}",
                    }
                )
                + "\n"
            )
    env = {
        **os.environ,
        "GRAPHCTX_DATA_DIR": str(data),
        "GRAPHCTX_EMBEDDER": args.embedder,
        "GRAPHCTX_TENANT_ID": SCOPE.tenant_id,
    }
    cmd = [sys.executable, "-m", "graphctx.cli", "-q", "remember", "--file", str(lines), "--json"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    settings = Settings(data_dir=data, embedder=args.embedder)
    target = int(args.records * args.kill_at)
    started = time.monotonic()
    while proc.poll() is None and time.monotonic() - started < STEP_TIMEOUT_S:
        if (data / "graph.sqlite").exists() and _entities(settings) >= target:
            os.kill(proc.pid, signal.SIGKILL)
            break
        time.sleep(0.25)
    proc.wait(60)
    killed_after = time.monotonic() - started
    _, before = _consistent(settings)
    report.checks["the writer was killed part way"] = (
        proc.returncode == -signal.SIGKILL and 0 < before < args.records
    )
    started = time.monotonic()
    reconciled = _cli(env, "reconcile", "--json")
    took = time.monotonic() - started
    report.checks["reconcile exits 0"] = reconciled.returncode == 0
    agree, _ = _consistent(settings)
    report.checks["graph, lexical and vector agree after reconcile"] = agree
    started = time.monotonic()
    again = _cli(env, "remember", "--file", str(lines), "--json")
    rerun = time.monotonic() - started
    agree, total = _consistent(settings)
    report.checks["loading the file again finishes it"] = again.returncode == 0 and total == args.records
    report.checks["graph, lexical and vector agree at the end"] = agree
    try:
        result = json.loads(again.stdout)
        report.checks["nothing duplicated (records written before the kill are unchanged)"] = (
            result["entities"]["created"] + result["entities"]["unchanged"] == args.records
        )
    except (ValueError, KeyError, TypeError):
        report.checks["nothing duplicated (records written before the kill are unchanged)"] = False
    report.notes.append(
        f"{args.records:,} entities + {args.records // 2:,} facts, killed {killed_after:.1f} s after the "
        "start with "
        f"{before:,} entities in the graph; reconcile {took:.1f} s ({_brief(reconciled.stdout)}); "
        f"the same load again {rerun:.1f} s, {total:,} entities at the end"
    )
    return report


def _brief(stdout: str) -> str:
    try:
        got = json.loads(stdout)
    except ValueError:
        return stdout.strip()[:120]
    keys = ("writes_completed", "journal_replayed", "lexical_repaired", "vector_repaired", "graph_entities")
    return ", ".join(f"{k} {got.get(k)}" for k in keys)


def _gremlin_service(work: Path, proxy: Proxy, deadline_s: float, name: str) -> ContextService:
    os.environ["GRAPHCTX_GREMLIN_URL"] = f"ws://127.0.0.1:{proxy.port}/gremlin"
    settings = Settings(
        data_dir=work / name / "data",
        embedder="hashing",
        graph_backend="gremlin",
        deadline_s=deadline_s,
        write_deadline_s=deadline_s,
    )
    return ContextService.open(settings)


def silent_graph(work: Path, args: argparse.Namespace, how: str) -> Scenario | None:
    url = os.environ.get("GRAPHCTX_TEST_GREMLIN_URL", "")
    match = re.match(r"wss?://([^:/]+):(\d+)", url)
    if not match:
        return None
    report = Scenario(
        "graph server silent (frozen proxy), then back"
        if how == "freeze"
        else "graph server killed (connections refused), then back"
    )
    proxy = Proxy((match.group(1), int(match.group(2))))
    proxy.start()
    scope = Scope(f"faults-{uuid.uuid4().hex[:10]}")
    service = _gremlin_service(work, proxy, args.deadline, f"gremlin-{how}")
    acked: list[str] = []
    incomplete: list[str] = []
    blocked: list[str] = []
    try:
        service.remember(scope, [{"id": "anchor", "name": "anchor service"}])
        stop_at = time.monotonic() + args.freeze
        if how == "freeze":
            proxy.frozen = True
        else:
            proxy.kill()

        def client(i: int) -> None:
            n = 0
            while time.monotonic() < stop_at:
                n += 1
                if i % 2:
                    if report.call(lambda: service.recall(scope, "anchor service")) is None:
                        time.sleep(BACKOFF_S)
                    continue
                eid = f"w{i}-{n}"
                body = [{"id": eid, "name": f"written {eid}"}]
                done, code = report.outcome(lambda body=body: service.remember(scope, body))
                with report.lock:
                    if done:
                        acked.append(eid)
                    elif code == "write_incomplete":
                        incomplete.append(eid)
                    elif code == "not_recorded":
                        blocked.append(eid)
                if not done:
                    time.sleep(BACKOFF_S)

        threads = [threading.Thread(target=client, args=(i,)) for i in range(args.clients)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(args.freeze + 120)
        during = (report.calls, report.done, dict(report.errors), report.slowest_s)
        if how == "freeze":
            proxy.frozen = False
        else:
            proxy.start()
        thawed = time.monotonic()
        first_ok = None
        while time.monotonic() - thawed < 60:
            if report.call(lambda: service.recall(scope, "anchor service")):
                first_ok = time.monotonic() - thawed
                break
            time.sleep(0.2)
        # a write reported incomplete was journaled: the next write completes it
        report.call(lambda: service.remember(scope, [{"id": "after", "name": "written after the fault"}]))
        found: set[str] = set()
        for ids in batches([*acked, *incomplete], 500):
            got = service.stores.graph.run(t.ENTITY_GET, scope, t.EntityGetParams(ids=tuple(ids)))
            found.update(e.id for e in got.entities)
        report.checks[
            f"every call during the fault answered within the deadline + 1 s ({args.deadline:g} s)"
        ] = during[3] <= args.deadline + 1.0
        report.checks["no untyped error"] = not report.untyped
        report.checks["answers again within seconds of the server's return"] = (
            first_ok is not None and first_ok < 10
        )
        report.checks["every write reported done is in the graph"] = set(acked) <= found
        report.checks["every write reported incomplete is completed by the next write"] = (
            set(incomplete) <= found
        )
        errors = ", ".join(f"{k} ×{v}" for k, v in sorted(during[2].items())) or "none"
        report.notes.append(
            f"{args.clients} clients for {args.freeze:g} s: {during[0]} calls, {during[1]} done, "
            f"errors {errors}, slowest {during[3]:.2f} s; first answer "
            f"{first_ok if first_ok is None else round(first_ok, 2)} s "
            f"after the server's return; {len(acked)} writes reported done and {len(incomplete)} reported "
            f"incomplete (journaled), {len(found)} of them in the graph after the next write; {len(blocked)} "
            "refused as not recorded (an earlier write was still incomplete)"
        )
    finally:
        proxy.frozen = False
        try:
            service.stores.graph.run(t.SCOPE_CLEAR, scope, t.NoParams())
        except GraphctxError:
            report.notes.append(f"could not clear scope {scope.tenant_id} on the server")
        service.close()
        proxy.kill()
    return report


class SlowVectors:
    """The vector index, with every search taking `delay` s while `slow` is set."""

    def __init__(self, inner: Any, delay: float) -> None:
        self.inner, self.delay = inner, delay
        self.slow = threading.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def search(self, *a: Any, **kw: Any) -> Any:
        if self.slow.is_set():
            time.sleep(self.delay)
        return self.inner.search(*a, **kw)


def slow_dense(work: Path, args: argparse.Namespace) -> Scenario:
    report = Scenario("slow dense leg, then healthy")
    settings = Settings(data_dir=work / "dense" / "data", embedder=args.embedder)
    stores = open_stores(settings)
    vectors = SlowVectors(stores.vector, args.dense_delay)
    stores.vector = vectors  # type: ignore[assignment]
    phases: dict[str, list[float]] = {"before": [], "slow": [], "after": []}
    legs: dict[str, set[str]] = {"before": set(), "slow": set(), "after": set()}
    with ContextService(stores, settings) as service:
        service.remember(
            SCOPE, [{"id": f"d{i}", "name": f"dense-{i}", "summary": f"topic {i}"} for i in range(200)]
        )
        for phase in ("before", "slow", "after"):
            if phase == "slow":
                vectors.slow.set()
            elif phase == "after":
                vectors.slow.clear()
            for i in range(args.dense_calls):
                started = time.monotonic()
                env = report.call(lambda i=i: service.recall(SCOPE, f"topic {i}"))
                phases[phase].append(time.monotonic() - started)
                if env:
                    legs[phase].add(str(env.get("timings_ms", {}).get("dense", "?") != "?"))
                    for omission in env.get("omissions", []):
                        legs[phase].add(str(omission.get("reason") or omission.get("kind") or omission)[:40])
    budget = settings.dense_deadline_s
    report.checks[f"recalls answer within the dense budget + 1 s ({budget:g} s) while it is slow"] = (
        max(phases["slow"]) <= budget + 1.0
    )
    report.checks["full speed again once it is healthy (median within 2x of before)"] = (
        median(phases["after"]) <= 2 * median(phases["before"]) + 0.05
    )
    report.checks["no untyped error"] = not report.untyped
    report.notes.append(
        "recall median / max s: "
        + "; ".join(f"{p} {median(v):.2f} / {max(v):.2f}" for p, v in phases.items())
        + f" (each {args.dense_calls} calls, searches slowed by {args.dense_delay:g} s); "
        f"p95 while slow {percentile(phases['slow'], 0.95):.2f} s"
    )
    return report


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--records", type=int, default=20_000, help="Entities in the killed bulk load.")
    parser.add_argument(
        "--kill-at", type=float, default=0.3, help="kill -9 once this share of the entities is in the graph."
    )
    parser.add_argument(
        "--freeze", type=float, default=12.0, help="Seconds the graph server is silent / down."
    )
    parser.add_argument(
        "--deadline", type=float, default=2.0, help="Operation deadline during the graph faults."
    )
    parser.add_argument("--clients", type=int, default=8, help="Client threads during the graph faults.")
    parser.add_argument("--dense-delay", type=float, default=5.0)
    parser.add_argument("--dense-calls", type=int, default=10, help="Recalls per phase of the dense fault.")
    parser.add_argument("--embedder", default="wordllama")
    parser.add_argument("--only", default="kill,freeze,down,dense", help="Comma-separated scenarios.")
    parser.add_argument("--write", action="store_true", help="Write the results to docs/results.md.")
    args = parser.parse_args()
    only = {s.strip() for s in args.only.split(",")}

    work = Path(tempfile.mkdtemp(prefix="graphctx-faults-"))
    reports: list[Scenario] = []
    skipped: list[str] = []
    try:
        if "kill" in only:
            reports.append(kill_during_load(work, args))
        for how in ("freeze", "down"):
            if how in only:
                got = silent_graph(work, args, how)
                if got is None:
                    skipped.append(f"graph server {how}: GRAPHCTX_TEST_GREMLIN_URL is not set")
                else:
                    reports.append(got)
        if "dense" in only:
            reports.append(slow_dense(work, args))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    rows = []
    for r in reports:
        failed = [name for name, ok in r.checks.items() if not ok]
        rows.append(
            f"| {r.name} | {r.calls or '-'} | {r.done if r.calls else '-'} | {len(r.untyped)} | "
            f"{f'{r.slowest_s:.2f}' if r.calls else '-'} | "
            f"{'all hold' if not failed else 'FAILED: ' + '; '.join(failed)} |"
        )
    notes = [f"- {r.name}: {n}" for r in reports for n in r.notes]
    checks = [f"- {r.name}: " + "; ".join(r.checks) for r in reports]
    command = (
        f"python bench/faults.py --records {args.records} --kill-at {args.kill_at:g} "
        f"--freeze {args.freeze:g} --deadline {args.deadline:g} --clients {args.clients} "
        f"--dense-delay {args.dense_delay:g} --write"
    )
    body = (
        "### Fault run: kill -9 of the writer, a silent and a killed graph server, a slow dense leg\n\n"
        + header(command, "generated records (see the notes); Gremlin Server 3.7 behind a loopback TCP proxy")
        + "\n| scenario | calls | done | untyped errors | slowest call s | checks |\n"
        "|---|---|---|---|---|---|\n"
        + "\n".join(rows)
        + "\n\n"
        + "\n".join(notes)
        + ("\n- skipped: " + "; ".join(skipped) if skipped else "")
        + "\n\nChecks:\n\n"
        + "\n".join(checks)
        + "\n"
    )
    print(body)
    if args.write:
        write_section("faults", body)
    if any(not ok for r in reports for ok in r.checks.values()):
        raise SystemExit(1)


if __name__ == "__main__":
    main()
