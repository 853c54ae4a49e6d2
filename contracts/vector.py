"""The `VectorIndex` contract: what every dense-vector adapter promises, checked only through the port.

What the contract promises (contract 1.0.0):

- **Identity.** An index serves one embedding model: `model_id` (non-empty) and `dimension` (>= 1)
  are fixed by the index. The suite's vectors come from `datasets.FakeEmbedder(index.dimension)` and
  seeded random draws, so any dimension works.
- **Writes.** `upsert(scope, records)` inserts or replaces the vector and content hash of each
  `(scope, entity_id)` (a new content hash with the same vector is stored too, since 1.5.0);
  `delete(scope, ids)` removes them. Both are idempotent; deleting an id the scope does not hold is
  a no-op, and so is an empty batch (since 1.5.0). A batch naming an id several times stores one point, its
  last record (since 1.5.0). Equal ids in two scopes (tenant, namespace or graph id) are two points.
- **Validation.** A non-finite (NaN, ±inf), all-zero or wrong-dimension vector raises
  `graphctx.errors.InvalidVector`, in `upsert` and in `search`. A rejected upsert writes nothing,
  not even the valid records of the same call.
- **Write visibility.** Every write is visible to `search` and `hashes` after the next `flush()`;
  nothing is promised before it (the suite calls `flush()` before every read).
- **search(scope, vector, k)** returns points of exactly `scope`, each carrying the tenant,
  namespace, graph id and content hash stored with it. At most `clamp(k, 1, 100)` hits, exactly that
  many when the scope holds that many points (deleted ones do not count, since 1.5.0). `score` is
  the cosine similarity of the query and the stored vector (scale-invariant, in [-1, 1], compared
  with a tolerance of 1e-4 for float32 rounding). *Ordered*: score descending, then `entity_id`
  ascending for equal scores, also across the k-th position, however many points share its score
  (since 1.5.0: more than any page an engine returns at once). The same search on the same data
  returns the same hits in the same order.
- **Exact search** (capability `exact_search`): top-k under a tenant filter equals brute force —
  no filtered-HNSW recall loss on a 10% slice.
- **hashes(scope)** is exactly `{entity_id: content_hash}` of the points in `scope`.
- **Durability** (capability `durable`): after `close()`, the index opened again on the same store
  holds exactly what it held -- replaced vectors, deletes and ids of any characters included
  (since 1.5.0; needs the `vector_index_for_model` hook, called with the index's own model id).

Usage (copy into your adapter's tests)::

    import pytest
    from graphctx.contracts.vector import VectorIndexContract

    class TestMyVectorIndex(VectorIndexContract):
        @pytest.fixture
        def vector_index(self, tmp_path):
            index = MyVectorIndex(tmp_path / "vectors", model_id="contract-model", dimension=32)
            yield index
            index.close()
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence

import numpy as np
import pytest
from numpy.typing import NDArray

from graphctx.contracts import datasets
from graphctx.contracts._base import (
    ContractBase,
    adversarial_scopes,
    check_hits,
    has_capability,
    joined_twins,
)
from graphctx.contracts._markers import contract_skip, requires
from graphctx.errors import InvalidVector
from graphctx.kernel.ports import Capabilities, VectorHit, VectorIndex, VectorRecord
from graphctx.scope import Scope

MAX_K = 100
"""`k` is clamped to [1, MAX_K]."""
COSINE_TOL = 1e-4
"""Absolute tolerance on cosine scores (float32 storage and normalisation)."""

RECALL_TENANTS = 10
RECALL_POINTS_PER_TENANT = 200
"""The recall test's data: each tenant is a 10% slice of 2,000 points."""
LARGE_SHARD = 50_000
"""Points of one tenant in the large-shard recall test (among others'): past the size at which an
engine switches from brute force to an approximate index."""
SMALL_SHARDS_ONLY = "small_shards_only"
"""`Capabilities.extra` flag of an index that never holds a large shard (a local test stand-in)."""
LARGE_SCOPE = 2_100
"""Points in the large scope: more than any page (1,000) a backend may scroll hashes in."""
TIES = 150
"""Equal-scoring points: more than MAX_K plus any over-fetch an adapter may add."""
PAGE_TIES = 2_100
"""Equal-scoring points past any page (1,000) an engine returns at once: an adapter that stops
fetching at a page keeps the engine's tied points, not the smallest ids."""

INVALID_KINDS = ("nan", "inf", "-inf", "zero", "longer", "shorter", "empty")


def ids(hits: Iterable[VectorHit]) -> list[str]:
    return [h.entity_id for h in hits]


def rank_key(hit: VectorHit) -> tuple[float, str]:
    return (-hit.score, hit.entity_id)


def record(
    entity_id: str, vector: Sequence[float] | NDArray[np.floating], content_hash: str = "h1"
) -> VectorRecord:
    return VectorRecord(
        entity_id=entity_id, content_hash=content_hash, vector=tuple(float(x) for x in vector)
    )


def random_vectors(n: int, dimension: int, seed: int) -> NDArray[np.float64]:
    """n deterministic standard-normal vectors (not normalised: the index must not care about scale)."""
    return np.random.default_rng(seed).standard_normal((n, dimension))


def cosine(a: Sequence[float] | NDArray[np.floating], b: Sequence[float] | NDArray[np.floating]) -> float:
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(x @ y / (np.linalg.norm(x) * np.linalg.norm(y)))


