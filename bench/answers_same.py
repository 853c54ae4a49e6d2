"""Answers identical beside another tree: the same recalls, explains, neighbourhoods and paths run by
this tree's code and by a baseline's (`git archive main | tar -x -C DIR`), on one store, compared as
canonical JSON with `timings_ms` left out. A change meant to make reads cheaper must not change one
byte of what they answer. Prints the counts and the first differences; exits 1 when any answer
differs. Writes nothing into docs/results.md (it is a check, not a figure).

    python bench/answers_same.py --baseline /tmp/graphctx-main --size 2000 --tenants 3 --calls 400
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from _report import layout
from recall_latency import make_scope_data, queries, vocabulary

from graphctx.errors import GraphctxError
from graphctx.scope import Scope
from graphctx.service import ContextService
from graphctx.settings import Settings

AS_OF = datetime(2030, 1, 1, tzinfo=UTC)
"""Every call answers for this instant (and the service's clock says it), so two runs compare."""
EMBEDDER = "wordllama"


def build(data_dir: Path, size: int, tenants: int) -> None:
    """Synthetic memory (bench/recall_latency.py's), plus per tenant some literal values, future and
    ended periods and superseded owners, so explain's statuses and history have something to say."""
    shutil.rmtree(data_dir, ignore_errors=True)
    vocab = vocabulary(random.Random(size))
    with ContextService.open(Settings(data_dir=data_dir, embedder=EMBEDDER)) as service:
        for t in range(tenants):
            scope = Scope(f"tenant-{t}")
            entities, facts = make_scope_data(random.Random(size * 100 + t), vocab, size)
            service.remember(scope, entities)
            service.remember(scope, facts=facts)
            rng = random.Random(t)
            timed = []
            for i in range(0, size, 7):
                other = f"e{rng.randrange(size)}"
                timed.append({"subject_id": f"e{i}", "predicate": "has_status", "value": f"status {i % 5}"})
                timed.append(
                    {"subject_id": f"e{i}", "predicate": "located_in", "object_id": other,
                     "valid_from": "2024-01-01T00:00:00Z", "valid_to": "2025-06-01T00:00:00Z"}
                )  # fmt: skip
                timed.append(
                    {"subject_id": f"e{i}", "predicate": "relates_to", "object_id": other,
                     "valid_from": "2031-01-01T00:00:00Z", "confidence": 0.5, "source": "bench"}
                )  # fmt: skip
            service.remember(scope, facts=timed)


def calls(size: int, tenants: int, n: int) -> list[tuple[str, str, dict[str, Any]]]:
    """(operation, tenant, arguments): recalls at depth 1 and 2 and several budgets, with and
    without ids, explains, neighbourhoods and paths; every tenant asked."""
    rng = random.Random(size)
    vocab = vocabulary(random.Random(size))
    out: list[tuple[str, str, dict[str, Any]]] = []
    per = max(1, n // tenants)
    for t in range(tenants):
        entities, _ = make_scope_data(random.Random(size * 100 + t), vocab, size)
        qs = queries(random.Random(t + 1), entities, per)
        for i, q in enumerate(qs):
            kind = i % 8
            if kind < 4:
                args = {"query": q, "depth": 1 + kind % 2, "max_tokens": (None, 600, 4000, 20000)[kind],
                        "include_ids": kind == 3, "as_of": AS_OF.isoformat()}  # fmt: skip
                out.append(("recall", f"tenant-{t}", args))
            elif kind < 6:
                e = rng.choice(entities)
                args = {"name": e["id"], "include_ids": kind == 5, "as_of": AS_OF.isoformat(),
                        "max_tokens": (None, 1000)[kind - 4]}  # fmt: skip
                out.append(("explain", f"tenant-{t}", args))
            elif kind == 6:
                e = rng.choice(entities)
                args = {"name": e["id"], "depth": 1 + i % 2, "direction": ("both", "out", "in")[i % 3]}
                out.append(("neighbourhood", f"tenant-{t}", args))
            else:
                a, b = rng.choice(entities), rng.choice(entities)
                out.append(("path", f"tenant-{t}", {"source": a["id"], "target": b["id"]}))
    return out


def answer(service: ContextService, op: str, tenant: str, args: dict[str, Any]) -> str:
    kwargs = dict(args)
    if "as_of" in kwargs:
        kwargs["as_of"] = datetime.fromisoformat(kwargs["as_of"])
    try:
        if op == "recall":
            got = service.recall(Scope(tenant), kwargs.pop("query"), **kwargs)
        elif op == "explain":
            got = service.explain(Scope(tenant), kwargs.pop("name"), **kwargs)
        elif op == "neighbourhood":
            got = service.neighbourhood(Scope(tenant), kwargs.pop("name"), **kwargs)
        else:
            got = service.path(Scope(tenant), kwargs.pop("source"), kwargs.pop("target"))
    except GraphctxError as exc:  # an error is an answer too: its code and message must match
        return json.dumps({"error": exc.code, "message": exc.message}, ensure_ascii=False)
    body = {k: v for k, v in got.items() if k != "timings_ms"}
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


def dump(data_dir: Path, plan: Path, out: Path) -> None:
    """Run every planned call with this process's graphctx and write one answer per line."""
    todo = json.loads(plan.read_text(encoding="utf-8"))
    settings = Settings(data_dir=data_dir, embedder=EMBEDDER)
    with ContextService.open(settings, clock=lambda: AS_OF, mode="read") as service:
        lines = [answer(service, op, tenant, args) for op, tenant, args in todo]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")


def run_tree(pythonpath: Path | None, data_dir: Path, plan: Path, out: Path) -> None:
    env = None
    if pythonpath is not None:
        env = {**os.environ, "PYTHONPATH": str(pythonpath), "PYTHONDONTWRITEBYTECODE": "1"}
    subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--dump", str(data_dir), str(plan), str(out)],
        env=env,
        check=True,
        cwd=Path(__file__).parent,
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--baseline", type=Path, help="another graphctx source tree (required unless --dump)")
    parser.add_argument("--size", type=int, default=2000, help="entities per scope")
    parser.add_argument("--tenants", type=int, default=3)
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--work", type=Path, default=Path(__file__).parent / ".work" / "answers-same")
    parser.add_argument(
        "--dump", nargs=3, type=Path, metavar=("DATA_DIR", "PLAN", "OUT"), help=argparse.SUPPRESS
    )
    args = parser.parse_args()
    if args.dump:
        dump(*args.dump)
        return
    if args.baseline is None:
        parser.error("--baseline DIR is required")
    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    data_dir = work / "store"
    build(data_dir, args.size, args.tenants)
    todo = calls(args.size, args.tenants, args.calls)
    plan = work / "plan.json"
    plan.write_text(json.dumps(todo), encoding="utf-8")
    baseline = layout(args.baseline)
    try:
        run_tree(baseline, data_dir, plan, work / "baseline.jsonl")
        run_tree(None, data_dir, plan, work / "this.jsonl")
    finally:
        shutil.rmtree(baseline, ignore_errors=True)
    theirs = (work / "baseline.jsonl").read_text(encoding="utf-8").splitlines()
    mine = (work / "this.jsonl").read_text(encoding="utf-8").splitlines()
    ops: dict[str, list[int]] = {}
    differ = 0
    for (op, tenant, call), a, b in zip(todo, theirs, mine, strict=True):
        same = a == b
        ops.setdefault(op, [0, 0])[0 if same else 1] += 1
        if not same:
            differ += 1
            if differ <= 5:
                print(f"DIFFERS: {op} {tenant} {call}\n  baseline: {a[:400]}\n  this:     {b[:400]}")
    errors = sum(1 for line in mine if line.startswith('{"error"'))
    print(
        f"{len(todo)} calls on {args.size:,} entities per scope x {args.tenants} tenants "
        f"({errors} answered with an error, compared too): "
        + ", ".join(f"{op} {same} same / {diff} differ" for op, (same, diff) in sorted(ops.items()))
    )
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
