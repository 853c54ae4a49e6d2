"""The Qdrant vector indexes: qdrant-edge in-process and qdrant-client (local mode standing in for a
server), run through the same tests."""

from __future__ import annotations

import socket
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from graphctx.adapters.qdrant import (
    ClientVectorIndex,
    EdgeVectorIndex,
    _common,
    create_edge_index,
    create_local_index,
    create_server_index,
)
from graphctx.errors import (
    BackendError,
    BackendUnavailable,
    ConfigError,
    InputError,
    InvalidVector,
    ScopeError,
)
from graphctx.kernel.ports import VectorIndex, VectorRecord
from graphctx.scope import Scope
from graphctx.settings import Settings

DIM = 8
A = Scope("tenant-a")
B = Scope("tenant-b")

Factory = Callable[..., VectorIndex]


def vec(*hot: float) -> tuple[float, ...]:
    """A DIM-d vector whose first components are `hot`."""
    return tuple(hot) + (0.0,) * (DIM - len(hot))


def rec(entity_id: str, vector: tuple[float, ...], content_hash: str = "h1") -> VectorRecord:
    return VectorRecord(entity_id=entity_id, content_hash=content_hash, vector=vector)


def random_vectors(n: int, seed: int = 7) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal((n, DIM)).astype(np.float32)


@pytest.fixture(params=["edge", "client"])
def make_index(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Factory]:
    opened: list[VectorIndex] = []

    def make(model_id: str = "test/model", dimension: int = DIM) -> VectorIndex:
        if request.param == "edge":
            idx: VectorIndex = EdgeVectorIndex(tmp_path / "vectors", model_id, dimension)
        else:
            idx = ClientVectorIndex(":memory:", model_id, dimension)
        opened.append(idx)
        return idx

    yield make
    for idx in opened:
        idx.close()


@pytest.fixture
def index(make_index: Factory) -> VectorIndex:
    return make_index()


def test_implements_the_port(index: VectorIndex) -> None:
    assert isinstance(index, VectorIndex)
    assert index.capabilities.exact_search
    assert not index.capabilities.concurrent_readers  # edge: WAL lock; local mode: single client


def test_nearest_neighbours_in_score_order(index: VectorIndex) -> None:
    index.upsert(A, [rec("far", vec(0, 1)), rec("near", vec(1, 0.2)), rec("exact", vec(1), "hx")])
    hits = index.search(A, vec(1), k=3)
    assert [h.entity_id for h in hits] == ["exact", "near", "far"]
    assert hits[0].score == pytest.approx(1.0, abs=1e-5)
    assert hits[2].score == pytest.approx(0.0, abs=1e-5)
    assert (hits[0].tenant_id, hits[0].namespace, hits[0].graph_id, hits[0].content_hash) == (
        "tenant-a",
        "default",
        "",
        "hx",
    )
    assert [h.entity_id for h in index.search(A, vec(0, 1), k=1)] == ["far"]


def test_unnormalised_vectors_score_by_cosine(index: VectorIndex) -> None:
    index.upsert(A, [rec("x", vec(10, 0)), rec("y", vec(1, 1))])
    hits = index.search(A, vec(0.001, 0), k=2)
    assert [h.entity_id for h in hits] == ["x", "y"]
    assert hits[0].score == pytest.approx(1.0, abs=1e-5)


@pytest.mark.parametrize(
    ("mine", "theirs"),
    [
        (Scope("tenant-a"), Scope("tenant-b")),
        (Scope("tenant-a", "ns1"), Scope("tenant-a", "ns2")),
        (Scope("tenant-a", "ns1", ""), Scope("tenant-a", "ns1", "graph-1")),
        (Scope("tenant-a", "ns1", "graph-1"), Scope("tenant-a", "ns1", "graph-2")),
    ],
    ids=["tenant", "namespace", "graph-empty-vs-set", "graph"],
)
def test_scopes_never_cross(index: VectorIndex, mine: Scope, theirs: Scope) -> None:
    ids = [f"e{i}" for i in range(5)]
    vectors = random_vectors(5)
    index.upsert(mine, [rec(e, tuple(v), "mine") for e, v in zip(ids, vectors, strict=True)])
    index.upsert(theirs, [rec(e, tuple(v), "theirs") for e, v in zip(ids, vectors, strict=True)])

    for scope, tag in ((mine, "mine"), (theirs, "theirs")):
        hits = index.search(scope, vectors[0], k=100)
        assert len(hits) == 5
        assert all(scope.contains(h.tenant_id, h.namespace, h.graph_id) for h in hits)
        assert {h.content_hash for h in hits} == {tag}
        assert index.hashes(scope) == dict.fromkeys(ids, tag)

    index.delete(mine, ids[:3])
    assert index.hashes(mine) == dict.fromkeys(ids[3:], "mine")
    assert index.hashes(theirs) == dict.fromkeys(ids, "theirs")
    assert {h.entity_id for h in index.search(theirs, vectors[0], k=10)} == set(ids)
    assert {h.entity_id for h in index.search(mine, vectors[0], k=10)} == set(ids[3:])


