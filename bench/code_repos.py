"""Code intelligence on real third-party repositories with different layouts, each checked against an
independent ground truth (../shared/eval's builder pointed at the repository with its import roots,
declared by hand below — see bench/_code_gt.py), side by side with graphify.

Per repository: the import roots graphctx discovers, index time (first index and a no-op re-index)
for graphctx and graphify, every call edge graphctx resolves against the ground truth's (recall and
precision, and the edges from tests and examples into the packages), and a seeded question set
(make_questions.py on the repository: definition exact, callers / callees recall and precision,
tokens). For the src-layout repository the same tree laid out flat is indexed too, and the recall of
both is compared.

    python bench/code_repos.py --write
    python bench/code_repos.py --only click --skip-graphify

Sources: PyPI sdists through pip (`pip download --no-binary :all: --no-deps NAME==VERSION`) and a
GitHub snapshot of a monorepo read from a local git mirror (`--mirror`, `git archive` at a pinned
commit). Everything lives in --data-dir and is reused between runs.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import _code_graphify as gfy
from _code_data import Answer, score
from _code_gt import FlatView, GroundTruth, GtRoot, build, flat_view, questions
from _report import header, write_section
from token_reduction import ask_graphctx

from graphctx.code import ids
from graphctx.kernel.reads import batches, stored_hashes
from graphctx.kernel.templates import ENTITY_GET, FACTS_FROM_ROOTS, EntityGetParams, FactsFromRootsParams
from graphctx.scope import Scope
from graphctx.service import ContextService
from graphctx.settings import Settings

SCOPE = Scope("bench")
CLICK_EXAMPLES = (
    "aliases", "colors", "completion", "complex", "imagepipe", "inout", "naval", "repo", "termui",
    "validation",
)  # fmt: skip
OTEL_MIRROR = Path("/work/.mirror/open-telemetry+opentelemetry-python/repo")
OTEL_COMMIT = "0a5d76b65"


def _otel_roots(repo: Path) -> list[GtRoot]:
    """Every project's `src/` (each project's pyproject.toml ships `src/opentelemetry`)."""
    return [
        GtRoot(p.parent.relative_to(repo).as_posix() + "/src")
        for p in sorted(repo.rglob("pyproject.toml"))
        if (p.parent / "src").is_dir()
    ]


@dataclass
class Spec:
    name: str
    version: str
    layout: str
    fetch: Callable[[Path], Path]
    roots: Callable[[Path], list[GtRoot]]
    compare_flat: bool = False
    notes: str = ""


def pypi(requirement: str) -> Callable[[Path], Path]:
    def fetch(into: Path) -> Path:
        name, _, version = requirement.partition("==")
        target = into / f"{name}-{version}"
        if target.is_dir():
            return target
        downloads = into / "sdists"
        downloads.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-binary", ":all:", "--no-deps",
             "--dest", str(downloads), requirement],
            check=True,
        )  # fmt: skip
        archive = next(downloads.glob(f"{name}-{version}.tar.gz"))
        with tarfile.open(archive) as tar:
            tar.extractall(into, filter="data")
        return target

    return fetch


def mirror(path: Path, commit: str, name: str) -> Callable[[Path], Path]:
    def fetch(into: Path) -> Path:
        target = into / f"{name}-{commit}"
        if target.is_dir():
            return target
        if not path.is_dir():
            raise FileNotFoundError(f"no git mirror at {path} (pass --mirror)")
        target.mkdir(parents=True)
        archive = subprocess.run(["git", "-C", str(path), "archive", commit], check=True, capture_output=True)
        subprocess.run(["tar", "x", "-C", str(target)], input=archive.stdout, check=True)
        return target

    return fetch


def specs(otel_mirror: Path) -> list[Spec]:
    return [
        Spec(
            "click", "8.1.7", "src layout (setup.cfg `package_dir = =src`, `find:` under src)",
            pypi("click==8.1.7"),
            lambda _: [GtRoot("src"), *(GtRoot(f"examples/{e}", (e,)) for e in CLICK_EXAMPLES)],
            compare_flat=True,
            notes="each example is its own project (setup.py) and is rooted in its directory",
        ),
        Spec(
            "httpx", "0.27.0", "flat package (Hatch, default package detection)",
            pypi("httpx==0.27.0"),
            lambda _: [GtRoot("", ("httpx",))],
        ),
        Spec(
            "opentelemetry-python", OTEL_COMMIT,
            "monorepo: 27 Hatch projects, each `packages = [\"src/opentelemetry\"]`, one namespace package",
            mirror(otel_mirror, OTEL_COMMIT, "opentelemetry-python"),
            _otel_roots,
            notes="GitHub open-telemetry/opentelemetry-python at " + OTEL_COMMIT,
        ),
    ]  # fmt: skip


# -- graphctx -----------------------------------------------------------------------------------


def settings(store: Path) -> Settings:
    return Settings(data_dir=store)


def index(store: Path, tree: Path, repo: str) -> dict[str, Any]:
    """A first index into an empty store and a no-op re-index, timed."""
    shutil.rmtree(store, ignore_errors=True)
    load = os.getloadavg()[0]
    with ContextService.open(settings(store)) as service:
        started = time.perf_counter()
        report = service.index_repository(SCOPE, tree, repo=repo)
        first = time.perf_counter() - started
        started = time.perf_counter()
        noop = service.index_repository(SCOPE, tree, repo=repo)
        again = time.perf_counter() - started
    return {
        "seconds": first,
        "noop_seconds": again,
        "report": report.as_dict(),
        "noop": noop.as_dict(),
        "load": load,
    }


def call_edges(service: ContextService, repo: str) -> dict[tuple[str, str], tuple[str, int]]:
    """Every `calls` edge of the repository: (caller, callee) qualified names -> (file, first call line)."""
    graph = service.stores.graph
    owned = [h.id for prefix in ids.prefixes(repo) for h in stored_hashes(graph, SCOPE, prefix)]
    names: dict[str, str] = {}
    paths: dict[str, str] = {}
    for chunk in batches(owned, 1000):
        for e in graph.run(ENTITY_GET, SCOPE, EntityGetParams(ids=tuple(chunk))).entities:
            names[e.id] = e.qualified_name or e.name
            paths[e.id] = e.path or ""
    found: dict[tuple[str, str], tuple[str, int]] = {}
    groups = [list(c) for c in batches([i for i in owned if i.startswith("py:")], 8)]
    while groups:
        roots = groups.pop()
        params = FactsFromRootsParams(roots=tuple(roots), predicates=("calls",), direction="out", limit=80)
        got = graph.run(FACTS_FROM_ROOTS, SCOPE, params)
        if got.truncated and len(roots) > 1:
            groups += [roots[: len(roots) // 2], roots[len(roots) // 2 :]]
            continue
        for f in got.facts:
            if f.object_id in names:
                line = int((f.value or "0").split(",")[0] or 0)
                found[(names[f.subject_id], names[f.object_id])] = (paths.get(f.subject_id, ""), line)
    return found


EXTRA_KINDS = (
    (re.compile(r"\bsuper\(\)\."), "`super()` calls"),
    (re.compile(r"\b(self|cls)\.\w+\s*\("), "`self`/`cls` methods found through bases in other modules"),
    (re.compile(r"\)\s*\.\s*\w+\s*\("), "calls on a call's result (`Foo().bar()`, declared return types)"),
)
OTHER_KIND = "names bound once to an instance (annotations, `x = Foo()`, declared returns) or an alias"


def extra_kinds(tree: Path, ours: dict[tuple[str, str], tuple[str, int]], gt: GroundTruth) -> dict[str, int]:
    """What the edges graphctx resolves beyond the ground truth are, by the shape of the call line."""
    truth = {(e["caller"], e["callee"]) for e in gt.edges}
    lines: dict[str, list[str]] = {}
    kinds: dict[str, int] = {}
    for edge, (path, line) in ours.items():
        if edge in truth:
            continue
        if path not in lines:
            source = tree / path
            lines[path] = source.read_text(errors="replace").splitlines() if source.is_file() else []
        text = lines[path][line - 1] if 0 < line <= len(lines[path]) else ""
        kind = next((k for pattern, k in EXTRA_KINDS if pattern.search(text)), OTHER_KIND)
        kinds[kind] = kinds.get(kind, 0) + 1
    return kinds


@dataclass
class EdgeScore:
    found: int
    truth: int
    returned: int
    from_tests_found: int
    from_tests_truth: int

    def recall(self) -> float:
        return self.found / self.truth if self.truth else float("nan")

    def precision(self) -> float:
        return self.found / self.returned if self.returned else float("nan")


def _is_test_or_example(rel: str) -> bool:
    parts = rel.split("/")
    return any(p in ("tests", "test", "examples", "docs") for p in parts[:-1]) or parts[-1].startswith(
        "test_"
    )


def edge_score(ours: dict[tuple[str, str], tuple[str, int]], gt: GroundTruth) -> EdgeScore:
    truth = {(e["caller"], e["callee"]) for e in gt.edges}
    rooted = {q for q, d in gt.defs.items() if not _is_test_or_example(d["file"])}
    from_tests = {
        (e["caller"], e["callee"])
        for e in gt.edges
        if _is_test_or_example(e["file"]) and e["callee"] in rooted
    }
    mine = set(ours)
    return EdgeScore(len(mine & truth), len(truth), len(mine), len(mine & from_tests), len(from_tests))


# -- one repository -----------------------------------------------------------------------------


@dataclass
class Result:
    spec: Spec
    tree: Path
    files: int
    gt_roots: list[str]
    discovered: list[str]
    collisions: list[str]
    index: dict[str, Any]
    edges: EdgeScore
    questions: list[dict]
    question_line: str
    graphctx: list[tuple[Answer, Any]]
    graphify: list[tuple[Answer, Any]] = field(default_factory=list)
    graphify_build: gfy.Build | None = None
    flat: dict[str, Any] | None = None
    extras: dict[str, int] = field(default_factory=dict)


def run_repo(spec: Spec, data: Path, args: argparse.Namespace) -> Result:
    repos = data / "repos"
    repos.mkdir(parents=True, exist_ok=True)
    tree = spec.fetch(repos)
    roots = spec.roots(tree)
    view = flat_view(tree, roots, data / "flat" / spec.name)
    gt = build(view, data / "gt" / spec.name)
    print(f"{spec.name}: ground truth {gt.stats['defs']} defs, {len(gt.edges)} edges", flush=True)
    rows, line = questions(view, gt, args.n, args.seed)
    info = index(data / "stores" / spec.name, tree, spec.name)
    print(f"{spec.name}: indexed in {info['seconds']:.1f} s (no-op {info['noop_seconds']:.1f} s)", flush=True)
    with ContextService.open(settings(data / "stores" / spec.name)) as service:
        ours = call_edges(service, spec.name)
        answered = [ask_graphctx(service, q["symbol"], args.budget) for q in rows]
    gdefs = gt.defs
    graded = [(a, score(q, gdefs, a)) for q, (a, _) in zip(rows, answered, strict=True)]
    result = Result(
        spec, tree, len(view.to_repo) + len(view.collisions), [r.directory or "." for r in roots],
        info["report"]["roots"], view.collisions, info, edge_score(ours, gt), rows, line, graded,
        extras=extra_kinds(tree, ours, gt),
    )  # fmt: skip
    if spec.compare_flat:
        result.flat = flat_run(spec, view, gt, rows, data, args)
    if not args.skip_graphify:
        exe = gfy.ensure_venv(data)
        result.graphify_build = gfy.build(exe, tree, data / "graphify" / spec.name, data / "graphify-home")
        graph = gfy.Graph(
            data / "graphify" / spec.name / "graphify-out" / "graph.json", gdefs, modules=module_names(view)
        )
        for q in rows:
            answer, _ = gfy.ask(exe, graph, tree, q["symbol"], args.budget, locate=locator(gdefs))
            result.graphify.append((answer, score(q, gdefs, answer)))
    return result


def flat_run(
    spec: Spec, view: FlatView, gt: GroundTruth, rows: list[dict], data: Path, args: argparse.Namespace
) -> dict[str, Any]:
    """The same tree laid out flat, indexed and scored against the same ground truth."""
    info = index(data / "stores" / f"{spec.name}-flat", view.tree, f"{spec.name}-flat")
    with ContextService.open(settings(data / "stores" / f"{spec.name}-flat")) as service:
        ours = call_edges(service, f"{spec.name}-flat")
        answered = [ask_graphctx(service, q["symbol"], args.budget) for q in rows]
    flat_defs = {q: {**d, "file": _flat_path(view, d["file"])} for q, d in gt.defs.items()}
    graded = [(a, score(q, flat_defs, a)) for q, (a, _) in zip(rows, answered, strict=True)]
    return {"index": info, "edges": edge_score(ours, gt), "graphctx": graded}


def _flat_path(view: FlatView, repo_path: str) -> str:
    return next((flat for flat, rel in view.to_repo.items() if rel == repo_path), repo_path)


def module_names(view: FlatView) -> dict[str, str]:
    """Repository file -> the module name the ground truth gives it (build_gt.py's rule on the flat
    path), for graphify's module-level callers."""
    out = {}
    for flat, rel in view.to_repo.items():
        parts = flat[: -len(".py")].split("/")
        out[rel] = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    return out


