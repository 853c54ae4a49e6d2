"""The dense leg at 100,000 vectors per scope: brute force (one float32 BLAS pass, the flat index without
codes) beside the flat index's int8 codes (adapters/flat/codes.py: exact by construction) and, when the
`usearch` package is installed (`pip install usearch`; not a graphctx dependency), per-scope HNSW at
several search widths, on the same vectors and queries in one run. Recall@10 is against brute force;
"2 threads" is the time two threads take for the queries split between them over one thread's time for
all of them (0.5: the search runs fully outside the GIL, 1.0: not at all). Prints; writes its section of
docs/results.md only with --write.

Two corpora, embedded with the default embedder (wordllama):
- synthetic: bench/recall_latency.py's generator (random-letter words, zipf): near-duplicate vectors,
  the hardest case for pruning;
- text: Cranfield abstracts, LoCoMo turns and the standard library's definitions (name + docstring),
  queried with Cranfield's queries and LoCoMo's questions.

    python bench/dense_leg.py --size 100000 --queries 200 --write
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import re
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from _report import header, percentile, write_section
from recall_latency import make_scope_data, queries, vocabulary
from token_reduction import DEFAULT_ROOT

from graphctx.adapters.embedders import create_wordllama
from graphctx.adapters.flat import FlatVectorIndex
from graphctx.adapters.flat.index import limit_blas_threads
from graphctx.kernel.ports import VectorRecord
from graphctx.scope import Scope

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
SCOPE = Scope("bench")
K = 10
HNSW_EF = (64, 128, 256)


def synthetic(size: int, n_queries: int) -> tuple[list[str], list[str]]:
    vocab = vocabulary(random.Random(size))
    entities, _ = make_scope_data(random.Random(size * 100), vocab, size)
    texts = [f"{e['name']} {e['summary']}" for e in entities]
    return texts, queries(random.Random(1), entities, n_queries)


def text_corpus(size: int, n_queries: int, data: Path) -> tuple[list[str], list[str]]:
    texts: list[str] = []
    raw = (data / "cranfield" / "cran.all.1400").read_text()
    for doc in raw.split(".I ")[1:]:
        m = re.search(r"\.W\n(.*)", doc, re.S)
        if m and m.group(1).strip():
            texts.append(" ".join(m.group(1).split()))
    conversations = json.loads((data / "locomo" / "locomo10.json").read_text())
    asked: list[str] = []
    for conv in conversations:
        for value in conv["conversation"].values():
            if isinstance(value, list):
                texts += [f"{t['speaker']}: {t['text']}" for t in value]
        asked += [q["question"] for q in conv.get("qa", []) if q.get("question")]
    for path in sorted(DEFAULT_ROOT.rglob("*.py")):
        if len(texts) >= size:
            break
        try:
            tree = ast.parse(path.read_text(errors="ignore"))
        except (SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                texts.append(f"{node.name} {(ast.get_docstring(node) or '')[:400]}")
    cran_queries = [
        " ".join(q.split(".W", 1)[1].split())
        for q in (data / "cranfield" / "cran.qry").read_text().split(".I ")[1:]
        if ".W" in q
    ]
    rng = random.Random(2)
    pool = cran_queries + rng.sample(asked, min(len(asked), 2 * n_queries))
    return texts[:size], rng.sample(pool, min(n_queries, len(pool)))


def timed(search: Callable[[np.ndarray], list[str]], qs: np.ndarray) -> tuple[list[float], list[list[str]]]:
    for q in qs[:5]:
        search(q)
    ms, got = [], []
    for q in qs:
        t0 = time.perf_counter()
        got.append(search(q))
        ms.append((time.perf_counter() - t0) * 1000)
    return ms, got


def two_threads(search: Callable[[np.ndarray], list[str]], qs: np.ndarray) -> float:
    def run(part: Sequence[np.ndarray]) -> None:
        for q in part:
            search(q)

    t0 = time.perf_counter()
    run(qs)
    one = time.perf_counter() - t0
    threads = [threading.Thread(target=run, args=(qs[i::2],)) for i in range(2)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return (time.perf_counter() - t0) / one


def recall(got: list[list[str]], truth: list[list[str]]) -> float:
    return float(np.mean([len(set(g) & set(t)) / len(t) for g, t in zip(got, truth, strict=True) if t]))


def measure(name: str, texts: list[str], qtexts: list[str], embedder, work: Path) -> tuple[str, list[str]]:
    started = time.perf_counter()
    matrix = np.asarray(embedder.embed(texts), dtype=np.float32)
    qs = np.asarray(embedder.embed(qtexts), dtype=np.float32)
    embed_s = time.perf_counter() - started
    ids = [f"d{i:06d}" for i in range(len(texts))]
    path = work / name
    index = FlatVectorIndex(path, embedder.model_id, embedder.dimension, codes_min_rows=0)
    for start in range(0, len(ids), 10_000):
        index.upsert(
            SCOPE,
            [
                VectorRecord(entity_id=i, content_hash="h", vector=v)
                for i, v in zip(ids[start : start + 10_000], matrix[start : start + 10_000], strict=True)
            ],
        )
    index.flush()
    brute = FlatVectorIndex(path, embedder.model_id, embedder.dimension, read_only=True, codes_min_rows=0)
    coded = FlatVectorIndex(path, embedder.model_id, embedder.dimension, read_only=True, codes_min_rows=1)
    t0 = time.perf_counter()
    coded.build_codes(SCOPE)
    code_s = time.perf_counter() - t0

    def via(ix: FlatVectorIndex) -> Callable[[np.ndarray], list[str]]:
        return lambda q: [h.entity_id for h in ix.search(SCOPE, q, K)]

    rows: list[tuple[str, list[float], float, float, str]] = []
    brute_ms, truth = timed(via(brute), qs)
    rows.append(
        ("brute force (float32 BLAS, flat without codes)", brute_ms, 1.0, two_threads(via(brute), qs), "-")
    )
    coded_ms, got = timed(via(coded), qs)
    memory = coded.caches()["flat_codes"]["bytes"] / 2**20
    rows.append(
        (
            "int8 codes + exact rescoring (flat, default)",
            coded_ms,
            recall(got, truth),
            two_threads(via(coded), qs),
            f"{code_s:.2f} s, {memory:.0f} MiB",
        )
    )
    notes = [f"{name}: {len(texts):,} vectors, {len(qs)} queries, embedded in {embed_s:.0f} s"]
    try:
        from usearch.index import Index
    except ImportError:
        notes.append("usearch is not installed: HNSW not measured (`pip install usearch`)")
    else:
        keys = np.arange(len(ids), dtype=np.uint64)
        hnsw = Index(ndim=matrix.shape[1], metric="ip", dtype="f32", connectivity=16, expansion_add=128)
        t0 = time.perf_counter()
        hnsw.add(keys, matrix, threads=1)
        build_s = time.perf_counter() - t0
        for ef in HNSW_EF:
            hnsw.expansion_search = ef

            def search(q: np.ndarray, ix: Index = hnsw) -> list[str]:
                return [ids[int(key)] for key in ix.search(q, K, threads=1).keys]

            ms, got = timed(search, qs)
            rows.append(
                (
                    f"HNSW (usearch {_version()}, M=16, ef_search={ef}, float32)",
                    ms,
                    recall(got, truth),
                    two_threads(search, qs),
                    f"{build_s:.1f} s",
                )
            )
    for ix in (coded, brute, index):
        ix.close()
    table = [
        "| search | p50 / p95 / p99 ms | ÷ brute force (p50) | recall@10 against brute force | 2 threads "
        "| build |",
        "|---|---|---|---|---|---|",
    ]
    base = percentile(brute_ms, 0.5)
    for label, ms, rec, par, build in rows:
        p = [percentile(ms, q) for q in (0.5, 0.95, 0.99)]
        table.append(
            f"| {label} | {p[0]:.2f} / {p[1]:.2f} / {p[2]:.2f} | {p[0] / base:.2f}x | {rec:.4f} "
            f"| {par:.2f} | {build} |"
        )
    return f"#### {name}\n\n" + "\n".join(table) + "\n", notes


def _version() -> str:
    import importlib.metadata

    return importlib.metadata.version("usearch")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument(
        "--data", type=Path, default=DATA, help="the shared data directory (cranfield, locomo)"
    )
    parser.add_argument("--write", action="store_true", help="write the section into docs/results.md")
    args = parser.parse_args()
    limit_blas_threads()
    embedder = create_wordllama()
    parts, notes = [], []
    with tempfile.TemporaryDirectory(prefix="dense-leg-") as tmp:
        for name, (texts, qtexts) in (
            ("synthetic", synthetic(args.size, args.queries)),
            ("text", text_corpus(args.size, args.queries, args.data)),
        ):
            part, more = measure(name, texts, qtexts, embedder, Path(tmp))
            print(part, flush=True)
            parts.append(part)
            notes += more
    command = "python bench/dense_leg.py " + " ".join(sys.argv[1:])
    body = (
        "### The dense leg at scale: brute force, int8 codes, HNSW\n\n"
        + header(command, "; ".join(notes) + f"; embedder {embedder.model_id}, one scope, k = {K}")
        + "\nOne process, one BLAS thread, searches through the port (`FlatVectorIndex.search`) for brute "
        "force and codes, usearch's own `search` for HNSW. The codes' recall is 1 by construction "
        "(adapters/flat/codes.py); the column checks it.\n\n" + "\n".join(parts)
    )
    print(body)
    if args.write:
        write_section("dense_leg", body)


if __name__ == "__main__":
    main()
