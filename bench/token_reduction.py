"""Token reduction on code questions: the CPython standard-library question set of ../shared/eval
(seed 0, N = 20 by default) answered by graphctx's `symbol` operation and, side by side, by graphify's
`explain`, both at the same budget. Per question: baseline tokens (bytes/4 of the files an agent would
read), returned tokens (ceil(JSON bytes / 4)), whether the definition (file + line range) is exact, and
callers / callees recall and precision against the ground truth. Also measures index time and store
size for the whole non-test standard library (section code_index).

    python bench/token_reduction.py --write                     # everything, results into docs/results.md
    python bench/token_reduction.py --seed 1 --n 50 --skip-graphify --skip-code-index

Data (tree copies, ground truth, stores, graphify's venv and graphs) lives in --data-dir and is reused
between runs; the ground-truth scripts run as subprocesses, never imported.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import shutil
import sys
import sysconfig
import time
from collections import Counter
from pathlib import Path
from typing import Any

import _code_graphify as gfy
from _code_data import Answer, Score, build_questions, copy_tree, load_defs, score
from _code_misses import explain_graphctx, explain_graphify
from _report import header, write_section

from graphctx.envelope import dumps
from graphctx.errors import GraphctxError
from graphctx.scope import Scope
from graphctx.service import ContextService
from graphctx.settings import Settings

SCOPE = Scope("bench")
DEFAULT_ROOT = Path(sysconfig.get_paths()["stdlib"])


# -- graphctx behind small functions -----------------------------------------------------------


def open_service(store: Path) -> ContextService:
    return ContextService.open(Settings(data_dir=store))


def index_tree(service: ContextService, tree: Path) -> tuple[float, dict[str, Any]]:
    started = time.perf_counter()
    report = service.index_repository(SCOPE, tree)
    return time.perf_counter() - started, report.as_dict()


def ensure_index(store: Path, tree: Path) -> dict[str, Any]:
    """Index `tree` into `store` once (timed, recorded beside it in `<store>.index.json`), then time a
    re-index of the unchanged tree (which must write nothing) on every run."""
    record = store.with_name(store.name + ".index.json")
    info: dict[str, Any] = json.loads(record.read_text()) if record.exists() and store.exists() else {}
    if not info:
        load = os.getloadavg()[0]
        shutil.rmtree(store, ignore_errors=True)
        with open_service(store) as service:
            seconds, report = index_tree(service, tree)
        info = {"seconds": seconds, "report": report, "load_before": load}
    with open_service(store) as service:
        noop_s, noop_report = index_tree(service, tree)
    # measured once the store is closed after the no-op run: what stays on disk, not write-ahead logs
    parts = {p.name: gfy.dir_bytes(p) for p in store.iterdir()}
    info.update(
        noop_seconds=noop_s, noop_report=noop_report, store_bytes=sum(parts.values()), store_parts=parts
    )
    record.write_text(json.dumps(info, indent=1))
    return info


def tokens_of(data: Any) -> int:
    return math.ceil(len(dumps(data).encode("utf-8")) / 4)


def ask_graphctx(
    service: ContextService, qualified: str, budget: int, limit: int | None = None
) -> tuple[Answer, dict[str, Any]]:
    """`symbol` for one qualified name (per-direction limit: the operation's default unless given); the
    answer reduced to comparable facts."""
    try:
        if limit is None:
            env = service.symbol(SCOPE, qualified, max_tokens=budget)
        else:
            env = service.symbol(SCOPE, qualified, max_tokens=budget, limit=limit)
    except GraphctxError as exc:
        err = exc.to_dict()
        return Answer(tokens=tokens_of(err), error=f"{exc.code}: {exc.message}"), err
    answer = Answer(tokens=tokens_of(env))
    answer.file, answer.start, answer.end = parse_at(env["subject"])

    def names(key: str) -> set[str]:
        return {c.get("qualified_name") or c["name"] for c in env.get(key, [])}

    # a test that calls the symbol is among the callers (marked `test`); `tests` holds the tests that
    # reach it otherwise (fixtures, helpers), which are not callers
    answer.callers = names("callers")
    answer.callees = names("callees")
    for note in env.get("omissions", []):
        if note.get("what") in ("callers", "tests"):
            answer.omitted_callers += int(note.get("count", 0))
        elif note.get("what") == "callees":
            answer.omitted_callees += int(note.get("count", 0))
    return answer, env


def parse_at(card: dict[str, Any]) -> tuple[str | None, int | None, int | None]:
    """File, def line and last line of a definition card (`at` is "path:first-last"; a decorated
    definition's range starts at its first decorator and the card adds `def_line`)."""
    where = card.get("at")
    if where is None:  # the card shape before compact cards
        location = card.get("location", {})
        lines = location.get("lines") or [None, None]
        return location.get("path"), lines[0], lines[1]
    path, _, span = str(where).rpartition(":")
    if not path or "-" not in span:
        return str(where), None, None
    first, _, last = span.partition("-")
    return path, int(card.get("def_line", first)), int(last)


# -- report -------------------------------------------------------------------------------------


ENTRY_SECTIONS = ("callers", "callees", "tests")


def _field_bytes(key: str, value: Any) -> int:
    """What one `"key":value` member costs in the canonical JSON (its share of ceil(bytes / 4))."""
    return len(dumps({key: value}).encode("utf-8")) - 2


def token_split(envs: list[dict[str, Any]]) -> str:
    """Where graphctx's tokens go, per field of the answer: the envelope's members, the definition
    card's, and the entries' (name, `at`, call lines, test mark) of each direction."""
    answered = [e for e in envs if "subject" in e]
    if not answered:
        return ""
    total = sum(tokens_of(e) for e in answered)
    parts: Counter[tuple[str, str]] = Counter()
    for env in answered:
        for key, value in env.items():
            if key == "subject":
                for k, v in value.items():
                    parts[("definition card", k)] += _field_bytes(k, v)
            elif key in ENTRY_SECTIONS:
                parts[(f"`{key}` entries", "(list punctuation)")] += _field_bytes(key, value)
                for card in value:
                    for k, v in card.items():
                        parts[(f"`{key}` entries", k)] += _field_bytes(k, v)
                        parts[(f"`{key}` entries", "(list punctuation)")] -= _field_bytes(k, v)
            else:
                parts[("envelope", key)] += _field_bytes(key, value)
    groups: Counter[str] = Counter()
    for (group, _), b in parts.items():
        groups[group] += b
    n = len(answered)
    lines = [
        "| part | field | tokens | per answer | share |",
        "|---|---|---|---|---|",
    ]
    for group, gb in groups.most_common():
        lines.append(f"| **{group}** | (all) | {gb / 4:,.0f} | {gb / 4 / n:.1f} | {gb / 4 / total:.1%} |")
        for (g, k), b in sorted(parts.items(), key=lambda kv: -kv[1]):
            if g == group and b > 0:
                label = k if k.startswith("(") else f"`{k}`"
                lines.append(f"| | {label} | {b / 4:,.0f} | {b / 4 / n:.1f} | {b / 4 / total:.1%} |")
    return (
        f"\nWhere graphctx's {total:,} tokens over {n} answers go, per field (bytes / 4 of each "
        '`"key":value` member; the remainder is the JSON\'s own braces and commas). Only the '
        "definition's file and range and the names of the callers and callees are scored; `at` and the "
        "call lines are what lets an agent open the right lines without reading the file.\n\n"
        + "\n".join(lines)
        + "\n"
    )


def pct(a: int, b: int) -> str:
    return f"{a / b:.1%}" if b else "—"


def ratio(a: int, b: int) -> str:
    return f"{a}/{b}"


def aggregate(questions: list[dict], rows: list[tuple[Answer, Score]]) -> dict[str, Any]:
    base = sum(q["baseline_tokens"] for q in questions)
    toks = sum(a.tokens for a, _ in rows)
    cf, cg, cr = (
        sum(getattr(s, k) for _, s in rows) for k in ("callers_found", "callers_gt", "callers_returned")
    )
    kf, kg, kr = (
        sum(getattr(s, k) for _, s in rows) for k in ("callees_found", "callees_gt", "callees_returned")
    )
    evidence = sum(s.evidence for _, s in rows)
    possible = len(rows) + cg + kg
    return {
        "n": len(rows),
        "baseline": base,
        "returned": toks,
        "reduction": 1 - toks / base if base else float("nan"),
        "def_exact": sum(s.def_exact for _, s in rows),
        "start_exact": sum(s.start_exact for _, s in rows),
        "callers": (cf, cg, cr),
        "callees": (kf, kg, kr),
        "evidence": evidence,
        "possible": possible,
        "tokens_per_evidence": toks / evidence if evidence else float("inf"),
        "baseline_per_evidence": base / possible if possible else float("inf"),
    }


def question_table(questions: list[dict], systems: dict[str, list[tuple[Answer, Score]]]) -> str:
    head = "| # | symbol | baseline | " + " | ".join(
        f"{name} tokens | {name} def | {name} callers R / P | {name} callees R / P" for name in systems
    )
    lines = [head + " |", "|" + "---|" * (3 + 4 * len(systems))]
    for i, q in enumerate(questions):
        cells = [str(i + 1), f"`{q['symbol']}`", f"{q['baseline_tokens']:,}"]
        for rows in systems.values():
            a, s = rows[i]
            d = "exact" if s.def_exact else ("start line only" if s.start_exact else "wrong")
            if a.error:
                d = "no answer"
            cells += [
                f"{a.tokens:,}",
                d,
                f"{ratio(s.callers_found, s.callers_gt)} / {ratio(s.callers_found, s.callers_returned)}",
                f"{ratio(s.callees_found, s.callees_gt)} / {ratio(s.callees_found, s.callees_returned)}",
            ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def aggregate_table(systems: dict[str, dict[str, Any]]) -> str:
    lines = [
        "| system | baseline tokens | returned tokens | reduction | definition exact (file + range) | "
        "callers recall | callers precision | callees recall | callees precision | correct evidence items | "
        "tokens per correct item |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, g in systems.items():
        cf, cg, cr = g["callers"]
        kf, kg, kr = g["callees"]
        n = g["n"]
        lines.append(
            f"| {name} | {g['baseline']:,} | {g['returned']:,} | {g['reduction']:.2%} | "
            f"{g['def_exact']}/{n} (start line {g['start_exact']}/{n}) | {pct(cf, cg)} ({cf}/{cg}) | "
            f"{pct(cf, cr)} ({cf}/{cr}) | {pct(kf, kg)} ({kf}/{kg}) | {pct(kf, kr)} ({kf}/{kr}) | "
            f"{g['evidence']}/{g['possible']} | {g['tokens_per_evidence']:.1f} |"
        )
    base = next((g for name, g in systems.items() if "pooled" in name), next(iter(systems.values())))
    lines.append(
        f"| reading the files (baseline) | {base['baseline']:,} | {base['baseline']:,} | 0% | — | — | — | — "
        f"| — | {base['possible']}/{base['possible']} (if the reader finds all) | "
        f"{base['baseline_per_evidence']:.1f} |"
    )
    return "\n".join(lines)


def misses_section(name: str, misses: list[dict]) -> str:
    if not misses:
        return f"No misses for {name}.\n"
    counts = Counter(m["category"] for m in misses)
    lines = [
        f"**{name}**: {len(misses)} misses — " + "; ".join(f"{c}: {k}" for c, k in counts.most_common()),
        "",
    ]
    # a category every definition shares is said once instead of in twenty rows
    common = [
        c
        for c, k in counts.items()
        if k >= 5 and all(m["kind"] == "definition" for m in misses if m["category"] == c)
    ]
    for c in common:
        lines.append(f"- every definition miss of this kind ({counts[c]}): {c}")
    rows = [m for m in misses if m["category"] not in common]
    lines += ["", "| symbol | kind | item | category | evidence |", "|---|---|---|---|---|"] if rows else []
    for m in rows:
        lines.append(f"| `{m['symbol']}` | {m['kind']} | `{m['item']}` | {m['category']} | {m['detail']} |")
    return "\n".join(lines) + "\n"


REFERENCE_BASELINE = 417_723
"""../shared/data/README.md: seed 0, N = 20 on CPython 3.11.7."""


def tree_check(questions: list[dict], seed: int, n: int) -> str:
    base = sum(q["baseline_tokens"] for q in questions)
    if (seed, n) != (0, 20):
        return "Tree check: only seed 0, N = 20 has a reference figure.\n"
    verdict = "reproduces" if base == REFERENCE_BASELINE else f"DIFFERS from (got {base:,})"
    return (
        f"Tree check: this tree {verdict} the set's reference figure (seed 0, N = 20: baseline "
        f"{REFERENCE_BASELINE:,} tokens on CPython 3.11.7). Debian's /usr/lib/python3.11 (3.11.2, no "
        "`test` package) gives another pool and sample (baseline 410,035).\n"
    )


def ask_graphify_all(
    exe: Path, graph: gfy.Graph, full: Path, data: Path, seed: int, n: int, budget: int, questions: list[dict]
) -> list[Answer]:
    """graphify's answers for one seed's questions, cached per graph digest."""
    cache = data / f"graphify-answers-seed{seed}-n{n}-b{budget}.json"
    digest = hashlib.sha256(graph.path.read_bytes()).hexdigest()
    cached = json.loads(cache.read_text()) if cache.exists() else {}
    if cached.get("graph_sha256") != digest:
        cached = {"graph_sha256": digest}
    answers = []
    for q in questions:
        if q["symbol"] in cached:
            raw = cached[q["symbol"]]
            answer = Answer(**{**raw, "callers": set(raw["callers"]), "callees": set(raw["callees"])})
        else:
            answer, log = gfy.ask(exe, graph, full, q["symbol"], budget)
            cached[q["symbol"]] = {
                **answer.__dict__,
                "callers": sorted(answer.callers),
                "callees": sorted(answer.callees),
            }
            cache.write_text(json.dumps(cached, indent=1))
            print(f"  {q['symbol']}: {'; '.join(log)}", flush=True)
        answers.append(answer)
    return answers


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT, help="standard-library tree to copy")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--seeds", help="comma-separated seeds, reported each and pooled (default: --seed)")
    parser.add_argument("--n", type=int, default=20)
    parser.add_argument("--budget", type=int, default=20_000, help="max_tokens for every answer")
    parser.add_argument("--limit", type=int, help="graphctx's per-direction limit (default: the operation's)")
    parser.add_argument("--data-dir", type=Path, default=Path.home() / ".cache" / "graphctx-bench")
    parser.add_argument("--skip-graphify", action="store_true")
    parser.add_argument("--skip-code-index", action="store_true", help="skip the non-test index timing")
    parser.add_argument("--write", action="store_true", help="write the sections of docs/results.md")
    parser.add_argument("--reindex", action="store_true", help="drop graphctx's cached stores first")
    parser.add_argument("--rebuild", action="store_true", help="drop every cached store, graph and answer")
    args = parser.parse_args()
    seeds = [int(x) for x in args.seeds.split(",")] if args.seeds else [args.seed]
    data: Path = args.data_dir.expanduser().resolve()
    data.mkdir(parents=True, exist_ok=True)

    full, nontest = data / "tree-full", data / "tree-nontest"
    dropped = ["graphctx-full", "graphctx-nontest"] if args.reindex or args.rebuild else []
    if args.rebuild:
        dropped += [
            "graphify-full",
            "graphify-nontest",
            *(p.name for p in data.glob("graphify-answers-*.json")),
        ]
    for name in dropped:
        target = data / name
        if target.is_dir():
            shutil.rmtree(target)
        else:
            target.unlink(missing_ok=True)
    full_files, full_bytes = copy_tree(args.root, full, with_tests=True)
    sets: dict[int, tuple[list[dict], str]] = {}
    for seed in seeds:
        sets[seed] = build_questions(full, data / "gt-full", args.n, seed)
        print(sets[seed][1], flush=True)
    defs = load_defs(data / "gt-full")

    print("graphctx: indexing the full tree (once; cached) ...", flush=True)
    gctx_index = ensure_index(data / "graphctx-full", full)
    print(
        f"  index {gctx_index['seconds']:.1f} s, no-op re-index {gctx_index['noop_seconds']:.1f} s",
        flush=True,
    )
    rows_c: dict[int, list[tuple[Answer, Score]]] = {}
    envs: dict[int, list[dict[str, Any]]] = {}
    misses_c: list[dict] = []
    with open_service(data / "graphctx-full") as service:
        for seed, (questions, _) in sets.items():
            rows_c[seed], envs[seed] = [], []
            for q in questions:
                answer, env = ask_graphctx(service, q["symbol"], args.budget, args.limit)
                rows_c[seed].append((answer, score(q, defs, answer)))
                envs[seed].append(env)
            found = explain_graphctx(
                service, SCOPE, full, data / "gt-full", questions, rows_c[seed], envs[seed], defs
            )
            misses_c += [{**m, "seed": seed} for m in found]
            (data / f"graphctx-answers-seed{seed}-n{args.n}.json").write_text(
                json.dumps(envs[seed], indent=1)
            )

    rows_g: dict[int, list[tuple[Answer, Score]]] = {}
    misses_g: list[dict] = []
    gbuild: gfy.Build | None = None
    if not args.skip_graphify:
        exe = gfy.ensure_venv(data)
        print("graphify: building the full tree (once; cached) ...", flush=True)
        gbuild = gfy.build(exe, full, data / "graphify-full", data / "graphify-home")
        graph = gfy.Graph(data / "graphify-full" / "graphify-out" / "graph.json", defs)
        for seed, (questions, _) in sets.items():
            answers = ask_graphify_all(exe, graph, full, data, seed, args.n, args.budget, questions)
            rows_g[seed] = [(a, score(q, defs, a)) for q, a in zip(questions, answers, strict=True)]
            found = explain_graphify(graph, full, data / "gt-full", questions, rows_g[seed])
            misses_g += [{**m, "seed": seed} for m in found]

    pooled_q = [q for questions, _ in sets.values() for q in questions]
    table_rows: dict[str, dict[str, Any]] = {}
    systems = {"graphctx": rows_c, **({"graphify": rows_g} if rows_g else {})}
    for name, by_seed in systems.items():
        for seed, (questions, _) in sets.items():
            table_rows[f"{name}, seed {seed}"] = aggregate(questions, by_seed[seed])
        if len(seeds) > 1:
            table_rows[f"**{name}, pooled**"] = aggregate(
                pooled_q, [r for seed in sets for r in by_seed[seed]]
            )

    command = "python bench/token_reduction.py " + " ".join(sys.argv[1:])
    lines = "; ".join(line for _, line in sets.values())
    size = (
        f"CPython {args.root} copied to {full} ({full_files:,} .py files, {full_bytes / 1e6:.1f} MB; "
        f"site-packages and caches left out); {lines}"
    )
    per_seed = []
    for seed, (questions, _) in sets.items():
        per_seed += [
            f"<details><summary>seed {seed}: per question</summary>\n",
            question_table(questions, {name: by_seed[seed] for name, by_seed in systems.items()}),
            "\n</details>\n",
        ]
    graphify_note = "" if rows_g else "graphify skipped (--skip-graphify).\n"
    body = "\n".join(
        [
            "## Token reduction on code questions (CPython standard library)\n",
            header(command, size),
            "Question set: ../shared/eval (`build_gt.py` + `make_questions.py`, seeds "
            f"{', '.join(map(str, seeds))}, N = {args.n} each), run as subprocesses. Budget {args.budget:,} "
            "tokens per answer for both systems. graphctx: `ContextService.symbol` (definition card, callers "
            "with tests among them marked, callees, other tests; per-direction limit "
            f"{args.limit or 'left at the operation default'}), "
            f"tokens = ceil(JSON bytes / 4) of the whole envelope. graphify {gfy.VERSION}: "
            "`graphify explain NAME --all` on its AST-only graph, tokens = ceil(output bytes / 4) summed "
            "over every call an agent needs (the dotted name, then `file::Class.name`, then `file::name`, "
            "then the candidate id after an ambiguity refusal).\n",
            "Scoring: definition exact = file and line range equal to the ground truth (the ground truth "
            "starts a definition at its `def` line; graphctx's range of a decorated definition starts at its "
            "first decorator and its card names the `def_line`, which is what is compared); callers / "
            "callees are compared as qualified names: graphctx's callers (a test calling the symbol is one "
            "of them), not the `tests` that reach the symbol through fixtures or helpers. graphify's "
            "neighbours are named by their node's file and first line, and only `calls` / `indirect_call` "
            "edges count. Aggregates come from summed counts (micro averages; pooled = every question of "
            "every seed); 'correct evidence items' = exact definitions + true callers + true callees "
            "found.\n",
            tree_check(sets[seeds[0]][0], seeds[0], args.n),
            f"graphify is installed by the script into `{data / 'graphify-venv'}` (`pip install "
            f"{gfy.PACKAGE}` in a fresh virtualenv, `_code_graphify.ensure_venv`); its graph is built "
            "with `graphify extract TREE --code-only --no-cluster` (local AST, no API key) inside "
            "`unshare -n`, i.e. with no network at all.\n",
            "Reading the comparison: graphify stores only a node's first line, so no definition can be "
            "exact (its start lines are all right). Its `explain` names neighbours by label and call site, "
            "not by qualified name or definition file; the scoring here credits it with the node it means "
            "(looked up in graph.json), which is generous. graphctx names every neighbour by qualified name "
            "with its file and line range and the call lines, and its envelope carries provenance, counts, "
            "omissions and timings. 'Extra' items are calls the ground truth does not resolve; they are not "
            "necessarily wrong (see the categories).\n",
            "### Aggregate\n",
            aggregate_table(table_rows),
            "",
            token_split([e for seed in sets for e in envs[seed]]),
            "### Per question (recall / precision as found / ground truth and found / returned)\n",
            *per_seed,
            "### Every miss, explained\n",
            misses_section("graphctx", misses_c),
            misses_section("graphify", misses_g) if rows_g else graphify_note,
        ]
    )
    print(body)
    if args.write:
        write_section("token_reduction", body)

    if not args.skip_code_index:
        code_index(args, data, nontest, gctx_index, gbuild, command, full_files, full_bytes)


def code_index(
    args: argparse.Namespace,
    data: Path,
    nontest: Path,
    full_index: dict[str, Any],
    full_build: gfy.Build | None,
    command: str,
    full_files: int,
    full_bytes: int,
) -> None:
    files, size = copy_tree(args.root, nontest, with_tests=False)
    print("graphctx: indexing the non-test tree (once; cached) ...", flush=True)
    info = ensure_index(data / "graphctx-nontest", nontest)
    rows = [
        "| system | tree | files | build / index s | no-op re-index s | on disk MB (allocated, as du) "
        "| nodes | edges | load avg before |",
        "|---|---|---|---|---|---|---|---|---|",
    ]

    def g_row(name: str, tree: str, n: int, rec: dict[str, Any]) -> str:
        r = rec["report"]
        parts = ", ".join(
            f"{k} {v / 1e6:.0f}" for k, v in sorted(rec.get("store_parts", {}).items()) if v > 1e6
        )
        nodes = (r.get("modules") or 0) + (r.get("symbols") or 0)
        return (
            f"| {name} | {tree} | {n:,} | {rec['seconds']:.1f} | {rec['noop_seconds']:.1f} | "
            f"{rec['store_bytes'] / 1e6:.1f} ({parts}) | {nodes:,} | {r.get('edges') or 0:,} | "
            f"{rec.get('load_before', float('nan')):.1f} |"
        )

    rows.append(
        g_row("graphctx (embedded: SQLite + tantivy + qdrant-edge, wordllama)", "non-test", files, info)
    )
    rows.append(g_row("graphctx", "full (questions)", full_files, full_index))
    notes = []
    if not args.skip_graphify:
        exe = gfy.ensure_venv(data)
        print("graphify: building the non-test tree (once; cached) ...", flush=True)
        b = gfy.build(exe, nontest, data / "graphify-nontest", data / "graphify-home")
        for tree, rec in (("non-test", b), ("full (questions)", full_build)):
            if rec is None:
                continue
            rows.append(
                f"| graphify {gfy.VERSION} (`extract --code-only --no-cluster`, graph.json) | {tree} | "
                f"{rec.files:,} | {rec.seconds:.1f} | {rec.noop_seconds:.1f} | {rec.out_bytes / 1e6:.1f} "
                f"(graph.json {rec.graph_bytes / 1e6:.1f}) | {rec.nodes:,} | {rec.edges:,} | "
                f"{rec.load_before:.1f} |"
            )
        notes.append(
            f"graphify ran {'inside `unshare -n` (no network)' if b.offline else 'with network access'} "
            "with no API key set; its own directory filter skips a directory named `venv`, so the "
            "standard library's `venv` package is not in its graph."
        )
    r = info["report"]
    body = "\n".join(
        [
            "## Code index: build time and store size (CPython standard library)\n",
            header(
                command,
                f"non-test standard library: {files:,} .py files, {size / 1e6:.1f} MB (tests as in "
                f"make_questions.py: test/, */tests/, idle_test, tkinter/test, unittest/test; site-packages "
                f"left out); full tree {full_files:,} files, {full_bytes / 1e6:.1f} MB",
            ),
            "Each build starts from an empty store; its time comes from the run that built it (stores are "
            "kept in --data-dir between runs; `--rebuild` redoes them). The no-op re-index (graphctx "
            "compares content hashes and writes nothing; graphify re-runs `extract` on its cache) is "
            "measured on every run. Nodes: graphctx modules + symbols; graphify all "
            "nodes (it also makes nodes for docstrings and external names).\n",
            "\n".join(rows),
            "",
            f"graphctx non-test index summary: {r.get('files_seen')} files seen, {r.get('modules')} modules, "
            f"{r.get('symbols')} symbols, {r.get('edges')} edges, calls {r.get('calls')} "
            f"(resolved {r.get('resolved_calls')}, unresolved {r.get('unresolved_calls')}), parse errors "
            f"{r.get('parse_error_count')}; the no-op re-index wrote "
            f"{info['noop_report'].get('entities_written')} entities and "
            f"{info['noop_report'].get('facts_written')} facts.",
            "",
            *notes,
        ]
    )
    print(body)
    if args.write:
        write_section("code_index", body)


if __name__ == "__main__":
    main()