def locator(defs: dict[str, dict]) -> Callable[[str], tuple[str, str] | None]:
    """How an agent finds a symbol's file by listing the tree: for graphify, which knows paths only."""
    files: dict[str, str] = {}
    for q, d in defs.items():
        files.setdefault(q, d["file"])

    def locate(qualified: str) -> tuple[str, str] | None:
        parts = qualified.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            module, rest = ".".join(parts[:cut]), ".".join(parts[cut:])
            for q, f in files.items():
                if q == f"{module}.{rest}" and f:
                    return f, rest
        return None

    return locate


# -- report -------------------------------------------------------------------------------------


def pct(x: float) -> str:
    return "—" if math.isnan(x) else f"{x:.1%}"


def totals(graded: list[tuple[Answer, Any]], rows: list[dict]) -> dict[str, Any]:
    base = sum(q["baseline_tokens"] for q in rows)
    toks = sum(a.tokens for a, _ in graded)
    get = lambda k: sum(getattr(s, k) for _, s in graded)  # noqa: E731
    return {
        "n": len(graded),
        "baseline": base,
        "tokens": toks,
        "reduction": 1 - toks / base if base else float("nan"),
        "def": get("def_exact"),
        "callers": (get("callers_found"), get("callers_gt"), get("callers_returned")),
        "callees": (get("callees_found"), get("callees_gt"), get("callees_returned")),
        "errors": sum(1 for a, _ in graded if a.error),
    }


