"""Retrieval quality side by side, one process per dataset: plain BM25, dense alone, RRF of the two,
and graphctx through `ContextService` at the default budget and at 20,000 tokens.

Usage (from the repository root):

    python bench/retrieval_quality.py [--data ../shared/data] [--datasets cranfield,locomo,code]
        [--code-set DIR] [--seed 0] [--write]

Datasets:
- **cranfield** (SMART format: `cran.all.1400`, `cran.qry`, `cranqrel`; any collection in that format
  works with `--cranfield DIR`): one memory entity per document (name = title, summary = abstract),
  `recall`; nDCG@10 and nDCG@8 (recall answers at most 8 items) with gains 4/3/2/1.
- **locomo** (`locomo10.json` or another file of that shape with `--locomo FILE`): one tenant per
  conversation in ONE store, one memory entity per turn (summary "[session date] speaker: text"), whose
  indexed-only search text is the observation facts the dataset's authors extracted from that turn (what
  a memory writer that summarises as it stores would keep; the reference systems index the same text);
  `recall`; evidence recall@10 over categories 1-4: the share of a question's evidence turn ids among
  the turns returned (graphctx: its at most 8 items; the references: their top 10), and the number of
  items from another tenant.
- **code** (a set built by `bench/build_code_set.py`): the docstring-stripped tree indexed with
  `graphctx index`, `search`; the query is the documentation's description of a definition; MRR@10,
  hit@1, recall@10. BM25, dense and RRF run over the stripped source of every definition.

The reference BM25 is Tantivy with its English stemmer (`en_stem`) over one text field holding exactly
the text graphctx is given, queried with one SHOULD term query per analysed token. Dense uses graphctx's
default embedder over the same text. RRF fuses the top 100 of each (k = 60).

Queries are split into a development and a held-out half by a seeded hash of their id (`--seed`):
analyser and field-weight choices are made on `dev`, and `test` is what is reported.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import header, median, write_section
from embedders import _normalise_evidence, load_cranfield

REPO = Path(__file__).resolve().parent.parent
BUDGETS = (None, 20_000)  # None: the operation's default (1,500 tokens for recall and search)
POOL = 100  # candidates each reference leg contributes to its RRF


# ------------------------------------------------------------------------------------------- data


@dataclass
class Doc:
    key: str  # what relevance judgments name
    text: str  # what the reference systems index (exactly what graphctx is given)
    tenant: str
    entity: dict[str, Any] | None = None  # memory entity for graphctx (None: code, indexed from files)


@dataclass
class Query:
    qid: str
    text: str
    tenant: str
    relevant: dict[str, int]  # doc key -> gain
    category: str = ""


@dataclass
class Dataset:
    name: str
    docs: list[Doc]
    queries: list[Query]
    op: str  # "recall" | "search"
    metrics: tuple[str, ...]
    size: str
    code_root: Path | None = None


def cranfield(root: Path) -> Dataset:
    texts, queries, qrels = load_cranfield(root)
    raw = (root / "cran.all.1400").read_text(encoding="utf-8", errors="replace")
    titles = [" ".join(t.split()) for t in re.findall(r"\n\.T\n(.*?)\n\.A", "\n" + raw, re.S)]
    docs = []
    for n, text in enumerate(texts, start=1):
        title = titles[n - 1] if n - 1 < len(titles) else ""
        abstract = text[len(title) :].strip() if text.startswith(title) else text
        entity = {
            "id": f"cran-{n}",
            "name": (title or f"document {n}")[:1000],
            "type": "paper",
            "summary": abstract[:4000],
            "source": f"cranfield:{n}",
        }
        docs.append(Doc(str(n), text, "cranfield", entity))
    qs = [
        Query(str(i), q, "cranfield", {str(d): g for d, g in qrels.get(i, {}).items()})
        for i, q in enumerate(queries, start=1)
        if qrels.get(i)
    ]
    size = f"{len(docs):,} documents, {len(qs)} judged queries"
    return Dataset("cranfield", docs, qs, "recall", ("ndcg@10", "ndcg@8"), size)


def _session_dates(conv: dict[str, Any]) -> dict[str, str]:
    out = {}
    for key, value in conv.items():
        m = re.fullmatch(r"session_(\d+)_date_time", key)
        if m and isinstance(value, str):
            out[m.group(1)] = value.split(" on ", 1)[-1].strip()
    return out


def _observations(sample: dict[str, Any]) -> dict[str, list[str]]:
    """Turn id -> the observation facts the LoCoMo authors extracted from that turn."""
    out: dict[str, list[str]] = {}
    for per_speaker in sample.get("observation", {}).values():
        for items in per_speaker.values():
            for item in items:
                if isinstance(item, list) and len(item) >= 2:
                    cited = [item[1]] if isinstance(item[1], str) else item[1]
                    for dia in _normalise_evidence(cited):
                        out.setdefault(dia, []).append(str(item[0]))
    return out


def locomo(path: Path) -> Dataset:
    data = json.loads(path.read_text(encoding="utf-8"))
    docs: list[Doc] = []
    queries: list[Query] = []
    for n, sample in enumerate(data):
        tenant = f"locomo-{n}"
        conv = sample["conversation"]
        dates = _session_dates(conv)
        observed = _observations(sample)
        known: set[str] = set()
        for key in sorted(
            (k for k in conv if re.fullmatch(r"session_\d+", k) and isinstance(conv[k], list)),
            key=lambda k: int(k.split("_")[1]),
        ):
            date = dates.get(key.split("_")[1], "")
            for turn in conv[key]:
                dia = str(turn["dia_id"])
                text = (
                    f"[{date}] {turn['speaker']}: {turn['text']}"
                    if date
                    else f"{turn['speaker']}: {turn['text']}"
                )
                entity = {
                    "id": f"turn:{dia}",
                    "name": f"{turn['speaker']} {dia}",
                    "type": "turn",
                    "summary": text[:4000],
                    "source": f"{tenant}:{dia}",
                }
                notes = " ".join(observed.get(dia, []))
                if notes:  # what a memory writer extracted from the turn: indexed, never shown
                    entity["search_text"] = notes[:8000]
                docs.append(Doc(dia, f"{text} {notes}".strip(), tenant, entity))
                known.add(dia)
        for i, qa in enumerate(sample["qa"]):
            if qa.get("category") in (1, 2, 3, 4) and qa.get("evidence"):
                evidence = _normalise_evidence(qa["evidence"])
                queries.append(
                    Query(
                        f"{tenant}/{i}",
                        str(qa["question"]),
                        tenant,
                        dict.fromkeys(evidence, 1),
                        str(qa["category"]),
                    )
                )
    size = (
        f"{len(data)} conversations (one tenant each, one store), {len(docs):,} turns, "
        f"{len(queries):,} questions"
    )
    return Dataset("locomo", docs, queries, "recall", ("recall@10",), size)


def code(root: Path) -> Dataset:
    meta = json.loads((root / "set.json").read_text(encoding="utf-8"))
    docs = [
        Doc(r["qualified_name"], r["text"], "code")
        for r in map(json.loads, (root / "corpus.jsonl").read_text(encoding="utf-8").splitlines())
    ]
    queries = [
        Query(r["id"], r["query"], "code", {r["qualified_name"]: 1}, r.get("kind", ""))
        for r in map(json.loads, (root / "queries.jsonl").read_text(encoding="utf-8").splitlines())
    ]
    size = (
        f"{meta['package']} {meta['version']} ({meta['files']} files, docstrings stripped): "
        f"{len(docs):,} definitions, {len(queries):,} questions"
    )
    return Dataset("code", docs, queries, "search", ("mrr@10", "hit@1", "recall@10"), size, root / "tree")


# ---------------------------------------------------------------------------------------- metrics


def ndcg(ranked: Sequence[str], relevant: dict[str, int], k: int) -> float:
    dcg = sum(relevant.get(d, 0) / math.log2(r + 2) for r, d in enumerate(ranked[:k]))
    ideal = sorted(relevant.values(), reverse=True)[:k]
    idcg = sum(g / math.log2(r + 2) for r, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def score(metric: str, ranked: Sequence[str], relevant: dict[str, int]) -> float:
    name, _, k_text = metric.partition("@")
    k = int(k_text)
    if name == "ndcg":
        return ndcg(ranked, relevant, k)
    if name == "recall":
        return len(set(ranked[:k]) & set(relevant)) / len(relevant)
    if name == "hit":
        return float(any(d in relevant for d in ranked[:k]))
    if name == "mrr":
        return next((1.0 / (r + 1) for r, d in enumerate(ranked[:k]) if d in relevant), 0.0)
    raise ValueError(metric)


def split_of(qid: str, seed: int) -> str:
    digest = hashlib.sha256(f"{seed}:{qid}".encode()).digest()
    return "dev" if digest[0] % 2 == 0 else "test"


# ------------------------------------------------------------------------------ reference systems


class Bm25:
    """Tantivy with the English stemmer over one text field; term queries from the analyser's tokens."""

    def __init__(self, docs: Sequence[Doc]) -> None:
        import tantivy

        self.t = tantivy
        builder = tantivy.SchemaBuilder()
        builder.add_text_field("key", stored=True, tokenizer_name="raw")
        builder.add_text_field("tenant", tokenizer_name="raw")
        builder.add_text_field("text", tokenizer_name="en_stem")
        self.schema = builder.build()
        self.index = tantivy.Index(self.schema)
        writer = self.index.writer(heap_size=64_000_000, num_threads=1)
        for doc in docs:
            writer.add_document(tantivy.Document(key=doc.key, tenant=doc.tenant, text=doc.text))
        writer.commit()
        writer.wait_merging_threads()
        self.index.reload()
        self.analyzer = (
            tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
            .filter(tantivy.Filter.remove_long(40))
            .filter(tantivy.Filter.lowercase())
            .filter(tantivy.Filter.stemmer("english"))
            .build()
        )

    def search(self, tenant: str, text: str, k: int) -> list[str]:
        t = self.t
        tokens = self.analyzer.analyze(text)
        if not tokens:
            return []
        terms = [(t.Occur.Should, t.Query.term_query(self.schema, "text", tok)) for tok in tokens]
        query = t.Query.boolean_query(
            [
                (t.Occur.Must, t.Query.term_query(self.schema, "tenant", tenant)),
                (t.Occur.Must, t.Query.boolean_query(terms)),
            ]
        )
        searcher = self.index.searcher()
        hits = searcher.search(query, k).hits
        return [searcher.doc(address).get_first("key") for _, address in hits]


