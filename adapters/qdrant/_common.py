"""What both Qdrant indexes share: identity, point ids, payloads, validation, ordering, paging.

`ScopedQdrantIndex` implements the `VectorIndex` port once; a backend supplies five primitives
(`_filter`, `_write`, `_remove`, `_query`, `_scroll`) and its own error translation.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any, TypeVar

from graphctx.errors import BackendError, ConfigError, InputError, ScopeError
from graphctx.kernel.ports import Capabilities, VectorHit, VectorRecord
from graphctx.scope import Scope
from graphctx.vectors import checked_vector, collection_name

T = TypeVar("T")

VECTOR_NAME = "dense"
SCOPE_FIELDS = ("tenant_id", "namespace", "graph_id")
# field -> is_tenant; the tenant flag lets Qdrant co-locate a tenant's points.
KEYWORD_INDEXES = {"tenant_id": True, "namespace": False, "graph_id": False, "entity_id": False}
MAX_K = 100
MAX_DIMENSION = 65_536  # Qdrant's own limit
TIE_PAD = 8
PAGE = 1_000
WRITE_BATCH = 256

_POINT_NS = uuid.uuid5(uuid.NAMESPACE_URL, "https://graphctx.dev/ns/vector-point")

Payload = dict[str, Any]
Point = tuple[str, list[float], Payload]


def check_identity(model_id: str, dimension: int) -> None:
    if not isinstance(model_id, str) or not model_id.strip():
        raise ConfigError("vector index needs a non-empty embedding model id")
    if isinstance(dimension, bool) or not isinstance(dimension, int) or not 1 <= dimension <= MAX_DIMENSION:
        raise ConfigError(f"vector dimension must be an integer in 1..{MAX_DIMENSION}, got {dimension!r}")


safe_name = collection_name


def point_id(scope: Scope, entity_id: str) -> str:
    """Deterministic and scope-qualified, so equal entity ids in two tenants never collide."""
    key = json.dumps([scope.tenant_id, scope.namespace, scope.graph_id, entity_id], ensure_ascii=False)
    return str(uuid.uuid5(_POINT_NS, key))


def require_scope(scope: object) -> Scope:
    if not isinstance(scope, Scope):
        raise ScopeError(f"a vector index needs a Scope, got {type(scope).__name__}")
    return scope


def _entity_id(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise InputError(f"entity id must be a non-empty string, got {value!r}")
    return value


def prepare_points(scope: Scope, records: Sequence[VectorRecord], dimension: int) -> list[Point]:
    """Validates every record before anything is written; a repeated entity id keeps its last record."""
    points: dict[str, Point] = {}
    for rec in records:
        if not isinstance(rec, VectorRecord):
            raise InputError(f"expected VectorRecord, got {type(rec).__name__}")
        vec = checked_vector(rec.vector, dimension).tolist()
        entity_id = _entity_id(rec.entity_id)
        payload = {**scope.as_dict(), "entity_id": entity_id, "content_hash": rec.content_hash}
        pid = point_id(scope, entity_id)
        points[pid] = (pid, vec, payload)
    return list(points.values())


def point_ids(scope: Scope, entity_ids: Sequence[str]) -> list[str]:
    if isinstance(entity_ids, str):
        raise InputError("entity_ids must be a sequence of ids, not one string")
    return sorted({point_id(scope, _entity_id(e)) for e in entity_ids})


def clamp_k(k: int) -> int:
    if isinstance(k, bool) or not isinstance(k, int):
        raise InputError(f"k must be an integer, got {type(k).__name__}")
    return max(1, min(k, MAX_K))


def to_hit(payload: Payload | None, score: float) -> VectorHit:
    """Scope fields come from the stored payload so core's isolation re-check sees what was stored."""
    p = payload or {}
    return VectorHit(
        entity_id=str(p.get("entity_id", "")),
        score=float(score),
        tenant_id=str(p.get("tenant_id", "")),
        namespace=str(p.get("namespace", "")),
        graph_id=str(p.get("graph_id", "")),
        content_hash=str(p.get("content_hash", "")),
    )