def question_row(name: str, t: dict[str, Any]) -> str:
    cf, cg, cr = t["callers"]
    kf, kg, kr = t["callees"]

    def ratio(a: int, b: int) -> str:
        return f"{a / b:.1%} ({a}/{b})" if b else "—"

    return (
        f"| {name} | {t['n']} | {t['baseline']:,} | {t['tokens']:,} | {pct(t['reduction'])} | "
        f"{t['def']}/{t['n']} | {ratio(cf, cg)} | {ratio(cf, cr)} | {ratio(kf, kg)} | {ratio(kf, kr)} | "
        f"{t['errors']} |"
    )


def edge_row(name: str, tree: str, e: EdgeScore) -> str:
    tests = e.from_tests_found / e.from_tests_truth if e.from_tests_truth else float("nan")
    return (
        f"| {name} | {tree} | {e.truth:,} | {e.returned:,} | {pct(e.recall())} | {pct(e.precision())} | "
        f"{pct(tests)} ({e.from_tests_found}/{e.from_tests_truth}) |"
    )


def index_row(r: Result) -> str:
    gb = r.graphify_build
    found = r.discovered
    roots = "; ".join(found) if len(found) <= 4 else f"{len(found)} roots ({found[0]}, …)"
    graphify = f"{gb.seconds:.1f} | {gb.noop_seconds:.1f}" if gb else "— | —"
    return (
        f"| {r.spec.name} {r.spec.version} | {r.spec.layout} | {r.files:,} | {roots} | "
        f"{r.index['seconds']:.1f} | {r.index['noop_seconds']:.1f} | {graphify} | {r.index['load']:.1f} |"
    )