def invalid_vector(kind: str, dimension: int) -> tuple[float, ...]:
    """A vector the index must refuse: non-finite, all zero, or of the wrong dimension."""
    base = [1.0] * dimension
    if kind in ("nan", "inf", "-inf"):
        base[dimension // 2] = float(kind)
        return tuple(base)
    return {
        "zero": (0.0,) * dimension,
        "longer": (1.0,) * (dimension + 1),
        "shorter": (1.0,) * (dimension - 1),
        "empty": (),
    }[kind]


def with_hash(records: Sequence[VectorRecord], tag: str) -> list[VectorRecord]:
    """The same ids and vectors with a content hash naming `tag`: distinguishable copies."""
    return [r.model_copy(update={"content_hash": f"{tag}:{r.content_hash}"}) for r in records]


class VectorIndexHarness(ContractBase):
    """Fixtures and hooks every vector mixin shares. Adapter authors override `vector_index`, and may
    override the hook `assert_same_hits`; every other member is part of the contract (the guard checks).

    Troubleshooting: if many tests fail at once, check that the fixture returns a *fresh* index and
    that `flush()` makes writes visible.
    """

    contract_hooks = frozenset({"vector_index", "assert_same_hits", "vector_index_for_model"})

    @pytest.fixture
    def vector_index(self) -> VectorIndex:
        """Return (or yield, closing it afterwards) a fresh `VectorIndex` holding nothing in the suite's
        scopes (`scope`, `other_scope`, `sibling_scope`, `graph_scope`); it fixes `model_id` and
        `dimension`. Override this."""
        raise NotImplementedError("override the `vector_index` fixture in your contract test class")

    def subject_capabilities(self, request: pytest.FixtureRequest) -> Capabilities:
        index: VectorIndex = request.getfixturevalue("vector_index")
        return index.capabilities

    @pytest.fixture
    def vector_index_for_model(self) -> Callable[[str], VectorIndex]:
        """Optional hook: return a function that opens, on the same store as `vector_index` (same
        directory, same server), the index of another embedding model of the same dimension, e.g.::

            @pytest.fixture
            def vector_index_for_model(self, tmp_path):
                return lambda model_id: MyVectorIndex(tmp_path / "vectors", model_id, dimension=32)

        Called with the index's own model id, it opens the same index again (the durability test
        closes `vector_index` first). The test closes what it opens. Without it the model-separation
        and durability tests skip, naming the hook (`graphctx certify` always provides it)."""
        raise NotImplementedError("no `vector_index_for_model` hook")

    @pytest.fixture
    def embedder(self, vector_index: VectorIndex) -> datasets.FakeEmbedder:
        """Deterministic vectors of the index's dimension."""
        return datasets.FakeEmbedder(dimension=vector_index.dimension)

    @pytest.fixture
    def memory_records(self, embedder: datasets.FakeEmbedder) -> list[VectorRecord]:
        """datasets.memory_entities() embedded by the fake embedder: 8 distinct vectors."""
        return embedder.records(datasets.memory_entities())

    @pytest.fixture
    def loaded(
        self, vector_index: VectorIndex, scope: Scope, memory_records: list[VectorRecord]
    ) -> VectorIndex:
        """`vector_index` holding memory_records in `scope`, flushed."""
        self.write(vector_index, scope, memory_records)
        return vector_index

    # helpers and hooks (only the names in `contract_hooks` may be overridden) ---------------

    def write(self, index: VectorIndex, scope: Scope, records: Sequence[VectorRecord]) -> None:
        """Upsert then flush: how every test writes before it reads. Part of the contract, not a hook."""
        index.upsert(scope, records)
        index.flush()

    def checked_search(
        self, index: VectorIndex, scope: Scope, vector: Sequence[float] | NDArray[np.floating], k: int = 10
    ) -> list[VectorHit]:
        """Search, then check what every answer promises: scope, k, cosine range and order.
        Part of the contract, not a hook: do not override."""
        hits = index.search(scope, [float(x) for x in vector], k)

        def in_cosine_range(hit: VectorHit) -> None:
            assert -1 - COSINE_TOL <= hit.score <= 1 + COSINE_TOL, f"cosine {hit.score} out of [-1, 1]"

        check_hits(hits, VectorHit, scope, k, MAX_K, in_cosine_range)
        assert len(set(ids(hits))) == len(hits), f"an id appears twice: {ids(hits)}"
        return hits

    def assert_same_hits(self, first: Sequence[VectorHit], second: Sequence[VectorHit]) -> None:
        """Two answers to the same search on the same data: same ids, order, hashes and scopes; scores
        within 1e-6. Override only to loosen the score tolerance for a distributed engine."""
        assert ids(first) == ids(second)
        for a, b in zip(first, second, strict=True):
            assert math.isclose(a.score, b.score, abs_tol=1e-6), (a, b)
            assert (a.tenant_id, a.namespace, a.graph_id, a.content_hash) == (
                b.tenant_id,
                b.namespace,
                b.graph_id,
                b.content_hash,
            )

    def assert_matches_brute_force(
        self,
        hits: Sequence[VectorHit],
        points: dict[str, Sequence[float] | NDArray[np.floating]],
        query: Sequence[float] | NDArray[np.floating],
        k: int,
    ) -> None:
        """`hits` is the top k of `points` by cosine: right length, scores equal to the true cosine and
        nothing below the true k-th score (ties within COSINE_TOL may swap)."""
        truth = sorted(((cosine(query, v), pid) for pid, v in points.items()), key=lambda t: (-t[0], t[1]))
        assert len(hits) == min(k, len(points)), f"{len(hits)} hits, expected {min(k, len(points))}"
        kth = truth[min(k, len(truth)) - 1][0]
        for hit in hits:
            assert hit.entity_id in points, f"{hit.entity_id!r} is not a point of this scope"
            true_score = cosine(query, points[hit.entity_id])
            assert abs(hit.score - true_score) <= COSINE_TOL, (hit.entity_id, hit.score, true_score)
            assert true_score >= kth - COSINE_TOL, f"{hit.entity_id!r} ({true_score}) is not in the top {k}"


# ---- per-operation mixins ---------------------------------------------------------------------


class VectorPortTests(VectorIndexHarness):
    """The adapter implements the port, declares its model, and starts empty. Since 1.0.0.

    Troubleshooting: a failure usually means a shared or pre-filled index, or a missing attribute.
    """

    def test_port_is_implemented(self, vector_index: VectorIndex) -> None:
        """The subject is a runtime `VectorIndex` with a name, a model id, a dimension and capabilities."""
        assert isinstance(vector_index, VectorIndex)
        assert isinstance(vector_index.name, str) and vector_index.name
        assert isinstance(vector_index.model_id, str) and vector_index.model_id.strip()
        assert isinstance(vector_index.dimension, int) and vector_index.dimension >= 1
        assert isinstance(vector_index.capabilities, Capabilities)

    def test_hashes_new_index_is_empty(
        self, vector_index: VectorIndex, embedder: datasets.FakeEmbedder, request: pytest.FixtureRequest
    ) -> None:
        """A fresh index holds nothing in any of the suite's scopes."""
        vector_index.flush()
        probe = embedder.embed(["checkout payment"])[0]
        for scope in [request.getfixturevalue("scope"), *adversarial_scopes(request)]:
            assert vector_index.hashes(scope) == {}
            assert self.checked_search(vector_index, scope, probe) == []


class VectorUpsertTests(VectorIndexHarness):
    """upsert: points are found by similarity, replace by id, and are idempotent. Since 1.0.0.

    Troubleshooting: the point key must be (scope, entity_id); the score must be cosine similarity.
    """

    def test_upsert_then_search_finds_nearest(
        self, loaded: VectorIndex, scope: Scope, memory_records: list[VectorRecord]
    ) -> None:
        """Searching with a stored vector returns that point (or an equal one) first, with cosine 1."""
        stored = {r.entity_id: r.vector for r in memory_records}
        for rec in memory_records:
            twins = sorted(i for i, v in stored.items() if cosine(v, rec.vector) > 1 - COSINE_TOL)
            top = self.checked_search(loaded, scope, rec.vector, k=1)
            assert ids(top) == twins[:1]
            assert top[0].score == pytest.approx(1.0, abs=COSINE_TOL)

    def test_upsert_then_search_matches_brute_force(
        self, loaded: VectorIndex, scope: Scope, memory_records: list[VectorRecord]
    ) -> None:
        """The top 5 for random queries are the 5 most cosine-similar points, with their cosines."""
        points = {r.entity_id: r.vector for r in memory_records}
        for query in random_vectors(4, loaded.dimension, seed=11):
            self.assert_matches_brute_force(self.checked_search(loaded, scope, query, k=5), points, query, 5)

    def test_upsert_then_search_hits_carry_content_hash(
        self,
        loaded: VectorIndex,
        scope: Scope,
        memory_records: list[VectorRecord],
        embedder: datasets.FakeEmbedder,
    ) -> None:
        """Every hit carries the content hash stored with its point."""
        stored = {r.entity_id: r.content_hash for r in memory_records}
        hits = self.checked_search(loaded, scope, embedder.embed(["checkout"])[0], k=MAX_K)
        assert len(hits) == len(memory_records)
        assert {h.entity_id: h.content_hash for h in hits} == stored

    def test_search_scores_are_cosine(self, vector_index: VectorIndex, scope: Scope) -> None:
        """Scores are cosine similarity: scale-invariant, 1 for the same direction, -1 for the opposite."""
        base = random_vectors(6, vector_index.dimension, seed=5)
        stored = {
            f"v{i}": v * scale
            for i, (v, scale) in enumerate(zip(base, (1, 5, 0.01, 3, 0.5, 100), strict=True))
        }
        self.write(vector_index, scope, [record(i, v) for i, v in stored.items()])
        for query in (-base[0], base[1] * 0.001, base[2] * 1000):
            self.assert_matches_brute_force(
                self.checked_search(vector_index, scope, query, k=6), stored, query, 6
            )
        opposite = self.checked_search(vector_index, scope, -base[0] * 7, k=MAX_K)
        assert opposite[-1].entity_id == "v0"
        assert opposite[-1].score == pytest.approx(-1.0, abs=COSINE_TOL)

    def test_upsert_replaces_by_id(self, vector_index: VectorIndex, scope: Scope) -> None:
        """Upserting an id again replaces its vector and hash; the id stays one point."""
        first, second, other = random_vectors(3, vector_index.dimension, seed=3)
        self.write(vector_index, scope, [record("e1", first, "h-old"), record("e2", other, "h2")])
        self.write(vector_index, scope, [record("e1", second, "h-new")])
        hits = self.checked_search(vector_index, scope, second, k=MAX_K)
        assert [(h.entity_id, h.content_hash) for h in hits][:1] == [("e1", "h-new")]
        assert hits[0].score == pytest.approx(1.0, abs=COSINE_TOL)
        assert sorted(ids(hits)) == ["e1", "e2"]
        old = {h.entity_id: h.score for h in self.checked_search(vector_index, scope, first, k=MAX_K)}
        assert old["e1"] == pytest.approx(cosine(first, second), abs=COSINE_TOL)
        assert vector_index.hashes(scope) == {"e1": "h-new", "e2": "h2"}

    def test_upsert_is_idempotent(
        self,
        vector_index: VectorIndex,
        scope: Scope,
        memory_records: list[VectorRecord],
        embedder: datasets.FakeEmbedder,
    ) -> None:
        """Writing the same records twice leaves one point per id and identical answers."""
        query = embedder.embed(["payment gateway team"])[0]
        self.write(vector_index, scope, memory_records)
        first = self.checked_search(vector_index, scope, query, k=MAX_K)
        self.write(vector_index, scope, memory_records)
        self.assert_same_hits(first, self.checked_search(vector_index, scope, query, k=MAX_K))
        assert vector_index.hashes(scope) == {r.entity_id: r.content_hash for r in memory_records}

    def test_upsert_of_a_new_hash_alone_is_stored(
        self, loaded: VectorIndex, scope: Scope, memory_records: list[VectorRecord]
    ) -> None:
        """Upserting points whose vectors are unchanged but whose content hash is new stores the new
        hash: hashes() and every hit carry it (reconcile would otherwise re-embed them forever).
        Since 1.5.0."""
        renewed = with_hash(memory_records, "renewed")
        self.write(loaded, scope, renewed)
        assert loaded.hashes(scope) == {r.entity_id: r.content_hash for r in renewed}
        hits = self.checked_search(loaded, scope, memory_records[0].vector, k=MAX_K)
        assert {h.entity_id: h.content_hash for h in hits} == {r.entity_id: r.content_hash for r in renewed}

    def test_upsert_batch_repeating_an_id_keeps_the_last(
        self, vector_index: VectorIndex, scope: Scope
    ) -> None:
        """A batch naming an id three times stores one point: its last record (vector and hash), as
        the batch's writes applied in order would leave it -- not the first (a de-duplication keeping
        first occurrences, such as numpy's `unique`), not several. Since 1.5.0."""
        first, middle, last, other = random_vectors(4, vector_index.dimension, seed=14)
        batch = [
            record("a", first, "h-first"),
            record("b", other, "h-b"),
            record("a", middle, "h-middle"),
            record("a", last, "h-last"),
        ]
        self.write(vector_index, scope, batch)
        assert vector_index.hashes(scope) == {"a": "h-last", "b": "h-b"}, "not the batch's last record"
        hits = self.checked_search(vector_index, scope, last, k=MAX_K)
        assert [(h.entity_id, h.content_hash) for h in hits] == [("a", "h-last"), ("b", "h-b")]
        assert hits[0].score == pytest.approx(1.0, abs=COSINE_TOL)
        a = next(h for h in self.checked_search(vector_index, scope, first, k=MAX_K) if h.entity_id == "a")
        assert a.score == pytest.approx(cosine(first, last), abs=COSINE_TOL), "a's vector is not the last one"

    def test_upsert_of_an_empty_batch_is_a_no_op(
        self, loaded: VectorIndex, scope: Scope, memory_records: list[VectorRecord]
    ) -> None:
        """`upsert(scope, [])` writes nothing and raises nothing (an empty batch is not an invalid
        vector: a validation of `np.array([])`'s shape refuses it), in a scope holding points and in
        one holding none. Since 1.5.0."""
        empty = Scope(scope.tenant_id + "-empty", scope.namespace)
        for target in (scope, empty):
            loaded.upsert(target, [])
        loaded.flush()
        assert loaded.hashes(scope) == {r.entity_id: r.content_hash for r in memory_records}
        assert loaded.hashes(empty) == {}
        assert self.checked_search(loaded, empty, memory_records[0].vector) == []


class VectorDeleteTests(VectorIndexHarness):
    """delete: named ids leave search and hashes; nothing else changes. Since 1.0.0.

    Troubleshooting: delete must use the same (scope, entity_id) key as upsert.
    """

    def test_delete_removes_from_search_and_hashes(
        self, loaded: VectorIndex, scope: Scope, memory_records: list[VectorRecord]
    ) -> None:
        """A deleted id is neither found (even by its own vector) nor listed; the others stay."""
        gone = next(r for r in memory_records if r.entity_id == "svc-pay")
        loaded.delete(scope, ["svc-pay"])
        loaded.flush()
        hits = self.checked_search(loaded, scope, gone.vector, k=MAX_K)
        assert "svc-pay" not in ids(hits)
        assert len(hits) == len(memory_records) - 1
        assert loaded.hashes(scope) == {r.entity_id: r.content_hash for r in memory_records if r is not gone}

    def test_delete_unknown_id_is_a_no_op(
        self, loaded: VectorIndex, scope: Scope, memory_records: list[VectorRecord]
    ) -> None:
        """Deleting ids the scope does not hold (and an empty list) changes nothing."""
        loaded.delete(scope, ["no-such-id", "SVC-PAY", "svc-pay "])
        loaded.delete(scope, [])
        loaded.flush()
        assert loaded.hashes(scope) == {r.entity_id: r.content_hash for r in memory_records}

    def test_delete_is_idempotent(
        self, loaded: VectorIndex, scope: Scope, memory_records: list[VectorRecord]
    ) -> None:
        """Deleting the same id twice is the same as deleting it once."""
        loaded.delete(scope, ["svc-inv"])
        loaded.delete(scope, ["svc-inv", "svc-inv"])
        loaded.flush()
        assert set(loaded.hashes(scope)) == {r.entity_id for r in memory_records} - {"svc-inv"}

    def test_search_after_deletes_still_returns_k(self, vector_index: VectorIndex, scope: Scope) -> None:
        """150 points, then the 60 nearest a query deleted: the query's top k (10, 60, 100) is the
        brute-force top k of the 90 left, k of them (all 90 for k = 100) -- deleted points are not
        dropped from an answer already cut at k (a tombstone filtered after the engine's top k).
        Since 1.5.0."""
        dim = vector_index.dimension
        points = {f"p-{i:03d}": v for i, v in enumerate(random_vectors(150, dim, seed=81))}
        query = random_vectors(1, dim, seed=82)[0]
        self.write(vector_index, scope, [record(i, v, f"h-{i}") for i, v in points.items()])
        nearest = sorted(points, key=lambda p: -cosine(query, points[p]))[:60]
        vector_index.delete(scope, nearest)
        vector_index.flush()
        left = {p: v for p, v in points.items() if p not in nearest}
        for k in (10, 60, MAX_K):
            hits = self.checked_search(vector_index, scope, query, k=k)
            self.assert_matches_brute_force(hits, left, query, k)
        assert set(vector_index.hashes(scope)) == set(left)

    def test_delete_of_more_ids_than_any_batch(self, vector_index: VectorIndex, scope: Scope) -> None:
        """One delete of 2,000 of 2,100 points removes all 2,000 (an adapter that sends a delete in
        batches must send every batch): exactly the 100 others stay, in hashes and in search.
        Since 1.6.0."""
        vectors = random_vectors(LARGE_SCOPE, vector_index.dimension, seed=91)
        records = [record(f"d-{i:04d}", v, f"h-{i}") for i, v in enumerate(vectors)]
        self.write(vector_index, scope, records)
        vector_index.delete(scope, [r.entity_id for r in records[:2000]])
        vector_index.flush()
        assert vector_index.hashes(scope) == {r.entity_id: r.content_hash for r in records[2000:]}
        hits = self.checked_search(vector_index, scope, vectors[0], k=MAX_K)
        assert sorted(ids(hits)) == sorted(r.entity_id for r in records[2000:])


class VectorHashesTests(VectorIndexHarness):
    """hashes: exactly {entity_id: content_hash} of one scope, past any page size. Since 1.0.0.

    Troubleshooting: hashes must page through every point of the scope (no k limit).
    """

    def test_hashes_exact_per_scope(self, vector_index: VectorIndex, scope: Scope) -> None:
        """hashes(scope) lists every point of the scope (1,200 of them) with its hash."""
        vectors = random_vectors(1200, vector_index.dimension, seed=2)
        records = [record(f"p-{i:04d}", v, f"h-{i}") for i, v in enumerate(vectors)]
        self.write(vector_index, scope, records)
        assert vector_index.hashes(scope) == {r.entity_id: r.content_hash for r in records}


class VectorIsolationTests(VectorIndexHarness):
    """Isolation: the same ids with the same vectors in `scope`, another tenant, a sibling namespace and
    a shared code graph never cross. Copies differ only in content hash, so a relabelled foreign hit
    is caught too. Since 1.0.0.

    Troubleshooting: all three scope fields must be in the search filter and in the point key;
    graph_id "" is a real value to match, not "any".
    """

    @pytest.fixture
    def four_copies(
        self, vector_index: VectorIndex, request: pytest.FixtureRequest, memory_records: list[VectorRecord]
    ) -> dict[Scope, list[VectorRecord]]:
        scopes = [request.getfixturevalue("scope"), *adversarial_scopes(request)]
        copies = {s: with_hash(memory_records, f"copy{i}") for i, s in enumerate(scopes)}
        for s, records in copies.items():
            vector_index.upsert(s, records)
        vector_index.flush()
        return copies

    def test_search_never_crosses_scopes(
        self,
        vector_index: VectorIndex,
        four_copies: dict[Scope, list[VectorRecord]],
        memory_records: list[VectorRecord],
    ) -> None:
        """Each scope's search returns exactly its own copies, with the scope and hash stored with them."""
        for query in (memory_records[0].vector, memory_records[3].vector):
            for s, records in four_copies.items():
                hits = self.checked_search(vector_index, s, query, k=MAX_K)
                assert {h.entity_id: h.content_hash for h in hits} == {
                    r.entity_id: r.content_hash for r in records
                }

    def test_hashes_never_cross_scopes(
        self, vector_index: VectorIndex, four_copies: dict[Scope, list[VectorRecord]]
    ) -> None:
        """hashes(scope) is exactly that scope's copies."""
        for s, records in four_copies.items():
            assert vector_index.hashes(s) == {r.entity_id: r.content_hash for r in records}

    def test_delete_never_crosses_scopes(
        self, vector_index: VectorIndex, four_copies: dict[Scope, list[VectorRecord]], scope: Scope
    ) -> None:
        """Deleting ids in one scope leaves the same ids in every other scope."""
        vector_index.delete(scope, [r.entity_id for r in four_copies[scope]])
        vector_index.flush()
        assert vector_index.hashes(scope) == {}
        assert self.checked_search(vector_index, scope, four_copies[scope][0].vector) == []
        for s, records in four_copies.items():
            if s != scope:
                assert vector_index.hashes(s) == {r.entity_id: r.content_hash for r in records}

    def test_upsert_never_crosses_scopes(
        self, vector_index: VectorIndex, four_copies: dict[Scope, list[VectorRecord]], scope: Scope
    ) -> None:
        """Replacing a point in one scope leaves the same id's copies elsewhere unchanged."""
        fresh = random_vectors(1, vector_index.dimension, seed=9)[0]
        self.write(vector_index, scope, [record("svc-pay", fresh, "h-replaced")])
        assert vector_index.hashes(scope)["svc-pay"] == "h-replaced"
        for s, records in four_copies.items():
            if s != scope:
                assert vector_index.hashes(s) == {r.entity_id: r.content_hash for r in records}
                top = self.checked_search(vector_index, s, fresh, k=MAX_K)
                assert next(h for h in top if h.entity_id == "svc-pay").content_hash != "h-replaced"

    def test_scopes_whose_joined_names_agree_never_share_a_point(
        self, vector_index: VectorIndex, scope: Scope
    ) -> None:
        """Scopes that differ only in where a separator stands (`t:x`/`y` and `t`/`x:y`, ...: see
        `joined_twins`) each keep their own point for an id through upserts and a delete: the key is
        the three parts, not a string joined from them (nor a point id hashed from one). Since 1.6.0."""
        pairs = joined_twins(scope)
        vectors = random_vectors(2, vector_index.dimension, seed=93)
        for n, (a, b) in enumerate(pairs):
            vector_index.upsert(a, [record("twin", vectors[0], f"a{n}")])
            vector_index.upsert(b, [record("twin", vectors[1], f"b{n}")])
        vector_index.flush()
        for n, (a, b) in enumerate(pairs):
            assert vector_index.hashes(a) == {"twin": f"a{n}"}, (a, b)
            assert vector_index.hashes(b) == {"twin": f"b{n}"}, (a, b)
            assert [h.content_hash for h in self.checked_search(vector_index, b, vectors[0])] == [f"b{n}"]
        for a, _ in pairs:
            vector_index.delete(a, ["twin"])
        vector_index.flush()
        for n, (a, b) in enumerate(pairs):
            assert vector_index.hashes(a) == {}, (a, b)
            assert vector_index.hashes(b) == {"twin": f"b{n}"}, (a, b)

    def test_search_other_scope_only_vector_is_not_found(
        self, vector_index: VectorIndex, request: pytest.FixtureRequest, scope: Scope
    ) -> None:
        """A vector only other scopes hold is never returned in `scope`, however close it is."""
        mine, theirs = random_vectors(2, vector_index.dimension, seed=4)
        self.write(vector_index, scope, [record("mine", mine, "h-mine")])
        for s in adversarial_scopes(request):
            self.write(vector_index, s, [record("theirs", theirs, "h-theirs")])
        assert [
            (h.entity_id, h.content_hash) for h in self.checked_search(vector_index, scope, theirs, k=MAX_K)
        ] == [("mine", "h-mine")]


class VectorValidationTests(VectorIndexHarness):
    """Invalid vectors are refused with `InvalidVector` and write nothing. Since 1.0.0.

    Troubleshooting: validate every record of a call (finite, non-zero, right dimension) before the
    first write; engines accept NaN or zero vectors silently and then rank them arbitrarily.
    """

    @pytest.mark.parametrize("kind", INVALID_KINDS)
    def test_upsert_invalid_vector_raises_and_writes_nothing(
        self, vector_index: VectorIndex, scope: Scope, kind: str
    ) -> None:
        """An upsert holding one invalid vector raises InvalidVector and writes none of its records."""
        keep, changed, new = random_vectors(3, vector_index.dimension, seed=8)
        self.write(vector_index, scope, [record("keep", keep, "h-keep")])
        bad = [
            record("keep", changed, "h-changed"),
            record("new", new, "h-new"),
            record("bad", invalid_vector(kind, vector_index.dimension)),
        ]
        with pytest.raises(InvalidVector):
            vector_index.upsert(scope, bad)
        vector_index.flush()
        assert vector_index.hashes(scope) == {"keep": "h-keep"}
        assert ids(self.checked_search(vector_index, scope, keep, k=MAX_K)) == ["keep"]

    @pytest.mark.parametrize("kind", INVALID_KINDS)
    def test_search_invalid_vector_raises(self, loaded: VectorIndex, scope: Scope, kind: str) -> None:
        """A search with an invalid query vector raises InvalidVector (and the data is untouched)."""
        with pytest.raises(InvalidVector):
            loaded.search(scope, list(invalid_vector(kind, loaded.dimension)), 5)
        assert len(loaded.hashes(scope)) == len(datasets.memory_entities())


class VectorOrderingTests(VectorIndexHarness):
    """Ordering and determinism: score descending, then entity_id; repeatable. Since 1.0.0.

    Troubleshooting: engines break equal scores by internal point id; fetch past k while the k-th
    score is tied and sort by (-score, entity_id).
    """

    @pytest.fixture
    def tied(self, vector_index: VectorIndex, scope: Scope, embedder: datasets.FakeEmbedder) -> VectorIndex:
        """datasets.ties(): 12 points with equal vectors, written in shuffled id order."""
        self.write(vector_index, scope, embedder.records(datasets.ties()))
        return vector_index

    def test_search_ties_ordered_by_entity_id(
        self, tied: VectorIndex, scope: Scope, embedder: datasets.FakeEmbedder
    ) -> None:
        """Points with equal vectors come in entity_id order with equal scores."""
        query = embedder.records(datasets.ties()[:1])[0].vector
        hits = self.checked_search(tied, scope, query, k=MAX_K)
        assert ids(hits) == sorted(e.id for e in datasets.ties())
        assert len({h.score for h in hits}) == 1

    @pytest.mark.parametrize("k", [1, 5, 11])
    def test_search_ties_cut_at_k_by_entity_id(
        self, tied: VectorIndex, scope: Scope, embedder: datasets.FakeEmbedder, k: int
    ) -> None:
        """When a tie straddles the k-th position, the k smallest ids are returned."""
        query = random_vectors(1, tied.dimension, seed=6)[0]
        assert ids(self.checked_search(tied, scope, query, k=k)) == sorted(e.id for e in datasets.ties())[:k]

    @pytest.mark.parametrize("k", [1, 3, 9])
    def test_search_ties_ordered_by_code_point(self, vector_index: VectorIndex, scope: Scope, k: int) -> None:
        """Tied ids in upper and lower case, digits, punctuation and accents come in code-point order
        (`B` before `a`, `É` before `é`), not case-folded or collated. Since 1.6.0."""
        tied = ["a", "B", "Z", "_x", "é", "É", "0", "a-1", "a_1"]
        same = random_vectors(1, vector_index.dimension, seed=57)[0]
        self.write(vector_index, scope, [record(i, same, f"h-{n}") for n, i in enumerate(tied)])
        assert ids(self.checked_search(vector_index, scope, same, k=k)) == sorted(tied)[:k]

    def test_search_repeated_is_identical(self, loaded: VectorIndex, scope: Scope) -> None:
        """The same search on the same data gives the same hits, scores and order every time."""
        for query in random_vectors(3, loaded.dimension, seed=12):
            first = self.checked_search(loaded, scope, query)
            assert first
            for _ in range(3):
                self.assert_same_hits(first, self.checked_search(loaded, scope, query))


class VectorLimitTests(VectorIndexHarness):
    """k: clamped to [1, 100]; never more hits; exactly that many when the scope holds enough.
    Since 1.0.0.

    Troubleshooting: clamp k before the engine sees it (0 and negatives mean 1).
    """

    @pytest.fixture
    def many(self, vector_index: VectorIndex, scope: Scope) -> VectorIndex:
        """150 random points."""
        vectors = random_vectors(150, vector_index.dimension, seed=1)
        self.write(vector_index, scope, [record(f"p-{i:03d}", v) for i, v in enumerate(vectors)])
        return vector_index

    @pytest.mark.parametrize(
        ("k", "expected"), [(-5, 1), (0, 1), (1, 1), (7, 7), (100, 100), (101, 100), (10_000, 100)]
    )
    def test_search_k_is_clamped(self, many: VectorIndex, scope: Scope, k: int, expected: int) -> None:
        """search returns exactly clamp(k, 1, 100) hits when the scope holds more points."""
        query = random_vectors(1, many.dimension, seed=13)[0]
        assert len(self.checked_search(many, scope, query, k=k)) == expected

    def test_search_fewer_points_than_k(
        self, loaded: VectorIndex, scope: Scope, memory_records: list[VectorRecord]
    ) -> None:
        """With fewer points than k, every point of the scope is returned once."""
        hits = self.checked_search(loaded, scope, memory_records[0].vector, k=MAX_K)
        assert sorted(ids(hits)) == sorted(r.entity_id for r in memory_records)


class VectorVisibilityTests(VectorIndexHarness):
    """flush(): every write before it is visible after it; nothing is promised before it. Since 1.0.0.

    Troubleshooting: an eventually consistent backend must wait for its writes in flush().
    """

    def test_flush_makes_each_write_visible(self, vector_index: VectorIndex, scope: Scope) -> None:
        """Interleaved writes, flushes and reads: each read sees every write flushed before it."""
        a, b = random_vectors(2, vector_index.dimension, seed=21)
        self.write(vector_index, scope, [record("a", a, "ha")])
        assert ids(self.checked_search(vector_index, scope, a)) == ["a"]
        self.write(vector_index, scope, [record("b", b, "hb")])
        assert ids(self.checked_search(vector_index, scope, b))[:1] == ["b"]
        vector_index.delete(scope, ["a"])
        vector_index.flush()
        assert ids(self.checked_search(vector_index, scope, a)) == ["b"]
        assert vector_index.hashes(scope) == {"b": "hb"}

    def test_flush_without_writes_changes_nothing(
        self, loaded: VectorIndex, scope: Scope, memory_records: list[VectorRecord]
    ) -> None:
        """Repeated flushes leave answers and hashes unchanged."""
        query = memory_records[2].vector
        before = (self.checked_search(loaded, scope, query), loaded.hashes(scope))
        loaded.flush()
        loaded.flush()
        self.assert_same_hits(before[0], self.checked_search(loaded, scope, query))
        assert loaded.hashes(scope) == before[1]


class VectorRecallTests(VectorIndexHarness):
    """Exact scoped search: no recall loss under a selective tenant filter. Needs `exact_search`.
    Since 1.0.0.

    Troubleshooting: filtered HNSW drops to ~0.73 recall on a 10% tenant slice; use exact (or ACORN)
    search for scoped queries, or declare `exact_search=False`.
    """

    @requires("exact_search")
    def test_search_tenant_filter_recall_is_exact(self, vector_index: VectorIndex, scope: Scope) -> None:
        """2,000 points over 10 tenants (same ids in each): a tenant's top 10 equals brute force."""
        dim = vector_index.dimension
        tenants = [
            scope,
            *(Scope(f"{scope.tenant_id}-r{i}", scope.namespace) for i in range(1, RECALL_TENANTS)),
        ]
        mine: dict[str, NDArray[np.float64]] = {}
        for t, tenant in enumerate(tenants):
            vectors = random_vectors(RECALL_POINTS_PER_TENANT, dim, seed=100 + t)
            vector_index.upsert(tenant, [record(f"p-{i:03d}", v, f"h{t}") for i, v in enumerate(vectors)])
            if tenant == scope:
                mine = {f"p-{i:03d}": v for i, v in enumerate(vectors)}
        vector_index.flush()
        for query in random_vectors(10, dim, seed=99):
            hits = self.checked_search(vector_index, scope, query, k=10)
            self.assert_matches_brute_force(hits, dict(mine), query, 10)
            assert {h.content_hash for h in hits} == {"h0"}

    @requires("exact_search")
    def test_search_large_shard_recall_is_exact(
        self, vector_index: VectorIndex, scope: Scope, request: pytest.FixtureRequest
    ) -> None:
        """50,000 points of one tenant, among two other tenants' (sorting before and after), after the
        index flushed (and optimised, if it does that then): a scoped top 10 equals brute force.
        Since 1.2.0.

        An index that is only ever a small stand-in (qdrant-client's local mode) declares
        `extra={"small_shards_only": True}`; the test then skips, naming that flag."""
        if vector_index.capabilities.extra.get(SMALL_SHARDS_ONLY):
            contract_skip(
                request.node, f"adapter declares capability {SMALL_SHARDS_ONLY}", flags=(SMALL_SHARDS_ONLY,)
            )
        dim = vector_index.dimension
        others = (
            Scope(scope.tenant_id[:-1] + "-0", scope.namespace),
            Scope(scope.tenant_id + "-z", scope.namespace),
        )
        for t, other in enumerate(others):
            vectors = random_vectors(1_000, dim, seed=500 + t)
            vector_index.upsert(other, [record(f"p{i:05d}", v, f"other{t}") for i, v in enumerate(vectors)])
        mine = random_vectors(LARGE_SHARD, dim, seed=777)
        for start in range(0, LARGE_SHARD, 5_000):
            batch = mine[start : start + 5_000]
            vector_index.upsert(scope, [record(f"p{start + i:05d}", v, "mine") for i, v in enumerate(batch)])
        vector_index.flush()
        points = {f"p{i:05d}": v for i, v in enumerate(mine)}
        norms = mine / np.linalg.norm(mine, axis=1, keepdims=True)
        for query in random_vectors(5, dim, seed=778):
            hits = self.checked_search(vector_index, scope, query, k=10)
            scores = norms @ (query / np.linalg.norm(query))
            best = np.argsort(-scores, kind="stable")[:10]
            self.assert_matches_brute_force(hits, {f"p{i:05d}": points[f"p{i:05d}"] for i in best}, query, 10)
            assert {h.content_hash for h in hits} == {"mine"}


class VectorBoundaryTests(VectorIndexHarness):
    """The edges of the promise: a scope larger than any page, ties larger than k plus any
    over-fetch, a scope filter applied before the cut, delete then re-create. Since 1.2.0.

    Troubleshooting: `hashes` must scroll through the whole scope; ties must be ordered by entity id
    however many points share the k-th score (fetch until the tie ends, then sort); the scope must be
    a filter of the backend query, never applied to a global top-k.
    """

    def test_hashes_of_a_scope_larger_than_any_page(
        self, vector_index: VectorIndex, scope: Scope, other_scope: Scope
    ) -> None:
        """2,100 points (and another tenant's 700 interleaved): hashes lists every one."""
        vectors = random_vectors(LARGE_SCOPE, vector_index.dimension, seed=31)
        mine = [record(f"e{i:04d}", v, f"h{i}") for i, v in enumerate(vectors)]
        theirs = with_hash(mine[::3], "theirs")
        for start in range(0, LARGE_SCOPE, 700):
            vector_index.upsert(other_scope, theirs[start // 3 : (start + 700) // 3])
            vector_index.upsert(scope, mine[start : start + 700])
        vector_index.flush()
        assert vector_index.hashes(scope) == {r.entity_id: r.content_hash for r in mine}
        assert vector_index.hashes(other_scope) == {r.entity_id: r.content_hash for r in theirs}

    @pytest.mark.parametrize("k", [1, 10, 37, 100])
    def test_search_ties_larger_than_k_and_any_overfetch(
        self, vector_index: VectorIndex, scope: Scope, k: int
    ) -> None:
        """150 identical points, written in a shuffled order: a query in their direction returns the k
        smallest ids, all with the same score."""
        base = random_vectors(1, vector_index.dimension, seed=41)[0]
        order = [(i * 37) % TIES for i in range(TIES)]
        tied = [record(f"t{i:03d}", base, f"h{i}") for i in order]
        farther = [
            record(f"u{i:03d}", v, "far")
            for i, v in enumerate(random_vectors(20, vector_index.dimension, 42))
        ]
        self.write(vector_index, scope, [*tied, *farther])
        hits = self.checked_search(vector_index, scope, base, k=k)
        assert ids(hits) == [f"t{i:03d}" for i in range(TIES)][:k]
        assert max(h.score for h in hits) - min(h.score for h in hits) <= COSINE_TOL

    @pytest.mark.parametrize("k", [10, 100])
    def test_search_ties_past_any_fetch_page(self, vector_index: VectorIndex, scope: Scope, k: int) -> None:
        """2,100 identical points, written in a shuffled order (more than any page of 1,000 an engine
        returns at once): a query in their direction still returns the k smallest ids -- an adapter
        that stops widening its fetch at a page keeps the engine's tied points instead. Since 1.5.0."""
        base = random_vectors(1, vector_index.dimension, seed=44)[0]
        order = [(i * 37) % PAGE_TIES for i in range(PAGE_TIES)]
        tied = [record(f"t{i:04d}", base, f"h{i}") for i in order]
        for start in range(0, PAGE_TIES, 700):
            vector_index.upsert(scope, tied[start : start + 700])
        vector_index.flush()
        hits = self.checked_search(vector_index, scope, base, k=k)
        assert ids(hits) == [f"t{i:04d}" for i in range(k)], "not the k smallest ids of the tie"

    def test_search_filters_by_scope_before_the_cut(
        self, vector_index: VectorIndex, request: pytest.FixtureRequest
    ) -> None:
        """Other scopes hold 60 points each nearer the query than any of the scope's: the scope's top k
        is still its own brute-force top k."""
        scope = request.getfixturevalue("scope")
        dim = vector_index.dimension
        query = random_vectors(1, dim, seed=51)[0]
        adversaries = [*adversarial_scopes(request), Scope(scope.tenant_id[:-1] + "-0", scope.namespace)]
        near = query + 0.01 * random_vectors(60, dim, seed=52)
        for a in adversaries:
            vector_index.upsert(a, [record(f"n{i:02d}", v, "foreign") for i, v in enumerate(near)])
        mine = {f"m{i:02d}": v for i, v in enumerate(random_vectors(30, dim, seed=53))}
        self.write(vector_index, scope, [record(i, v, "own") for i, v in mine.items()])
        for k in (1, 10, MAX_K):
            hits = self.checked_search(vector_index, scope, query, k=k)
            self.assert_matches_brute_force(hits, mine, query, k)

    def test_delete_then_recreate_returns_only_the_new_point(
        self, vector_index: VectorIndex, scope: Scope
    ) -> None:
        """An id deleted and written again is one point, with its new vector and hash."""
        old, new = random_vectors(2, vector_index.dimension, seed=61)
        self.write(vector_index, scope, [record("x", old, "h-old"), record("y", new * -1, "h-y")])
        vector_index.delete(scope, ["x"])
        vector_index.flush()
        self.write(vector_index, scope, [record("x", new, "h-new")])
        hits = self.checked_search(vector_index, scope, old, k=MAX_K)
        assert [(h.entity_id, h.content_hash) for h in hits if h.entity_id == "x"] == [("x", "h-new")]
        top = self.checked_search(vector_index, scope, new, k=1)
        assert [(h.entity_id, h.content_hash) for h in top] == [("x", "h-new")]
        assert abs(top[0].score - 1.0) <= COSINE_TOL
        assert vector_index.hashes(scope) == {"x": "h-new", "y": "h-y"}


class VectorModelTests(VectorIndexHarness):
    """Two embedding models of the same dimension on one store are two collections: a model's index
    never answers with another model's points. Needs the `vector_index_for_model` hook. Since 1.2.0.

    Troubleshooting: name the collection (or shard, or table) by model id AND dimension, not by
    dimension alone; a changed model starts empty and is backfilled, the old one is left alone.
    """

    def test_two_models_of_the_same_dimension_never_share_points(
        self, vector_index: VectorIndex, scope: Scope, request: pytest.FixtureRequest
    ) -> None:
        """The same ids written by two models, one after the other: each model's search and hashes
        see only its own points, and the first model's are still there afterwards (durable stores)."""
        try:
            open_model = request.getfixturevalue("vector_index_for_model")
        except NotImplementedError:
            contract_skip(
                request.node, "no `vector_index_for_model` hook", flags=("vector_index_for_model",), hook=True
            )
        dim = vector_index.dimension
        first, second = random_vectors(2, dim, seed=71)
        self.write(vector_index, scope, [record("a", first, "model-1"), record("b", second, "model-1")])
        model_1 = vector_index.model_id
        vector_index.close()
        model_2 = f"{model_1}-successor"
        other = open_model(model_2)
        try:
            assert (other.model_id, other.dimension) == (model_2, dim)
            other.flush()
            assert other.hashes(scope) == {}, "a new model's index answers with the old model's points"
            assert self.checked_search(other, scope, first) == []
            self.write(other, scope, [record("a", second, "model-2")])
            assert [(h.entity_id, h.content_hash) for h in self.checked_search(other, scope, second)] == [
                ("a", "model-2")
            ]
            assert other.hashes(scope) == {"a": "model-2"}
        finally:
            other.close()
        if has_capability(vector_index.capabilities, "durable"):
            again = open_model(model_1)
            try:
                assert again.hashes(scope) == {"a": "model-1", "b": "model-1"}
                assert ids(self.checked_search(again, scope, first, k=1)) == ["a"]
            finally:
                again.close()


class VectorDurabilityTests(VectorIndexHarness):
    """close() then open again: the index holds exactly what it held. Needs `durable` and the
    `vector_index_for_model` hook (called with the index's own model id). Since 1.5.0.

    Troubleshooting: every delete must reach the store, not only an in-memory tombstone set; ids must
    be stored as given (a newline, a quote or 1 KiB in an id must not break a line-based file).
    """

    @requires("durable")
    def test_close_then_reopen_keeps_every_write(
        self, vector_index: VectorIndex, scope: Scope, request: pytest.FixtureRequest
    ) -> None:
        """Points with ids of any characters, one replaced, two deleted, then close and open the same
        model again: the same hashes, the replaced point found by its new vector, the deleted ones
        by nothing."""
        try:
            open_model = request.getfixturevalue("vector_index_for_model")
        except NotImplementedError:
            contract_skip(
                request.node, "no `vector_index_for_model` hook", flags=("vector_index_for_model",), hook=True
            )
        dim = vector_index.dimension
        names = ["plain", *(p for p in datasets.INJECTION_PAYLOADS if len(p.encode()) <= 512)]
        vectors = dict(zip(names, random_vectors(len(names), dim, seed=91), strict=True))
        self.write(vector_index, scope, [record(n, v, f"h-{i}") for i, (n, v) in enumerate(vectors.items())])
        fresh = random_vectors(1, dim, seed=92)[0]
        replaced, deleted = names[1], [names[0], names[2]]
        self.write(vector_index, scope, [record(replaced, fresh, "h-replaced")])
        vector_index.delete(scope, deleted)
        vector_index.flush()
        expected = {n: f"h-{i}" for i, n in enumerate(names) if n not in deleted} | {replaced: "h-replaced"}
        assert vector_index.hashes(scope) == expected
        model_id = vector_index.model_id
        vector_index.close()
        again = open_model(model_id)
        try:
            assert again.hashes(scope) == expected, "the index opened again does not hold what it held"
            top = self.checked_search(again, scope, fresh, k=1)
            assert [(h.entity_id, h.content_hash) for h in top] == [(replaced, "h-replaced")]
            assert top[0].score == pytest.approx(1.0, abs=COSINE_TOL)
            for gone in deleted:
                found = ids(self.checked_search(again, scope, vectors[gone], k=MAX_K))
                assert gone not in found, f"deleted {gone!r} is back after a reopen"
                assert len(found) == len(expected)
        finally:
            again.close()


# ---- aggregates ---------------------------------------------------------------------------------


class VectorIndexCoreContract(
    VectorPortTests,
    VectorUpsertTests,
    VectorDeleteTests,
    VectorHashesTests,
    VectorIsolationTests,
    VectorValidationTests,
    VectorOrderingTests,
    VectorLimitTests,
    VectorVisibilityTests,
    VectorBoundaryTests,
    VectorModelTests,
    VectorDurabilityTests,
):
    """Everything every vector adapter must pass. Subclass it and override `vector_index`."""


class VectorIndexContract(VectorIndexCoreContract, VectorRecallTests):
    """The full vector contract: the core plus exact-search recall (skipped, naming `exact_search`,
    for adapters that declare approximate scoped search).

    Usage::

        class TestMyVectorIndex(VectorIndexContract):
            @pytest.fixture
            def vector_index(self, tmp_path):
                index = MyVectorIndex(tmp_path / "vectors", model_id="contract-model", dimension=32)
                yield index
                index.close()
    """
