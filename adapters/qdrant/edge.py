"""`VectorIndex` on qdrant-edge-py: the Qdrant engine in-process, one shard per model id + dimension."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from qdrant_edge import (
    Distance,
    EdgeConfig,
    EdgeShard,
    EdgeVectorParams,
    FieldCondition,
    Filter,
    KeywordIndexParams,
    MatchValue,
    PayloadSchemaType,
    Point,
    Query,
    QueryRequest,
    ScrollRequest,
    SearchParams,
    UpdateOperation,
)

from graphctx.errors import BackendError, BackendUnavailable, GraphctxError, ReadOnly
from graphctx.kernel.ports import Capabilities, VectorHit
from graphctx.scope import Scope

from ._common import KEYWORD_INDEXES, SCOPE_FIELDS, VECTOR_NAME, Payload, ScopedQdrantIndex, safe_name
from ._common import Point as PointTuple

_EXACT = SearchParams(exact=True)  # filtered HNSW loses recall on a tenant slice; exact does not
_CONFIG_FILE = "edge_config.json"


class EdgeVectorIndex(ScopedQdrantIndex):
    """Exclusive: the shard holds a lock on its WAL until close(), so one open handle per directory
    (in this process or any other).

    qdrant-edge-py 0.9 has no read-only open (loading takes the WAL lock and may write the shard's
    config and segments), so `read_only` borrows the shard for one call at a time, only while no
    writer holds the data directory (`held_by()` names it), and otherwise answers with
    `BackendUnavailable` saying why: the read trunk then falls back to the lexical leg and says so.
    A writer opening a shard that a reader borrowed waits for it (`lock_wait_s`)."""

    name = "qdrant-edge"

    def __init__(
        self,
        path: Path,
        model_id: str,
        dimension: int,
        *,
        read_only: bool = False,
        held_by: Callable[[], str] = lambda: "",
        lock_wait_s: float = 10.0,
    ) -> None:
        super().__init__(
            model_id,
            dimension,
            Capabilities(durable=True, concurrent_readers=False, exact_search=True, in_process=True),
        )
        self.path = Path(path) / f"{safe_name(model_id)}-{dimension}"
        self.read_only = read_only
        self._why_unavailable = ""
        self._shard: EdgeShard | None = None
        self._held_by = held_by
        if read_only:
            return
        deadline = time.monotonic() + lock_wait_s
        while True:
            try:
                self._shard = self._open()
                break
            except BackendUnavailable:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.1)  # a reader holds the shard for the length of one command
        try:
            self._ensure_indexes()
        except BaseException:
            self._shard.close()
            raise

    @contextmanager
    def _borrowed(self) -> Iterator[None]:
        """Read-only: the shard for one call, loaded and closed again, so no writer waits long."""
        if not self.read_only:
            yield
            return
        with self._lock:
            if not (self.path / _CONFIG_FILE).exists():
                yield  # nothing written yet: reads answer empty
                return
            holder = self._held_by()
            if holder:
                raise BackendUnavailable(
                    f"vector shard {self.path} is held by the process writing this data directory "
                    f"({holder}); qdrant-edge has no read-only open, so reads beside it use the other legs"
                )
            self._shard = self._open()
            try:
                yield
            finally:
                shard, self._shard = self._shard, None
                shard.close()

    def search(self, scope: Scope, vector: Sequence[float], k: int) -> list[VectorHit]:
        with self._borrowed():
            return [] if self.read_only and self._shard is None else super().search(scope, vector, k)

    def hashes(self, scope: Scope) -> dict[str, str]:
        with self._borrowed():
            return {} if self.read_only and self._shard is None else super().hashes(scope)

    @property
    def shard(self) -> EdgeShard:
        if self._shard is None:
            raise BackendUnavailable(self._why_unavailable or f"vector shard {self.path} is not open")
        return self._shard

    def _open(self) -> EdgeShard:
        params = EdgeVectorParams(size=self.dimension, distance=Distance.Cosine)
        config = EdgeConfig(vectors={VECTOR_NAME: params})
        exists = (self.path / _CONFIG_FILE).exists()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if exists:
                # passing the config makes the engine check it against the stored segments
                return EdgeShard.load(str(self.path), config)
            return EdgeShard.create(str(self.path), config)
        except Exception as exc:
            if "WouldBlock" in str(exc):
                raise BackendUnavailable(
                    f"vector shard {self.path} is already open (qdrant-edge locks its WAL exclusively); "
                    "close the other handle or process first",
                    path=str(self.path),
                ) from exc
            raise BackendError(
                f"cannot {'load' if exists else 'create'} qdrant-edge shard {self.path}: {exc}",
                path=str(self.path),
            ) from exc

    def _ensure_indexes(self) -> None:
        present = self.shard.info().payload_schema
        for field, is_tenant in KEYWORD_INDEXES.items():
            if field not in present:
                schema = KeywordIndexParams(is_tenant=True) if is_tenant else PayloadSchemaType.Keyword
                self.shard.update(UpdateOperation.create_field_index(field, schema))

    @contextmanager
    def _translate(self, action: str) -> Iterator[None]:
        try:
            yield
        except GraphctxError:
            raise
        except Exception as exc:  # the extension raises bare Exception
            raise BackendError(f"qdrant-edge {action} failed on {self.path}: {exc}") from exc

    def _filter(self, scope: Scope) -> Filter:
        # graph_id "" is a real value: MatchValue("") matches it, with or without the keyword index
        return Filter(must=[FieldCondition(key=f, match=MatchValue(getattr(scope, f))) for f in SCOPE_FIELDS])

    def _write(self, points: Sequence[PointTuple]) -> None:
        batch = [Point(id=pid, vector={VECTOR_NAME: vec}, payload=payload) for pid, vec, payload in points]
        self._writable().update(UpdateOperation.upsert_points(batch))

    def _remove(self, ids: Sequence[str]) -> None:
        self._writable().update(UpdateOperation.delete_points(list(ids)))

    def _query(self, vector: list[float], flt: Any, limit: int) -> list[tuple[float, Payload | None]]:
        request = QueryRequest(
            limit=limit,
            query=Query.Nearest(vector, using=VECTOR_NAME),
            filter=flt,
            with_payload=True,
            params=_EXACT,
        )
        return [(p.score, p.payload) for p in self.shard.query(request)]

    def _scroll(self, flt: Any, offset: Any, limit: int) -> tuple[list[Payload | None], Any]:
        records, nxt = self.shard.scroll(
            ScrollRequest(offset=offset, limit=limit, filter=flt, with_payload=True, with_vector=False)
        )
        return [r.payload for r in records], nxt

    def _flush(self) -> None:
        if self._shard is not None and not self.read_only:
            self._shard.flush()

    def _writable(self) -> EdgeShard:
        if self.read_only:
            raise ReadOnly(f"vector shard {self.path} is open read-only")
        return self.shard

    def _release(self) -> None:
        if self._shard is not None:
            self._shard.close()