def notes_of(r: Result) -> list[str]:
    notes = []
    if r.flat is not None:
        e, f = r.edges, r.flat["edges"]
        notes.append(
            f"{r.spec.name}: call edges (callers) recall {pct(e.recall())} as published vs {pct(f.recall())} "
            f"laid out flat, {abs(e.recall() - f.recall()) * 100:.2f} points apart; the flat tree indexed in "
            f"{r.flat['index']['seconds']:.1f} s."
        )
    if r.collisions:
        notes.append(
            f"{r.spec.name}: {len(r.collisions)} files share a flat path with another and are not in the "
            f"ground truth: {', '.join(r.collisions[:5])}"
        )
    if r.spec.notes:
        roots = ", ".join(r.gt_roots[:6]) + (" …" if len(r.gt_roots) > 6 else "")
        notes.append(f"{r.spec.name}: {r.spec.notes}; ground-truth roots: {roots}.")
    if r.extras:
        kinds = "; ".join(f"{k}: {n:,}" for k, n in sorted(r.extras.items(), key=lambda kv: -kv[1]))
        notes.append(f"{r.spec.name}: edges beyond the ground truth, by the shape of the call line: {kinds}.")
    rep = r.index["report"]
    notes.append(
        f"{r.spec.name}: graphctx index summary: {rep['modules']} modules, {rep['symbols']} symbols, calls "
        f"{rep['calls']} (resolved {rep['resolved_calls']}, unresolved {rep['unresolved_calls']}, "
        f"builtins {rep['builtin_calls']}); question set: {r.question_line}."
    )
    return notes