def test_empty_scope_finds_nothing(index: VectorIndex) -> None:
    index.upsert(A, [rec("e1", vec(1))])
    assert index.search(B, vec(1), k=10) == []
    assert index.hashes(B) == {}


BAD_VECTORS = {
    "nan": vec(1, float("nan")),
    "inf": vec(1, float("inf")),
    "zeros": vec(),
    "short": (1.0,) * (DIM - 1),
    "long": (1.0,) * (DIM + 1),
}


@pytest.mark.parametrize("bad", BAD_VECTORS.values(), ids=BAD_VECTORS.keys())
def test_invalid_vectors_are_rejected(index: VectorIndex, bad: tuple[float, ...]) -> None:
    with pytest.raises(InvalidVector):
        index.upsert(A, [rec("good", vec(1)), rec("bad", bad)])
    assert index.hashes(A) == {}  # the batch is checked before anything is written
    with pytest.raises(InvalidVector):
        index.search(A, bad, k=5)


def test_upsert_replaces(index: VectorIndex) -> None:
    index.upsert(A, [rec("e1", vec(1), "h1"), rec("e2", vec(0, 1), "h1")])
    index.upsert(A, [rec("e1", vec(0, 0, 1), "h2")])
    assert index.hashes(A) == {"e1": "h2", "e2": "h1"}
    hits = index.search(A, vec(0, 0, 1), k=10)
    assert (hits[0].entity_id, hits[0].content_hash) == ("e1", "h2")
    assert len(hits) == 2


def test_last_record_wins_within_a_batch(index: VectorIndex) -> None:
    index.upsert(A, [rec("e1", vec(1), "old"), rec("e1", vec(0, 1), "new")])
    assert index.hashes(A) == {"e1": "new"}


def test_delete(index: VectorIndex) -> None:
    index.upsert(A, [rec("e1", vec(1)), rec("e2", vec(1, 1)), rec("e3", vec(0, 1))])
    index.delete(A, ["e1", "missing"])
    index.delete(A, [])
    assert set(index.hashes(A)) == {"e2", "e3"}
    assert "e1" not in {h.entity_id for h in index.search(A, vec(1), k=10)}


def test_equal_scores_order_by_entity_id(index: VectorIndex) -> None:
    ids = [f"tie-{i:02d}" for i in range(40)]
    order = np.random.default_rng(3).permutation(len(ids))
    index.upsert(A, [rec(ids[i], vec(1, 2, 3)) for i in order])
    index.upsert(A, [rec("best", vec(1, 2, 3.5))])
    for k in (1, 5, 12, 39):
        hits = index.search(A, vec(1, 2, 3), k=k)
        assert [h.entity_id for h in hits] == sorted(ids)[:k]
    hits = index.search(A, vec(0, 0, 1), k=3)
    assert [h.entity_id for h in hits] == ["best", "tie-00", "tie-01"]


def test_k_is_clamped(index: VectorIndex) -> None:
    vectors = random_vectors(130)
    index.upsert(A, [rec(f"e{i:03d}", tuple(v)) for i, v in enumerate(vectors)])
    assert len(index.search(A, vectors[0], k=1000)) == 100
    assert len(index.search(A, vectors[0], k=0)) == 1
    assert len(index.search(A, vectors[0], k=-3)) == 1
    not_an_int: Any = "5"
    with pytest.raises(InputError):
        index.search(A, vectors[0], k=not_an_int)


def test_hashes_pages_through_the_scope(index: VectorIndex, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_common, "PAGE", 7)
    vectors = random_vectors(60)
    index.upsert(A, [rec(f"e{i}", tuple(v), f"h{i}") for i, v in enumerate(vectors)])
    index.upsert(B, [rec(f"e{i}", tuple(v), "other") for i, v in enumerate(vectors[:20])])
    assert index.hashes(A) == {f"e{i}": f"h{i}" for i in range(60)}


def test_bad_arguments_are_typed_errors(index: VectorIndex) -> None:
    not_a_scope: Any = {"tenant_id": "tenant-a"}
    with pytest.raises(ScopeError):
        index.search(not_a_scope, vec(1), k=1)
    with pytest.raises(InputError):
        index.upsert(A, [rec("", vec(1))])
    with pytest.raises(InputError):
        index.delete(A, "e1")


def test_closed_index_refuses_work(make_index: Factory) -> None:
    idx = make_index()
    idx.close()
    idx.close()
    with pytest.raises(BackendError):
        idx.search(A, vec(1), k=1)


def test_flush_keeps_everything_searchable(index: VectorIndex) -> None:
    index.upsert(A, [rec("e1", vec(1))])
    index.flush()
    assert [h.entity_id for h in index.search(A, vec(1), k=1)] == ["e1"]


# --- identity: one collection per model id and dimension ---------------------------------------


def test_collection_names_keep_model_ids_apart() -> None:
    assert _common.safe_name("org/model") != _common.safe_name("org_model")
    assert _common.safe_name("../../etc").startswith("etc-")