def top_k(fetch: Callable[[int], list[VectorHit]], k: int) -> list[VectorHit]:
    """Top k by (score desc, entity_id). The engine breaks ties by its own id order, so while a tie
    may straddle the cut we fetch more, until the cut falls strictly above the last score fetched or
    the scope has nothing more: however many points share the k-th score (a fetch capped at a page
    kept the engine's tied points, not the smallest ids)."""
    limit = k + TIE_PAD
    while True:
        hits = sorted(fetch(limit), key=lambda h: (-h.score, h.entity_id))
        if len(hits) < limit or hits[k - 1].score > hits[-1].score:
            return hits[:k]
        limit *= 4


def batched(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class ScopedQdrantIndex:
    """The port, once. Every read carries the scope filter; ids and payloads are scope-qualified."""

    name: str = "qdrant"

    def __init__(self, model_id: str, dimension: int, capabilities: Capabilities) -> None:
        check_identity(model_id, dimension)
        self.model_id = model_id
        self.dimension = dimension
        self._capabilities = capabilities
        self._lock = threading.RLock()
        self._closed = False

    @property
    def capabilities(self) -> Capabilities:
        return self._capabilities

    # backend primitives
    def _filter(self, scope: Scope) -> Any:
        raise NotImplementedError

    def _write(self, points: Sequence[Point]) -> None:
        raise NotImplementedError

    def _remove(self, ids: Sequence[str]) -> None:
        raise NotImplementedError

    def _query(self, vector: list[float], flt: Any, limit: int) -> list[tuple[float, Payload | None]]:
        raise NotImplementedError

    def _scroll(self, flt: Any, offset: Any, limit: int) -> tuple[list[Payload | None], Any]:
        raise NotImplementedError

    def _translate(self, action: str) -> AbstractContextManager[None]:
        """Turns the backend's exceptions into graphctx errors."""
        return nullcontext()

    def _release(self) -> None:
        raise NotImplementedError

    @contextmanager
    def _using(self, action: str) -> Iterator[None]:
        with self._lock:
            if self._closed:
                raise BackendError(f"{self.name} index for {self.model_id!r} is closed")
            with self._translate(action):
                yield

    # the port
    def upsert(self, scope: Scope, records: Sequence[VectorRecord]) -> None:
        points = prepare_points(require_scope(scope), records, self.dimension)
        with self._using("upsert"):
            for batch in batched(points, WRITE_BATCH):
                self._write(batch)

    def delete(self, scope: Scope, entity_ids: Sequence[str]) -> None:
        ids = point_ids(require_scope(scope), entity_ids)
        with self._using("delete"):
            for batch in batched(ids, WRITE_BATCH):
                self._remove(batch)

    def search(self, scope: Scope, vector: Sequence[float], k: int) -> list[VectorHit]:
        require_scope(scope)
        query = checked_vector(vector, self.dimension).tolist()
        k = clamp_k(k)
        with self._using("search"):
            flt = self._filter(scope)
            return top_k(lambda limit: [to_hit(p, s) for s, p in self._query(query, flt, limit)], k)

    def hashes(self, scope: Scope) -> dict[str, str]:
        require_scope(scope)
        out: dict[str, str] = {}
        with self._using("scroll"):
            flt = self._filter(scope)
            offset: Any = None
            while True:
                payloads, offset = self._scroll(flt, offset, PAGE)
                for p in payloads:
                    hit = to_hit(p, 0.0)
                    # nothing downstream re-checks this map, so a foreign point is dropped here
                    if hit.entity_id and scope.contains(hit.tenant_id, hit.namespace, hit.graph_id):
                        out[hit.entity_id] = hit.content_hash
                if offset is None:
                    return out

    def flush(self) -> None:
        with self._using("flush"):
            self._flush()

    def _flush(self) -> None:
        return None

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            with self._translate("close"):
                self._release()