def report(results: list[Result], command: str, seed: int) -> str:
    index_rows = [
        "| repository | layout | .py files | import roots graphctx found | graphctx index s | no-op s | "
        "graphify build s | no-op s | load before |",
        "|---|---|---|---|---|---|---|---|---|",
        *map(index_row, results),
    ]
    edge_rows = [
        "| repository | tree | ground-truth call edges | graphctx edges | recall | precision | "
        "edges from tests / examples / docs into the code: recall |",
        "|---|---|---|---|---|---|---|",
    ]
    q_rows = [
        "| repository, system | questions | baseline tokens | returned tokens | reduction | "
        "definitions exact | callers recall | callers precision | callees recall | callees precision | "
        "no answer |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    notes: list[str] = []
    for r in results:
        edge_rows.append(edge_row(r.spec.name, "as published", r.edges))
        q_rows.append(question_row(f"{r.spec.name}, graphctx", totals(r.graphctx, r.questions)))
        if r.flat is not None:
            edge_rows.append(edge_row(r.spec.name, "the same tree laid out flat", r.flat["edges"]))
            flat = totals(r.flat["graphctx"], r.questions)
            q_rows.append(question_row(f"{r.spec.name} laid out flat, graphctx", flat))
        if r.graphify:
            q_rows.append(question_row(f"{r.spec.name}, graphify", totals(r.graphify, r.questions)))
        notes += notes_of(r)
    size = ", ".join(f"{r.spec.name} {r.spec.version} ({r.files:,} .py files)" for r in results)
    return "\n".join(
        [
            "## Code intelligence on real repositories (three layouts)\n",
            header(command, size),
            "Ground truth: ../shared/eval's `build_gt.py` run on each repository laid out flat by its "
            "import roots (declared by hand in bench/code_repos.py, not by graphctx's discovery; "
            "bench/_code_gt.py), paths mapped back; call edges are compared as (caller, callee) qualified "
            "names, so a module named wrongly counts as a miss. The question set is `make_questions.py` "
            f"on the same tree (seed {seed}, N = up to 20; its pool rule is the standard library's), asked "
            "of graphctx's `symbol` by qualified name and of graphify's `explain` (given the file, as an "
            "agent listing the tree would find it) at a 20,000-token budget, scored as in the "
            "standard-library benchmark. graphify ran inside `unshare -n` with no API key. Extra edges "
            "graphctx resolves beyond the ground truth (typed locals, bound-method aliases, calls inside "
            "chains, base-class methods in other modules) lower the precision figure without being wrong.\n",
            "### Index\n",
            "\n".join(index_rows),
            "",
            "### Call edges against the ground truth\n",
            "\n".join(edge_rows),
            "",
            "### Questions\n",
            "\n".join(q_rows),
            "",
            *(f"- {n}" for n in notes),
            "",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--data-dir", type=Path, default=Path.home() / ".cache" / "graphctx-bench" / "repos-bench"
    )
    parser.add_argument("--mirror", type=Path, default=OTEL_MIRROR, help="git mirror of opentelemetry-python")
    parser.add_argument("--only", action="append", help="run only these repositories (repeatable)")
    parser.add_argument("--n", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--budget", type=int, default=20_000)
    parser.add_argument("--skip-graphify", action="store_true")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    data = args.data_dir.expanduser().resolve()
    results = []
    for spec in specs(args.mirror):
        if args.only and spec.name not in args.only:
            continue
        results.append(run_repo(spec, data, args))
    command = "python bench/code_repos.py " + " ".join(sys.argv[1:])
    body = report(results, command, args.seed)
    print(body)
    (data / "last-report.md").write_text(body)
    if args.write:
        write_section("code_repos", body)


if __name__ == "__main__":
    main()
