"""Choose the lexical leg's field weights by measurement on the DEVELOPMENT split only.

Usage (from the repository root):

    python bench/tune_lexical.py [--data ../shared/data] [--code-set DIR] [--seed 0] [--rounds 2]

Indexes each dataset of bench/retrieval_quality.py once into a RAM `TantivyLexicalIndex` (the same
documents graphctx builds from its entities: `graphctx.indexing.lexical_doc`), then runs coordinate
ascent over the query-time field weights (`graphctx.adapters.tantivy.query.Weights`): each field in
turn takes the value of GRID that maximises the mean, over datasets, of the dev metric of the lexical
leg alone (top 10) divided by the reference BM25's dev metric. The held-out split is never read. It prints
the chosen weights and both splits' figures; copy the weights into `Weights` by hand and re-run
bench/retrieval_quality.py for the held-out figures.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import retrieval_quality as rq

GRID = (0.0, 0.25, 0.5, 1.0, 2.0, 3.0)


def lexical_docs(ds: rq.Dataset) -> dict[str, list[Any]]:
    """Per tenant, the lexical documents graphctx writes for the dataset's entities."""
    from graphctx.indexing import lexical_doc
    from graphctx.model import Entity

    if ds.code_root is not None:
        return {"code": code_docs(ds.code_root)}
    out: dict[str, list[Any]] = {}
    for doc in ds.docs:
        assert doc.entity is not None
        out.setdefault(doc.tenant, []).append(lexical_doc(Entity(**doc.entity)))
    return out


def code_docs(root: Path) -> list[Any]:
    import tempfile

    from graphctx.indexing import lexical_doc
    from graphctx.kernel.reads import stored_hashes
    from graphctx.kernel.templates import ENTITY_GET, EntityGetParams
    from graphctx.scope import Scope
    from graphctx.service import ContextService
    from graphctx.settings import Settings

    scope = Scope("bench", "code")
    with tempfile.TemporaryDirectory() as tmp, ContextService.open(Settings(data_dir=Path(tmp))) as svc:
        svc.index_repository(scope, root)
        ids = [h.id for h in stored_hashes(svc.stores.graph, scope)]
        docs = []
        for i in range(0, len(ids), 1000):
            got = svc.stores.graph.run(ENTITY_GET, scope, EntityGetParams(ids=tuple(ids[i : i + 1000])))
            docs += [lexical_doc(e) for e in got.entities]
    return docs


class Bench:
    def __init__(self, ds: rq.Dataset, seed: int) -> None:
        from graphctx.adapters.tantivy import TantivyLexicalIndex
        from graphctx.scope import Scope

        self.ds = ds
        self.index = TantivyLexicalIndex(None)
        self.scopes = {}
        for tenant, docs in lexical_docs(ds).items():
            self.scopes[tenant] = Scope("tune-" + tenant.replace("/", "-"), "n")
            self.index.upsert(self.scopes[tenant], docs)
        self.index.flush()
        self.key = self._key_of()
        self.queries = {s: [q for q in ds.queries if rq.split_of(q.qid, seed) == s] for s in ("dev", "test")}
        bm25 = rq.Bm25(ds.docs)
        self.reference = {
            s: mean(rq.score(ds.metrics[0], bm25.search(q.tenant, q.text, 10), q.relevant) for q in qs)
            for s, qs in self.queries.items()
        }

    def _key_of(self) -> dict[str, str]:
        """Entity id -> the key relevance judgments use."""
        if self.ds.code_root is not None:
            return {}
        return {str(d.entity["id"]): d.key for d in self.ds.docs if d.entity is not None}

    def measure(self, weights: Any, split: str) -> float:
        self.index.weights = weights
        values = []
        for q in self.queries[split]:
            hits = self.index.search(self.scopes[q.tenant], q.text, 10)
            if self.ds.code_root is not None:
                ranked = [qualified(h.entity_id) for h in hits]
            else:
                ranked = [self.key.get(h.entity_id, "") for h in hits]
            values.append(rq.score(self.ds.metrics[0], ranked, q.relevant))
        return mean(values)


def qualified(entity_id: str) -> str:
    """py:{path}::{qualname} -> dotted module + qualname (the code set's keys)."""
    path, _, qual = entity_id[3:].partition("::")
    module = path[: -len(".py")].replace("/", ".").removesuffix(".__init__")
    return f"{module}.{qual}" if qual else module


def mean(values: Any) -> float:
    values = list(values)
    return sum(values) / len(values) if values else 0.0


def objective(benches: list[Bench], weights: Any, split: str = "dev") -> float:
    return mean(b.measure(weights, split) / max(b.reference[split], 1e-9) for b in benches)


def with_value(weights: Any, group: str, name: str, value: float) -> Any:
    if group == "exact":
        return replace(weights, exact=value)
    return replace(weights, **{group: {**getattr(weights, group), name: value}})


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=rq._default_data())
    parser.add_argument(
        "--code-set", type=Path, default=Path.home() / ".cache" / "graphctx-bench" / "code-set"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    from graphctx.adapters.tantivy.query import WEIGHTS

    datasets = [rq.cranfield(args.data / "cranfield"), rq.locomo(args.data / "locomo" / "locomo10.json")]
    if (args.code_set / "set.json").exists():
        datasets.append(rq.code(args.code_set))
    benches = [Bench(ds, args.seed) for ds in datasets]
    weights = WEIGHTS
    knobs = [("exact", "exact"), *(("text", n) for n in weights.text), *(("ident", n) for n in weights.ident)]
    best = objective(benches, weights)
    print(f"start {best:.4f} {weights}", file=sys.stderr)
    for _ in range(args.rounds):
        for group, name in knobs:
            for value in GRID:
                trial = with_value(weights, group, name, value)
                got = objective(benches, trial)
                if got > best + 1e-6:
                    best, weights = got, trial
            print(f"  {group}.{name}: {best:.4f}", file=sys.stderr)
    print(f"chosen: {weights}")
    for b in benches:
        print(
            f"{b.ds.name}: lexical leg {b.ds.metrics[0]} dev {b.measure(weights, 'dev'):.3f} "
            f"(reference BM25 {b.reference['dev']:.3f}), held-out {b.measure(weights, 'test'):.3f} "
            f"(reference {b.reference['test']:.3f}); start weights dev {b.measure(WEIGHTS, 'dev'):.3f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
