"""Go code intelligence measured against Go's own type checker, on a slice of the machine's Go
standard library ($(go env GOROOT)/src).

The ground truth is bench/go_truth (go/packages + go/types, built here with the Go toolchain; it
shares no code with the indexer): definitions with line ranges and static call edges, loaded for
linux/amd64 without cgo, tests included. The slice's package directories (their own .go files,
tests included; no subdirectories unless listed) are copied beside the standard library's go.mod
and indexed by graphctx; only edges whose both ends are in the slice are scored. Questions follow
../shared/eval/make_questions.py's rules: a function or method outside test files with 2-30
distinct callers and at least one callee; baseline = bytes/4 of its defining file and every file
holding a caller (tests included) or a callee. graphctx answers each with `symbol` (default budget);
returned tokens are ceil(JSON bytes / 4). Misses are listed with their call line and categorised.

    python bench/go_code.py --write                          # the default slice, seeds 0 and 10-13
    python bench/go_code.py --packages strings bytes --seeds 0 --n 10
    python bench/go_code.py --all --write                    # every package of `go list std`
    python bench/go_code.py --module DIR --write             # a third-party module (go.mod at DIR)

`--module DIR` measures a Go module instead (a copy of DIR, e.g. a version unpacked by
`go mod download -json MODULE@VERSION`): its packages are every directory of it holding .go files
(testdata, vendor and hidden ones left out, as the go command does); the ground truth loads `./...`
there, its dependencies fetched by the go command from the module proxy, and only edges whose both
ends are in the module are scored.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import shutil
import subprocess
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from _report import header, write_section

from graphctx.envelope import dumps
from graphctx.errors import AmbiguousName, GraphctxError
from graphctx.scope import Scope
from graphctx.service import ContextService
from graphctx.settings import Settings

HERE = Path(__file__).resolve().parent
GO = shutil.which("go") or "/usr/local/go/bin/go"
SCOPE = Scope("go-bench")
REPO = "gostd"
WHY = ("function_values", "dynamic", "external", "ambiguous")
SLICE = [
    "bufio",
    "bytes",
    "strings",
    "strconv",
    "unicode",
    "unicode/utf8",
    "unicode/utf16",
    "errors",
    "sort",
    "slices",
    "maps",
    "fmt",
    "io",
    "io/fs",
    "path",
    "path/filepath",
    "regexp",
    "regexp/syntax",
    "text/template",
    "text/template/parse",
    "text/tabwriter",
    "text/scanner",
    "encoding/json",
    "encoding/base64",
    "encoding/hex",
    "encoding/csv",
    "encoding/binary",
    "net/url",
    "container/list",
    "container/heap",
    "container/ring",
    "html",
]


def goroot() -> Path:
    return Path(
        subprocess.run([GO, "env", "GOROOT"], check=True, capture_output=True, text=True).stdout.strip()
    )


def copy_slice(src: Path, dest: Path, packages: list[str]) -> int:
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    shutil.copy2(src / "go.mod", dest / "go.mod")
    files = 0
    for pkg in packages:
        for f in sorted((src / pkg).glob("*.go")):
            (dest / pkg).mkdir(parents=True, exist_ok=True)
            shutil.copy2(f, dest / pkg / f.name)
            files += 1
    return files


def copy_module(src: Path, dest: Path) -> tuple[int, list[str]]:
    """A writable copy of the module at src (the module cache's files are read-only); its .go file
    count and its package directories, relative to its root ('' for the root package)."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(src, dest, copy_function=shutil.copyfile)
    for d in [dest, *(p for p in dest.rglob("*") if p.is_dir())]:
        d.chmod(0o755)

    def skipped(rel: Path) -> bool:
        return any(part in ("testdata", "vendor") or part[:1] in (".", "_") for part in rel.parts)

    files = [f.relative_to(dest) for f in dest.rglob("*.go") if not skipped(f.relative_to(dest).parent)]
    dirs = sorted({"" if f.parent == Path(".") else f.parent.as_posix() for f in files})
    return len(files), dirs


def module_path(tree: Path) -> str:
    for line in (tree / "go.mod").read_text().splitlines():
        if line.startswith("module "):
            return line.split()[1].strip('"')
    raise SystemExit(f"{tree / 'go.mod'} names no module")


def ground_truth(
    src: Path, patterns: list[str], packages: list[str], out: Path
) -> tuple[dict[str, dict], list[dict], float]:
    """go_truth's records for `patterns` loaded at src, kept to the package directories `packages`."""
    binary = out.parent / "gotruth"
    subprocess.run([GO, "build", "-o", str(binary), "."], cwd=HERE / "go_truth", check=True)
    started = time.perf_counter()
    subprocess.run([str(binary), "-dir", str(src), "-out", str(out), *patterns], check=True)
    seconds = time.perf_counter() - started
    records = [json.loads(line) for line in out.read_text().splitlines()]
    inside = set(packages)
    keep = lambda key: key.split("::")[0].rpartition("/")[0] in inside  # noqa: E731
    defs = {r["key"]: r for r in records if r["kind"] == "def" and keep(r["key"])}
    calls = [r for r in records if r["kind"] == "call" and keep(r["caller"]) and keep(r["callee"])]
    return defs, calls, seconds


def questions(defs: dict[str, dict], calls: list[dict], tree: Path, n: int, seed: int) -> list[dict]:
    callers: dict[str, set[tuple[str, str, int]]] = defaultdict(set)
    callees: dict[str, set[str]] = defaultdict(set)
    for c in calls:
        if c["caller"] != c["callee"]:
            callers[c["callee"]].add((c["caller"], c["file"], c["line"]))
            callees[c["caller"]].add(c["callee"])
    pool = sorted(
        k
        for k, d in defs.items()
        if d["type"] in ("function", "method")
        and not d["file"].endswith("_test.go")
        and not d["key"].endswith("::init")
        and 2 <= len({c[0] for c in callers[k]}) <= 30
        and callees[k]
    )
    sample = random.Random(seed).sample(pool, min(n, len(pool)))
    out = []
    for k in sample:
        d = defs[k]
        files = {d["file"]} | {c[1] for c in callers[k]} | {defs[x]["file"] for x in callees[k] if x in defs}
        out.append(
            {
                "key": k,
                "qname": d["qname"],
                "at": f"{d['file']}:{d['start']}-{d['end']}",
                "callers": sorted({c[0] for c in callers[k]}),
                "callees": sorted(callees[k]),
                "call_lines": sorted((c[0], c[2]) for c in callers[k]),
                "baseline_files": len(files),
                "baseline_tokens": sum((tree / f).stat().st_size for f in files) // 4,
            }
        )
    return out


def tokens_of(data: Any) -> int:
    return math.ceil(len(dumps(data).encode("utf-8")) / 4)


def key_of(entity_id: str) -> str:
    return entity_id.split(":", 2)[2]  # go:{repo}:{path}::{member}


def ask(service: ContextService, q: dict) -> dict[str, Any]:
    """`symbol` by qualified name (by id when build variants share it), once for the tokens and once
    with ids to map the entries onto the ground truth's keys."""
    name = q["qname"]
    try:
        env = service.symbol(SCOPE, name)
    except AmbiguousName:
        name = f"go:{REPO}:{q['key']}"
        env = service.symbol(SCOPE, name)
    except GraphctxError as exc:
        return {"tokens": tokens_of(exc.to_dict()), "error": exc.code, "callers": set(), "callees": set()}
    with_ids = service.symbol(SCOPE, name, include_ids=True)
    return {
        "tokens": tokens_of(env),
        "at": env["subject"].get("at"),
        "callers": {key_of(c["id"]) for c in with_ids["callers"]},
        "callees": {key_of(c["id"]) for c in with_ids["callees"]},
        "cut": [o for o in env.get("omissions", [])],
        "asked_by": "qualified name" if name == q["qname"] else "id (build variants share the name)",
    }


SHAPES = (
    ("method value or func field", re.compile(r"\b\w+\.\w+\b(?!\()")),
    ("call on a call's result", re.compile(r"\)\.\w+\(")),
    ("call on an index expression", re.compile(r"\]\.\w+\(")),
    ("generic instantiation", re.compile(r"\w+\[[\w.*, ]+\]\(")),
)


def shape(line: str) -> str:
    for name, pattern in SHAPES[1:]:
        if pattern.search(line):
            return name
    return "other"


def beyond(key: str, gt_files: set[str]) -> str:
    """Why an edge the ground truth lacks is there: its caller is in a file outside the ground
    truth's build configuration (another GOOS, `//go:build ignore`, an experiment tag), or is a
    package-level initializer (which the ground truth does not attribute), or neither."""
    if "::" not in key:
        return "package-level initializer"
    if key.split("::", maxsplit=1)[0] not in gt_files:
        return "file outside linux/amd64"
    return "unexplained"


def source_line(tree: Path, rel: str, line: int) -> str:
    try:
        return (tree / rel).read_text(errors="replace").splitlines()[line - 1].strip()
    except (OSError, IndexError):
        return ""


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--packages", nargs="*", default=SLICE)
    parser.add_argument(
        "--all", action="store_true", help="every package of `go list std` (the whole library)"
    )
    parser.add_argument(
        "--module", type=Path, help="a Go module's directory (go.mod at its root), not the standard library"
    )
    parser.add_argument("--seeds", nargs="*", type=int, default=[0, 10, 11, 12, 13])
    parser.add_argument("--n", type=int, default=20)
    parser.add_argument("--data-dir", type=Path, default=HERE / ".work" / "go_code")
    parser.add_argument("--write", action="store_true", help="write the section into docs/results.md")
    args = parser.parse_args()
    if args.all:
        listed = subprocess.run([GO, "list", "std"], check=True, capture_output=True, text=True).stdout
        args.packages = sorted(listed.split())
    data: Path = args.data_dir
    data.mkdir(parents=True, exist_ok=True)
    tree = data / "tree"
    if args.module:
        copied, args.packages = copy_module(args.module, tree)
        defs, calls, gt_seconds = ground_truth(tree, ["./..."], args.packages, data / "truth.jsonl")
    else:
        src = goroot() / "src"
        copied = copy_slice(src, tree, args.packages)
        defs, calls, gt_seconds = ground_truth(src, args.packages, args.packages, data / "truth.jsonl")
    gt_files = {d["file"] for d in defs.values()} | {c["file"] for c in calls}
    store = data / "store"
    if store.exists():
        shutil.rmtree(store)
    with ContextService.open(Settings(data_dir=store)) as service:
        started = time.perf_counter()
        report = service.index_repository(SCOPE, tree, repo=REPO)
        index_seconds = time.perf_counter() - started
        started = time.perf_counter()
        again = service.index_repository(SCOPE, tree, repo=REPO)
        noop_seconds = time.perf_counter() - started
        assert again.entities_written == 0 and again.facts_written == 0, again.as_dict()
        store_bytes = sum(f.stat().st_size for f in store.rglob("*") if f.is_file())
        per_seed: dict[int, dict[str, Any]] = {}
        misses: list[str] = []
        miss_kinds: Counter[str] = Counter()
        for seed in args.seeds:
            rows = []
            for q in questions(defs, calls, tree, args.n, seed):
                a = ask(service, q)
                gt_callers, gt_callees = set(q["callers"]), set(q["callees"])
                hit_callers = a["callers"] & gt_callers
                hit_callees = a["callees"] & gt_callees
                rows.append((q, a, hit_callers, hit_callees))
                for caller, line in q["call_lines"]:
                    if caller not in a["callers"]:
                        text = source_line(tree, caller.split("::")[0], line)
                        kind = shape(text)
                        miss_kinds[f"caller: {kind}"] += 1
                        misses.append(
                            f"| {seed} | caller | `{caller}` → `{q['key']}` | {line} | `{text[:90]}` "
                            f"| {kind} |"
                        )
                for callee in sorted(gt_callees - a["callees"]):
                    miss_kinds["callee"] += 1
                    misses.append(f"| {seed} | callee | `{q['key']}` → `{callee}` | | | |")
                for extra in sorted(a["callers"] - gt_callers):
                    kind = beyond(extra, gt_files)
                    miss_kinds[f"extra caller: {kind}"] += 1
                    misses.append(f"| {seed} | extra caller | `{extra}` → `{q['key']}` | | | {kind} |")
                for extra in sorted(a["callees"] - gt_callees):
                    miss_kinds["callee beyond the ground truth"] += 1
                    misses.append(f"| {seed} | extra callee | `{q['key']}` → `{extra}` | | | |")
            per_seed[seed] = {
                "rows": rows,
                "baseline": sum(q["baseline_tokens"] for q, *_ in rows),
                "returned": sum(a["tokens"] for _, a, *_ in rows),
                "defs": sum(1 for q, a, *_ in rows if a.get("at") == q["at"]),
                "callers": (sum(len(h) for *_, h, _ in rows), sum(len(q["callers"]) for q, *_ in rows),
                            sum(len(a["callers"]) for _, a, *_ in rows)),
                "callees": (sum(len(h) for *_, h in rows), sum(len(q["callees"]) for q, *_ in rows),
                            sum(len(a["callees"]) for _, a, *_ in rows)),
            }  # fmt: skip
    go = report.languages.get("go", {})
    body = render(args, per_seed, misses, miss_kinds, go, copied, len(defs), len(calls), gt_seconds,
                  index_seconds, noop_seconds, store_bytes, report.as_dict())  # fmt: skip
    print(body)
    if args.write:
        if args.module:
            write_section("go_code_module_" + re.sub(r"\W+", "_", module_path(tree)), body)
        else:
            write_section("go_code_std" if args.all else "go_code", body)


def ratio(hit: int, total: int) -> str:
    return f"{hit / total:.3f}" if total else "-"


def render(args, per_seed, misses, miss_kinds, go, copied, n_defs, n_calls, gt_seconds, index_seconds,
           noop_seconds, store_bytes, report) -> str:  # fmt: skip
    command = "python bench/go_code.py" + (" --write" if args.write else "")
    if args.module:
        command += f" --module {args.module}"
    elif args.all:
        command += " --all"
    elif args.packages != SLICE:
        command += " --packages " + " ".join(args.packages)
    if args.seeds != [0, 10, 11, 12, 13]:
        command += " --seeds " + " ".join(map(str, args.seeds))
    version = subprocess.run([GO, "version"], check=True, capture_output=True, text=True).stdout.strip()
    what = "packages of `go list std`" if args.all else "slice"
    title = f"standard-library {what}"
    of = f"the standard library of {version}"
    if args.module:
        what = title = f"module `{module_path(args.module)}` ({args.module.name})"
        of = f"{title}, indexed with {version}"
    size = (f"{len(args.packages)} packages of {of} "
            f"({copied} .go files, tests included); ground truth {n_defs:,} definitions, {n_calls:,} static "
            f"call edges inside the {what}")  # fmt: skip
    lines = [
        f"## Go code intelligence against Go's type checker ({title})",
        "",
        header(command, size),
        f"Packages: {' '.join(p or '.' for p in args.packages)}. "
        "Ground truth: bench/go_truth (go/packages + go/types, "
        f"typeutil.StaticCallee; linux/amd64, CGO_ENABLED=0), {gt_seconds:.1f} s. Questions: "
        f"{args.n} per seed, make_questions.py's rules. graphctx answers with `symbol` at its default "
        "budget.",
        "",
        "| seed | questions | baseline tokens | returned tokens | reduction | definitions exact | "
        "callers recall / precision | callees recall / precision |",
        "|---|---|---|---|---|---|---|---|",
    ]
    pooled = {"baseline": 0, "returned": 0, "defs": 0, "n": 0, "callers": [0, 0, 0], "callees": [0, 0, 0]}
    for seed, s in per_seed.items():
        n = len(s["rows"])
        ch, ct, ca = s["callers"]
        kh, kt, ka = s["callees"]
        lines.append(
            f"| {seed} | {n} | {s['baseline']:,} | {s['returned']:,} | "
            f"{1 - s['returned'] / s['baseline']:.1%} | "
            f"{s['defs']}/{n} | {ratio(ch, ct)} / {ratio(ch, ca)} | {ratio(kh, kt)} / {ratio(kh, ka)} |"
        )
        pooled["baseline"] += s["baseline"]
        pooled["returned"] += s["returned"]
        pooled["defs"] += s["defs"]
        pooled["n"] += n
        for key in ("callers", "callees"):
            pooled[key] = [a + b for a, b in zip(pooled[key], s[key], strict=True)]
    ch, ct, ca = pooled["callers"]
    kh, kt, ka = pooled["callees"]
    lines.append(
        f"| pooled | {pooled['n']} | {pooled['baseline']:,} | {pooled['returned']:,} | "
        f"{1 - pooled['returned'] / pooled['baseline']:.1%} | {pooled['defs']}/{pooled['n']} | "
        f"{ratio(ch, ct)} / {ratio(ch, ca)} | {ratio(kh, kt)} / {ratio(kh, ka)} |"
    )
    lines += [
        "",
        f"Index of the {'slice' if not (args.all or args.module) else 'tree'}: {index_seconds:.1f} s "
        f"({report['files_seen']} files, "
        f"{go.get('packages', 0)} packages; "
        f"{go.get('symbols', 0):,} symbols, {report['facts_written']:,} edges written), no-op re-index "
        f"{noop_seconds:.2f} s (nothing written), store {store_bytes / 1e6:.1f} MB. Calls seen "
        f"{go.get('calls', 0):,}: resolved {go.get('resolved_calls', 0):,}, "
        f"builtin {go.get('builtin_calls', 0):,}, "
        "left unresolved by why: "
        + ", ".join(f"{k} {go[k]:,}" for k in WHY if k in go)
        + f", other {go.get('unresolved_calls', 0) - sum(go.get(k, 0) for k in WHY):,}"
        + f"; conversions (not calls) {go.get('conversions', 0):,}.",
        "",
        "Misses by kind: " + (", ".join(f"{k} {v}" for k, v in miss_kinds.most_common()) or "none") + ".",
        "A caller miss is a call site whose receiver's type only a type checker knows (a range variable, "
        "a field of an element of a slice, a name declared with different values); an extra caller sits "
        "in a file the ground truth's linux/amd64 build leaves out (another GOOS, `//go:build ignore`, an "
        "experiment tag): a real static edge of another configuration.",
        "",
        (
            "Not measured here: graphify side by side (index time: the index_side_by_side_go section); "
            "`go list std` leaves out cmd/ and testdata; timings are single runs on a shared 2-core machine."
            if args.all
            else "Not measured here: graphify side by side; timings are single runs on a shared 2-core "
            "machine."
            if args.module
            else "Not measured here: the whole standard library (this is a slice of it; `--all` runs it), "
            "graphify side by side, and the Python benchmarks beside these; timings are single runs on a "
            "shared 2-core machine."
        ),
    ]
    if misses:
        lines += [
            "",
            "| seed | missed | edge | line | source | shape |",
            "|---|---|---|---|---|---|",
            *misses[:60],
        ]
        if len(misses) > 60:
            lines.append(f"\n({len(misses) - 60} more misses not listed.)")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