def test_edge_model_change_opens_a_new_empty_shard(tmp_path: Path) -> None:
    first = EdgeVectorIndex(tmp_path, "model-a", DIM)
    first.upsert(A, [rec("e1", vec(1))])
    other_model = EdgeVectorIndex(tmp_path, "model-b", DIM)
    other_dim = EdgeVectorIndex(tmp_path, "model-a", DIM * 2)
    try:
        assert other_model.path != first.path != other_dim.path
        assert other_model.hashes(A) == {}
        assert other_dim.hashes(A) == {}
        assert other_dim.search(A, (1.0,) * (DIM * 2), k=5) == []
    finally:
        for idx in (first, other_model, other_dim):
            idx.close()


def test_client_model_change_uses_a_new_empty_collection() -> None:
    qdrant_client = pytest.importorskip("qdrant_client")
    shared = qdrant_client.QdrantClient(":memory:")
    first = ClientVectorIndex(shared, "model-a", DIM)
    other = ClientVectorIndex(shared, "model-b", DIM)
    first.upsert(A, [rec("e1", vec(1))])
    assert first.collection != other.collection
    assert other.hashes(A) == {}
    first.close()  # an injected client stays open for its owner
    assert other.hashes(A) == {}
    shared.close()


# --- edge: durability and the exclusive lock ----------------------------------------------------


def test_edge_survives_close_and_reopen(tmp_path: Path) -> None:
    idx = EdgeVectorIndex(tmp_path, "m", DIM)
    idx.upsert(A, [rec("e1", vec(1), "h1"), rec("e2", vec(0, 1), "h2")])
    idx.upsert(B, [rec("e1", vec(1), "hb")])
    idx.delete(A, ["e2"])
    idx.close()  # no flush: the WAL carries the writes

    again = EdgeVectorIndex(tmp_path, "m", DIM)
    try:
        assert again.hashes(A) == {"e1": "h1"}
        assert again.hashes(B) == {"e1": "hb"}
        assert [h.entity_id for h in again.search(A, vec(1), k=5)] == ["e1"]
    finally:
        again.close()


def test_edge_shard_is_exclusive_until_closed(tmp_path: Path) -> None:
    idx = EdgeVectorIndex(tmp_path, "m", DIM)
    with pytest.raises(BackendUnavailable):
        EdgeVectorIndex(tmp_path, "m", DIM)
    probe = (
        "import sys\n"
        "from graphctx.adapters.qdrant import EdgeVectorIndex\n"
        "from graphctx.errors import BackendUnavailable\n"
        "try:\n"
        f"    EdgeVectorIndex(sys.argv[1], 'm', {DIM}).close()\n"
        "except BackendUnavailable:\n"
        "    sys.exit(3)\n"
    )
    locked = subprocess.run([sys.executable, "-c", probe, str(tmp_path)], check=False)
    assert locked.returncode == 3  # another process cannot even read
    idx.close()
    assert subprocess.run([sys.executable, "-c", probe, str(tmp_path)], check=False).returncode == 0


# --- client: local path mode, the server factory ------------------------------------------------


def test_client_local_path_mode_is_durable(tmp_path: Path) -> None:
    idx = ClientVectorIndex(tmp_path, "m", DIM)
    assert idx.capabilities.durable
    idx.upsert(A, [rec("e1", vec(1))])
    with pytest.raises(BackendUnavailable):
        ClientVectorIndex(tmp_path, "m", DIM)
    idx.close()
    again = ClientVectorIndex(tmp_path, "m", DIM)
    try:
        assert again.hashes(A) == {"e1": "h1"}
    finally:
        again.close()


def test_local_mode_warnings_are_silenced(monkeypatch: pytest.MonkeyPatch) -> None:
    from qdrant_client.common import client_warnings

    monkeypatch.setattr(client_warnings, "SEEN_MESSAGES", set())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        idx = ClientVectorIndex(":memory:", "m", DIM)
        idx.upsert(A, [rec("e1", vec(1))])
        idx.search(A, vec(1), k=1)
        idx.close()
    assert [str(w.message) for w in caught] == []


def test_factories(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    edge = create_edge_index(settings, "m", DIM)
    local = create_local_index(settings, "m", DIM)
    try:
        assert edge.path.parent == tmp_path / "vectors"
        assert (tmp_path / "vectors-local" / local.collection).is_dir()
        assert local.name == "qdrant-local"
    finally:
        edge.close()
        local.close()


def test_server_factory_needs_a_url(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="GRAPHCTX_QDRANT_URL"):
        create_server_index(Settings(data_dir=tmp_path, qdrant_url=None), "m", DIM)


def test_server_down_is_backend_unavailable(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    settings = Settings(data_dir=tmp_path, qdrant_url=f"http://127.0.0.1:{port}")
    with pytest.raises(BackendUnavailable, match="unreachable"):
        create_server_index(settings, "m", DIM)


def test_bad_identity_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        EdgeVectorIndex(tmp_path, "", DIM)
    with pytest.raises(ConfigError):
        ClientVectorIndex(":memory:", "m", 0)