class Dense:
    def __init__(self, docs: Sequence[Doc], embedder: Any) -> None:
        self.embedder = embedder
        self.tenants: dict[str, tuple[list[str], np.ndarray]] = {}
        by_tenant: dict[str, list[Doc]] = {}
        for doc in docs:
            by_tenant.setdefault(doc.tenant, []).append(doc)
        for tenant, group in by_tenant.items():
            texts = [d.text if d.text.strip() else "(empty)" for d in group]
            self.tenants[tenant] = ([d.key for d in group], np.asarray(embedder.embed(texts)))

    def search(self, tenant: str, text: str, k: int) -> list[str]:
        keys, matrix = self.tenants[tenant]
        query = np.asarray(self.embedder.embed([text]))[0]
        order = np.argsort(-(matrix @ query), kind="stable")[:k]
        return [keys[i] for i in order]


def rrf(*lists: Sequence[str], k: int = 60) -> list[str]:
    scores: dict[str, float] = {}
    for ranked in lists:
        for rank, key in enumerate(ranked, start=1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
    return sorted(scores, key=lambda key: (-scores[key], key))


# ------------------------------------------------------------------------------------------ graphctx


@dataclass
class Answer:
    ranked: list[str]
    legs: list[dict[str, Any]]  # per returned item: its match card
    truncated: bool
    used: int
    max_tokens: int
    omitted: int
    foreign: int


@dataclass
class Graphctx:
    service: Any
    scopes: dict[str, Any]
    op: str
    keys_by_source: dict[str, str] = field(default_factory=dict)

    def ask(self, query: Query, max_tokens: int | None) -> Answer:
        scope = self.scopes[query.tenant]
        call = self.service.recall if self.op == "recall" else self.service.search
        env = call(scope, query.text, max_tokens=max_tokens)
        ranked, legs, foreign = [], [], 0
        for item in env["items"]:
            if self.op == "recall":
                tenant, _, key = str(item.get("source", "")).partition(":")
                if tenant != query.tenant:
                    foreign += 1
                    continue
            else:
                key = item.get("qualified_name") or item["name"]
            ranked.append(key)
            legs.append(item.get("match", {}))
        omitted = sum(o.get("count", 0) for o in env["omissions"] if o.get("what") == "items")
        return Answer(
            ranked,
            legs,
            bool(env["truncated"]),
            int(env["budget"]["used_tokens"]),
            int(env["budget"]["max_tokens"]),
            omitted,
            foreign,
        )


def open_graphctx(dataset: Dataset, data_dir: Path) -> tuple[Graphctx, float]:
    from graphctx.scope import Scope
    from graphctx.service import ContextService
    from graphctx.settings import Settings

    service = ContextService.open(Settings(data_dir=data_dir))
    started = time.perf_counter()
    scopes: dict[str, Any] = {}
    if dataset.code_root is not None:
        scope = Scope("bench", "code")
        scopes["code"] = scope
        service.index_repository(scope, dataset.code_root)
    else:
        by_tenant: dict[str, list[dict[str, Any]]] = {}
        for doc in dataset.docs:
            assert doc.entity is not None
            by_tenant.setdefault(doc.tenant, []).append(doc.entity)
        for tenant, entities in by_tenant.items():
            scopes[tenant] = Scope(tenant, "bench")
            service.remember(scopes[tenant], entities)
    return Graphctx(service, scopes, dataset.op), time.perf_counter() - started


# ---------------------------------------------------------------------------------------------- run


@dataclass
class Row:
    system: str
    values: dict[str, dict[str, list[float]]] = field(default_factory=dict)  # split -> metric -> values

    def add(self, split: str, metric: str, value: float) -> None:
        self.values.setdefault(split, {}).setdefault(metric, []).append(value)
        self.values.setdefault("all", {}).setdefault(metric, []).append(value)

    def mean(self, split: str, metric: str) -> float:
        values = self.values.get(split, {}).get(metric, [])
        return sum(values) / len(values) if values else float("nan")


def run(dataset: Dataset, seed: int, budgets: Sequence[int | None]) -> dict[str, Any]:
    from graphctx.registry import factory
    from graphctx.settings import Settings

    settings = Settings()
    embedder = factory("embedder", settings.embedder)(settings)
    t0 = time.perf_counter()
    bm25 = Bm25(dataset.docs)
    dense = Dense(dataset.docs, embedder)
    reference_s = time.perf_counter() - t0
    systems: dict[str, Callable[[Query], list[str]]] = {
        "BM25 (tantivy en_stem)": lambda q: bm25.search(q.tenant, q.text, POOL),
        f"dense ({embedder.model_id})": lambda q: dense.search(q.tenant, q.text, POOL),
    }
    rows = {name: Row(name) for name in systems}
    rrf_name = "RRF(BM25, dense)"
    rows[rrf_name] = Row(rrf_name)
    with tempfile.TemporaryDirectory(prefix="graphctx-quality-") as tmp:
        graphctx, load_s = open_graphctx(dataset, Path(tmp))
        answers: dict[str, list[tuple[Query, Answer, float]]] = {}
        try:
            for query in dataset.queries:
                split = split_of(query.qid, seed)
                lists = {name: fn(query) for name, fn in systems.items()}
                lists[rrf_name] = rrf(*lists.values())
                for name, ranked in lists.items():
                    for metric in dataset.metrics:
                        rows[name].add(split, metric, score(metric, ranked, query.relevant))
                for budget in budgets:
                    label = f"graphctx {dataset.op} @ {budget or 'default'}"
                    started = time.perf_counter()
                    answer = graphctx.ask(query, budget)
                    answers.setdefault(label, []).append((query, answer, time.perf_counter() - started))
                    row = rows.setdefault(label, Row(label))
                    for metric in dataset.metrics:
                        row.add(split, metric, score(metric, answer.ranked, query.relevant))
        finally:
            graphctx.service.close()
    return {
        "dataset": dataset,
        "rows": rows,
        "answers": answers,
        "load_s": load_s,
        "reference_s": reference_s,
        "seed": seed,
    }


def leg_contributions(items: list[tuple[Query, Answer, float]]) -> dict[str, Any]:
    """How the relevant items graphctx returned were found, and how it failed."""
    found = {
        "exact": 0,
        "bm25": 0,
        "dense": 0,
        "bm25+dense": 0,
        "exact only": 0,
        "bm25 only": 0,
        "dense only": 0,
    }
    relevant_items = 0
    exact_first_wrong = 0
    empty = 0
    for query, answer, _ in items:
        if not answer.ranked:
            empty += 1
        if answer.legs and answer.legs[0].get("exact") and answer.ranked[0] not in query.relevant:
            exact_first_wrong += 1
        for key, match in zip(answer.ranked, answer.legs, strict=True):
            if key not in query.relevant:
                continue
            relevant_items += 1
            legs = {leg for leg in ("exact", "bm25", "dense") if match.get(leg)}
            for leg in legs:
                found[leg] += 1
            if {"bm25", "dense"} <= legs:
                found["bm25+dense"] += 1
            if len(legs) == 1:
                found[f"{next(iter(legs))} only"] += 1
    n = len(items)
    return {
        "relevant_items": relevant_items,
        "found": found,
        "empty": empty,
        "exact_first_wrong": exact_first_wrong,
        "truncated": sum(a.truncated for _, a, _ in items),
        "items_mean": sum(len(a.ranked) for _, a, _ in items) / n if n else 0.0,
        "omitted_mean": sum(a.omitted for _, a, _ in items) / n if n else 0.0,
        "unused_share": median([1 - a.used / a.max_tokens for _, a, _ in items]),
        "foreign": sum(a.foreign for _, a, _ in items),
        "p50_ms": median([s * 1000 for _, _, s in items]),
    }


def report(results: list[dict[str, Any]], command: str) -> str:
    lines = ["## Retrieval quality: graphctx beside plain BM25, dense and RRF", ""]
    sizes = "; ".join(f"{r['dataset'].name}: {r['dataset'].size}" for r in results)
    lines.append(header(command, sizes))
    for result in results:
        ds: Dataset = result["dataset"]
        rows: dict[str, Row] = result["rows"]
        lines += [f"### {ds.name}", ""]
        n_dev = len(rows[next(iter(rows))].values.get("dev", {}).get(ds.metrics[0], []))
        n_test = len(rows[next(iter(rows))].values.get("test", {}).get(ds.metrics[0], []))
        lines.append(
            f"Queries: {n_dev} dev / {n_test} held-out (seed {result['seed']}); graphctx load "
            f"{result['load_s']:.1f} s. Figures: held-out (dev) [all]."
        )
        lines.append("")
        lines.append("| system | " + " | ".join(ds.metrics) + " |")
        lines.append("|---|" + "---|" * len(ds.metrics))
        for name, row in rows.items():
            cells = [
                f"**{row.mean('test', m):.3f}** ({row.mean('dev', m):.3f}) [{row.mean('all', m):.3f}]"
                for m in ds.metrics
            ]
            lines.append(f"| {name} | " + " | ".join(cells) + " |")
        lines += ["", "graphctx answers (all queries):", ""]
        lines.append(
            "| answer | items (mean) | truncated | items omitted (mean) | unused budget (median) | "
            "relevant items found by exact / bm25 / dense / both legs | bm25 only / dense only | "
            "exact-first wrong | empty | foreign items | p50 ms |"
        )
        lines.append("|---|---|---|---|---|---|---|---|---|---|---|")
        for label, items in result["answers"].items():
            c = leg_contributions(items)
            f = c["found"]
            lines.append(
                f"| {label} | {c['items_mean']:.2f} | {c['truncated']}/{len(items)} | "
                f"{c['omitted_mean']:.2f} | "
                f"{c['unused_share']:.0%} | {f['exact']} / {f['bm25']} / {f['dense']} / {f['bm25+dense']} | "
                f"{f['bm25 only']} / {f['dense only']} | {c['exact_first_wrong']} | {c['empty']} | "
                f"{c['foreign']} | {c['p50_ms']:.1f} |"
            )
        lines.append("")
    return "\n".join(lines)


def _default_data() -> Path:
    """../shared/data beside the checkout (a worktree under wt/ looks one level further up)."""
    for base in (REPO.parent, REPO.parent.parent):
        if (base / "shared" / "data").is_dir():
            return base / "shared" / "data"
    return REPO.parent / "shared" / "data"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=_default_data())
    parser.add_argument("--datasets", default="cranfield,locomo,code")
    parser.add_argument("--cranfield", type=Path, default=None, help="a SMART-format collection directory")
    parser.add_argument("--locomo", type=Path, default=None, help="a LoCoMo-format JSON file")
    parser.add_argument(
        "--code-set", type=Path, default=Path.home() / ".cache" / "graphctx-bench" / "code-set"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--write", action="store_true", help="write the section of docs/results.md")
    parser.add_argument("--json", type=Path, default=None, help="also write every figure as JSON")
    args = parser.parse_args(argv)

    results = []
    for name in args.datasets.split(","):
        if name == "cranfield":
            ds = cranfield(args.cranfield or args.data / "cranfield")
        elif name == "locomo":
            ds = locomo(args.locomo or args.data / "locomo" / "locomo10.json")
        elif name == "code":
            if not (args.code_set / "set.json").exists():
                print(
                    f"no code set at {args.code_set}; build one with bench/build_code_set.py", file=sys.stderr
                )
                return 2
            ds = code(args.code_set)
        else:
            parser.error(f"unknown dataset {name!r}")
        print(f"[{name}] {ds.size}", file=sys.stderr)
        result = run(ds, args.seed, BUDGETS)
        results.append(result)
        for row in result["rows"].values():
            figures = ", ".join(
                f"{m} {row.mean('test', m):.3f} (dev {row.mean('dev', m):.3f})" for m in ds.metrics
            )
            print(f"  {row.system}: {figures}", file=sys.stderr)
        for label, items in result["answers"].items():
            print(f"  {label}: {leg_contributions(items)}", file=sys.stderr)
    command = "python bench/retrieval_quality.py " + " ".join(argv if argv is not None else sys.argv[1:])
    text = report(results, command.strip())
    print(text)
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    r["dataset"].name: {
                        name: {
                            s: {m: row.mean(s, m) for m in r["dataset"].metrics}
                            for s in ("dev", "test", "all")
                        }
                        for name, row in r["rows"].items()
                    }
                    for r in results
                },
                indent=1,
            )
        )
    if args.write:
        write_section("retrieval_quality", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
