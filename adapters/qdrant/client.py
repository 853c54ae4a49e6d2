"""`VectorIndex` on qdrant-client: a Qdrant server, or local mode (":memory:" or a directory) as a
stand-in for the server code path in tests. qdrant_client is imported only when an index is built,
so the edge adapter works without it."""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphctx.errors import BackendError, BackendUnavailable, ConfigError, GraphctxError
from graphctx.kernel.ports import Capabilities
from graphctx.scope import Scope

from ._common import (
    KEYWORD_INDEXES,
    SCOPE_FIELDS,
    VECTOR_NAME,
    Payload,
    Point,
    ScopedQdrantIndex,
    check_identity,
    safe_name,
)

if TYPE_CHECKING:
    from qdrant_client import QdrantClient

# local mode ignores payload indexes and search params (it is brute force anyway) and says so once
_LOCAL_NOISE = r"(Payload indexes have no effect|Local mode performs exact)"


def _import() -> Any:
    try:
        import qdrant_client
    except ImportError as exc:
        raise ConfigError(
            "the qdrant-client package is not installed; "
            "install it with `pip install 'graphctx[qdrant-server]'`"
        ) from exc
    return qdrant_client


def _probe_lock(path: Path) -> None:
    """qdrant-client loads a whole local store before it tries the store's lock, and leaks the lock
    file when the lock is taken: fail fast and clean instead (same portalocker lock, so same rules)."""
    import portalocker

    lock = path / ".lock"
    if not lock.exists():
        return
    with lock.open("r+") as f:
        try:
            portalocker.lock(f, portalocker.LockFlags.EXCLUSIVE | portalocker.LockFlags.NON_BLOCKING)
        except portalocker.exceptions.LockException:
            raise BackendUnavailable(
                f"local Qdrant store {path} is open in another client or process; close it first"
            ) from None
        portalocker.unlock(f)


