"""The scripted fault run on the native HugeGraph cluster: kill -9 a store node during a bulk load and
during recalls, kill the partition leader, restart PD, stop a graph server with clients connected.
Every call is timed and classified (done / typed error / untyped error); after each fault the node comes
back and the run checks that nothing reported done is missing, that re-running what failed plus
reconcile leaves graph and indexes consistent, and that no call outlived its bound. The scenarios are
tests/cluster/faults.py (tests/cluster/test_faults.py runs them small, in CI). Writes its section of
docs/results.md; exits 1 when a check fails.

    compose/native/up hugegraph-cluster && source compose/native/hugegraph-cluster/env.sh
    python bench/cluster_faults.py --batches 20 --batch 200 --recall-seconds 60

Needs a cluster started from this checkout (it kills and restarts its nodes).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from _report import header, write_section

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.cluster import faults  # the repository root is on the path only now


def row(report: faults.Report) -> str:
    d, a = report.during, report.after
    errors = ", ".join(f"{k} ×{v}" for k, v in sorted(d["errors"].items())) or "none"
    failed = [name for name, ok in report.checks.items() if not ok]
    after_errors = ", ".join(f"{k} ×{v}" for k, v in sorted(a["errors"].items()))
    return (
        f"| {report.scenario} | {report.node} | {d['calls']} | {d['done']} | {errors} | "
        f"{len(d['untyped'])} | {d['max_s']:.1f} | {d['max_failed_s']:.1f} | {report.recovery_s:.0f} | "
        f"{report.serving_s:.0f} | {report.setup_s:.0f} | {a['done']}/{a['calls']}"
        f"{f' ({after_errors})' if after_errors else ''} | "
        f"{'all hold' if not failed else 'FAILED: ' + '; '.join(failed)} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--batches", type=int, default=20, help="remember() calls in a bulk load")
    parser.add_argument("--batch", type=int, default=200, help="entities per remember() call")
    parser.add_argument("--recall-seconds", type=float, default=60.0)
    parser.add_argument("--recall-size", type=int, default=1000, help="entities of a recall scenario")
    parser.add_argument(
        "--scenarios", default="1-6", help="which of the six scenarios to run, e.g. 3-6 (in order)"
    )
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/results.md alone")
    args = parser.parse_args()
    if not faults.ours():
        sys.exit("no native cluster from this checkout is running: compose/native/up hugegraph-cluster")
    faults.ctl("wait-healthy", "240")
    work = Path(tempfile.mkdtemp(prefix="graphctx-faults-"))
    reports: list[faults.Report] = []
    try:
        runs = [
            lambda: faults.bulk_load_with_kill(work, "store-2", batches=args.batches, batch=args.batch),
            lambda: faults.bulk_load_with_kill(
                work / "leader", faults.busiest_leader(), batches=args.batches, batch=args.batch
            ),
            lambda: faults.recalls_with_kill(
                work, "store-1", seconds=args.recall_seconds, size=args.recall_size
            ),
            lambda: faults.recalls_with_kill(
                work / "leader", faults.busiest_leader(), seconds=args.recall_seconds, size=args.recall_size
            ),
            lambda: faults.pd_restart(work, seconds=args.recall_seconds / 2, size=min(500, args.recall_size)),
            lambda: faults.server_stop_with_clients(work, size=min(500, args.recall_size)),
        ]
        first, _, last = args.scenarios.partition("-")
        for scenario in runs[int(first) - 1 : int(last or first)]:
            report = scenario()
            reports.append(report)
            print(row(report), flush=True)
    finally:
        faults.ctl("start", timeout_s=1200)
        faults.ctl("wait-healthy", "240")
        shutil.rmtree(work, ignore_errors=True)
    bound = faults.call_bound_s()
    table = "\n".join(
        [
            "| fault | node | calls during | done | typed errors | untyped | slowest call (s) | slowest "
            "failed call (s) | back healthy (s) | then serving (s) | setup waited (s) | calls after | "
            "checks |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
            *(row(r) for r in reports),
        ]
    )
    body = (
        "### HugeGraph cluster under faults (scripted run)\n\n"
        + header(
            "python bench/cluster_faults.py " + " ".join(sys.argv[1:]),
            f"native HugeGraph 1.5.0 cluster (1 PD, 3 stores, 3 Raft replicas per partition, 2 servers); "
            f"bulk loads of {args.batches} × {args.batch} entities, recalls for {args.recall_seconds:g} s "
            f"over {args.recall_size:,} entities; graphctx with embedded lexical and vector indexes",
        )
        + "\n\nEach row: what the callers saw while the node was down (a call is a `remember` of one batch "
        "or a `recall`), how long the node took to come back and the cluster to report every store Up "
        "and every partition led, how long after that server 1 served again (a probe reaching every "
        "partition: a batch write, or recalls spread over the scope; its store client reconnects on "
        "its own schedule), how long the scenario's setup write had to be retried before it landed "
        "(typed failures right after the previous scenario's node came back), and the calls after it. "
        "Checks: every write reported done is on the cluster (read through the other graph server), "
        "every error is a typed graphctx error, no call "
        f"took longer than {bound:.0f} s (the adapter's connect + read timeouts with its retries), and "
        "after recovery the failed writes re-run, reconcile repairs and a second reconcile repairs "
        "nothing.\n\n" + table + "\n"
    )
    print(body)
    if not args.no_write:
        write_section("cluster_faults", body)
    if not all(r.ok for r in reports):
        sys.exit(1)


if __name__ == "__main__":
    main()