class ClientVectorIndex(ScopedQdrantIndex):
    """`location` is a QdrantClient (not closed by close()), an http(s) URL, ":memory:", or a directory
    under which each model gets its own local store (local mode locks its folder per client)."""

    def __init__(
        self,
        location: QdrantClient | str | Path,
        model_id: str,
        dimension: int,
        *,
        api_key: str | None = None,
        timeout: int = 10,
    ) -> None:
        check_identity(model_id, dimension)
        qc = _import()
        self._models = qc.models
        self.collection = f"graphctx_{safe_name(model_id)}_{dimension}"
        self._owned = not isinstance(location, qc.QdrantClient)
        self._where = str(location) if self._owned else "the given client"
        self._client: QdrantClient = (
            self._connect(qc, location, api_key, timeout) if self._owned else location  # type: ignore[arg-type,assignment]
        )
        opts = self._client.init_options
        self._local = opts.get("location") == ":memory:" or opts.get("path") is not None
        self.name = "qdrant-local" if self._local else "qdrant-server"
        super().__init__(
            model_id,
            dimension,
            Capabilities(
                durable=opts.get("location") != ":memory:",
                concurrent_readers=not self._local,
                exact_search=True,
                in_process=self._local,
                # local mode filters in a Python loop and Qdrant documents it for up to 20,000 points:
                # a test stand-in, which the contract's 50,000-point shard test leaves out
                extra={"small_shards_only": True} if self._local else {},
            ),
        )
        self._exact = self._models.SearchParams(exact=True)  # filtered HNSW loses recall; exact does not
        try:
            with self._translate("open"):
                self._ensure_collection()
        except BaseException:
            self.close()
            raise

    def _connect(self, qc: Any, location: str | Path, api_key: str | None, timeout: int) -> QdrantClient:
        loc = str(location)
        with self._translate("open"):
            if loc == ":memory:":
                return qc.QdrantClient(location=":memory:")  # type: ignore[no-any-return]
            if loc.startswith(("http://", "https://")):
                # no version probe at construction: the first real call reports an unreachable server
                return qc.QdrantClient(url=loc, api_key=api_key, timeout=timeout, check_compatibility=False)  # type: ignore[no-any-return]
            path = Path(location) / self.collection
            path.parent.mkdir(parents=True, exist_ok=True)
            _probe_lock(path)
            return qc.QdrantClient(path=str(path))  # type: ignore[no-any-return]

    def _ensure_collection(self) -> None:
        from qdrant_client.http.exceptions import UnexpectedResponse

        m, c = self._models, self._client
        if not c.collection_exists(self.collection):
            try:
                params = m.VectorParams(size=self.dimension, distance=m.Distance.COSINE)
                c.create_collection(self.collection, vectors_config={VECTOR_NAME: params})
            except UnexpectedResponse as exc:
                if exc.status_code != 409:  # 409: another process created it first
                    raise
        info = c.get_collection(self.collection)
        vectors = info.config.params.vectors
        params = vectors.get(VECTOR_NAME) if isinstance(vectors, dict) else None
        if params is None or params.size != self.dimension or params.distance != m.Distance.COSINE:
            raise ConfigError(
                f"Qdrant collection {self.collection} exists with a vector config other than "
                f"{VECTOR_NAME!r}: {self.dimension}-d cosine"
            )
        for field, is_tenant in KEYWORD_INDEXES.items():
            if field not in (info.payload_schema or {}):
                self._create_index(field, is_tenant)

    def _create_index(self, field: str, is_tenant: bool) -> None:
        from qdrant_client.http.exceptions import UnexpectedResponse

        m = self._models
        keyword = m.PayloadSchemaType.KEYWORD
        tenant = m.KeywordIndexParams(type=m.KeywordIndexType.KEYWORD, is_tenant=True)
        schema = tenant if is_tenant else keyword
        try:
            self._client.create_payload_index(self.collection, field, field_schema=schema, wait=True)
        except UnexpectedResponse as exc:
            if schema is keyword or exc.status_code is None or not 400 <= exc.status_code < 500:
                raise
            # a server without the tenant flag (< 1.11) still gets a plain keyword index
            self._client.create_payload_index(self.collection, field, field_schema=keyword, wait=True)

    @contextmanager
    def _translate(self, action: str) -> Iterator[None]:
        from qdrant_client.http.exceptions import ApiException, ResponseHandlingException, UnexpectedResponse

        try:
            with warnings.catch_warnings():
                if getattr(self, "_local", False):
                    warnings.filterwarnings("ignore", message=_LOCAL_NOISE, category=UserWarning)
                yield
        except GraphctxError:
            raise
        except (ResponseHandlingException, OSError) as exc:
            raise BackendUnavailable(
                f"Qdrant at {self._where} is unreachable or timed out during {action}: {exc}", action=action
            ) from exc
        except UnexpectedResponse as exc:
            if exc.status_code in (401, 403):
                status = exc.status_code
                raise ConfigError(f"Qdrant at {self._where} rejected the API key (HTTP {status})") from exc
            body = exc.content.decode(errors="replace")[:300]
            raise BackendError(
                f"Qdrant {action} failed at {self._where}: HTTP {exc.status_code} {exc.reason_phrase}: {body}"
            ) from exc
        except (ApiException, RuntimeError) as exc:
            if "already accessed by another instance" in str(exc):
                raise BackendUnavailable(
                    f"local Qdrant store {self._where} is open in another client or process; close it first"
                ) from exc
            raise BackendError(f"Qdrant {action} failed at {self._where}: {exc}") from exc

    def _filter(self, scope: Scope) -> Any:
        m = self._models
        return m.Filter(
            must=[m.FieldCondition(key=f, match=m.MatchValue(value=getattr(scope, f))) for f in SCOPE_FIELDS]
        )

    def _write(self, points: Sequence[Point]) -> None:
        structs = [
            self._models.PointStruct(id=pid, vector={VECTOR_NAME: vec}, payload=payload)
            for pid, vec, payload in points
        ]
        self._client.upsert(self.collection, points=structs, wait=True)

    def _remove(self, ids: Sequence[str]) -> None:
        selector = self._models.PointIdsList(points=list(ids))
        self._client.delete(self.collection, points_selector=selector, wait=True)

    def _query(self, vector: list[float], flt: Any, limit: int) -> list[tuple[float, Payload | None]]:
        res = self._client.query_points(
            self.collection,
            query=vector,
            using=VECTOR_NAME,
            query_filter=flt,
            limit=limit,
            with_payload=True,
            search_params=self._exact,
        )
        return [(p.score, p.payload) for p in res.points]

    def _scroll(self, flt: Any, offset: Any, limit: int) -> tuple[list[Payload | None], Any]:
        records, nxt = self._client.scroll(
            self.collection, scroll_filter=flt, limit=limit, offset=offset, with_payload=True
        )
        return [r.payload for r in records], nxt

    def _release(self) -> None:
        if self._owned:
            self._client.close()
