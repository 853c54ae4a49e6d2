"""`VectorIndex` as exact brute force over one numpy matrix per scope, readable by many processes.

A search is one float32 matrix-vector product over the scope's rows (BLAS, which releases the GIL,
so it runs beside the lexical leg and beside other requests' searches), then a top-k with ties
broken by entity id: exact by construction (recall 1.0 against brute force at any scope size).

One writer per directory (a lock file; the data directory's writer lock already guarantees it for
graphctx processes); readers open nothing for writing, map the writer's files read-only (every
process shares the page cache) and catch up with the writer's last published write before each read,
so a read that starts after a write was acknowledged sees it.

At most `max_open_scopes` shards stay open (LRU): the least recently used one beyond it is synced
first (its deferred appends fsynced and published), then dropped, so closing it loses nothing and a
reopen reads exactly what it held. A search in flight on a dropped shard keeps its snapshot (an
immutable view whose mapping stays valid while referenced).
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import IO

import numpy as np
from numpy.typing import NDArray

from graphctx.errors import (
    BackendError,
    BackendUnavailable,
    ConfigError,
    InputError,
    InvalidVector,
    ReadOnly,
    ScopeError,
)
from graphctx.kernel.ports import CacheSizes, Capabilities, VectorHit, VectorRecord
from graphctx.scope import Scope
from graphctx.vectors import checked_vector, collection_name, valid_rows

from .codes import SLACK, CodeBook, candidates
from .shard import ScopeShard, Snapshot, read_scope

MAX_K = 100
MAX_DIMENSION = 65_536
LOCK_FILE = "writer.lock"
MAX_OPEN_SCOPES = 256  # FlatSettings.max_open_scopes' default
CODES_MIN_ROWS = 8192  # FlatSettings.codes_min_rows' default

log = logging.getLogger("graphctx.adapters.flat")


@functools.cache
def limit_blas_threads() -> None:
    """One BLAS thread per call, once per process: requests already run in parallel, and a
    multi-threaded BLAS spinning for busy cores was 2-3x slower than one thread here (measured)."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(1, user_api="blas")


def scope_dirname(scope: Scope) -> str:
    key = json.dumps([scope.tenant_id, scope.namespace, scope.graph_id], ensure_ascii=False)
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def _require_scope(scope: object) -> Scope:
    if not isinstance(scope, Scope):
        raise ScopeError(f"a vector index needs a Scope, got {type(scope).__name__}")
    return scope


def _clamp_k(k: int) -> int:
    if isinstance(k, bool) or not isinstance(k, int):
        raise InputError(f"k must be an integer, got {type(k).__name__}")
    return max(1, min(k, MAX_K))


def shortlist(scores: NDArray[np.float32], k: int) -> NDArray[np.intp]:
    """Rows whose BLAS score is within SLACK of the k-th best: the only rows that can be in the top
    k once every row is scored the same way (`ranked`)."""
    n = len(scores)
    if n <= k:
        return np.flatnonzero(np.isfinite(scores))
    kth = np.partition(scores, n - k)[n - k]
    return np.flatnonzero((scores >= kth - SLACK) & np.isfinite(scores))


def ranked(
    matrix: NDArray[np.float32],
    ids: Sequence[str],
    rows: NDArray[np.intp],
    query: NDArray[np.float32],
    k: int,
) -> list[tuple[int, float]]:
    """The k best of `rows` by (score descending, entity id), each row's score a sum of its own
    products: identical rows score identically, which BLAS (blocks of rows, another order for the
    rows left over) does not promise, and ties by id depend on it."""
    scores = np.einsum("ij,j->i", matrix[rows], query)
    picked = top_rows(scores, [ids[r] for r in rows.tolist()], k)
    return [(int(rows[i]), float(scores[i])) for i in picked]


def top_rows(scores: NDArray[np.float32], ids: Sequence[str], k: int) -> list[int]:
    """Rows of the k best scores, by (score descending, entity id): everything tied with the k-th
    score is ranked by id, so the cut is deterministic."""
    n = len(scores)
    if n == 0:
        return []
    if n > k:
        kth = np.partition(scores, n - k)[n - k]
        rows = np.flatnonzero(scores >= kth)
    else:
        rows = np.arange(n)
    rows = rows[np.isfinite(scores[rows])]
    ordered = sorted(rows.tolist(), key=lambda r: (-float(scores[r]), ids[r]))
    return ordered[:k]


class FlatVectorIndex:
    """Exact scoped search; one directory per (model id, dimension), one sub-directory per scope."""

    name = "flat"

    def __init__(
        self,
        path: Path,
        model_id: str,
        dimension: int,
        *,
        read_only: bool = False,
        max_open_scopes: int = MAX_OPEN_SCOPES,
        codes_min_rows: int = CODES_MIN_ROWS,
    ) -> None:
        if not isinstance(model_id, str) or not model_id.strip():
            raise ConfigError("vector index needs a non-empty embedding model id")
        if (
            isinstance(dimension, bool)
            or not isinstance(dimension, int)
            or not 0 < dimension <= MAX_DIMENSION
        ):
            raise ConfigError(f"vector dimension must be an integer in 1..{MAX_DIMENSION}, got {dimension!r}")
        if isinstance(max_open_scopes, bool) or not isinstance(max_open_scopes, int) or max_open_scopes < 1:
            raise ConfigError(f"max_open_scopes must be a positive integer, got {max_open_scopes!r}")
        if isinstance(codes_min_rows, bool) or not isinstance(codes_min_rows, int) or codes_min_rows < 0:
            raise ConfigError(f"codes_min_rows must be an integer >= 0, got {codes_min_rows!r}")
        self.model_id = model_id
        self.dimension = dimension
        self.read_only = read_only
        self.path = Path(path) / f"{collection_name(model_id)}-{dimension}"
        self._lock = threading.Lock()
        self.max_open_scopes = max_open_scopes
        self.codes_min_rows = codes_min_rows
        self._shards: OrderedDict[Scope, ScopeShard] = OrderedDict()  # least recently used first
        self._evictions = 0
        self._closed = False
        self._deferred = False
        self._writer_lock: IO[bytes] | None = None
        limit_blas_threads()
        if not read_only:
            self._writer_lock = self._take_writer_lock()

    def _take_writer_lock(self) -> IO[bytes]:
        self.path.mkdir(parents=True, exist_ok=True)
        fh = (self.path / LOCK_FILE).open("ab")
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.close()
            raise BackendUnavailable(
                f"flat vector index {self.path} is open for writing elsewhere (another process or an "
                "open FlatVectorIndex on the same directory)",
                path=str(self.path),
            ) from None
        return fh

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(durable=True, concurrent_readers=True, exact_search=True, in_process=True)

    # -- shards --------------------------------------------------------------------------------

    def _shard(self, scope: Scope, *, create: bool) -> ScopeShard | None:
        with self._lock:
            return self._open(scope, create=create)

    def _open(self, scope: Scope, *, create: bool) -> ScopeShard | None:
        """The scope's shard, caught up with the writer (None: nothing stored for it yet). Called
        under `_lock`: a writer's caller uses the shard before releasing it, so a shard is never
        written after it was evicted (a reopen would cut such a write off as an unpublished tail)."""
        if self._closed:
            raise BackendError(f"flat vector index {self.path} is closed")
        shard = self._shards.get(scope)
        if shard is not None:
            self._shards.move_to_end(scope)
            if self.read_only:
                shard.refresh()
            return shard
        where = self.path / scope_dirname(scope)
        if not create and not (where / "manifest.json").exists():
            return None
        stored = read_scope(where)
        if stored is not None and stored != scope:
            raise BackendError(f"flat vector shard {where} holds another scope")
        shard = ScopeShard(where, scope, self.dimension, writer=not self.read_only)
        shard.deferred = self._deferred
        self._shards[scope] = shard
        self._evict()
        return shard

    def _evict(self) -> None:
        """Close the least recently used shards beyond the cap, each made durable first. One that
        cannot be synced stays open (over the cap) rather than lose its unsynced appends."""
        for scope in list(self._shards)[:-1]:  # never the one just opened
            if len(self._shards) <= self.max_open_scopes:
                return
            try:
                self._shards[scope].sync()
            except (OSError, BackendError):
                log.exception("flat vector shard of %s could not be synced; it stays open", scope)
                continue
            del self._shards[scope]
            self._evictions += 1

    def _snapshot(self, scope: Scope) -> tuple[ScopeShard | None, Snapshot | None]:
        shard = self._shard(scope, create=False)
        return shard, (shard.snapshot if shard is not None else None)

    # -- the port --------------------------------------------------------------------------------

    def upsert(self, scope: Scope, records: Sequence[VectorRecord]) -> None:
        _require_scope(scope)
        latest: dict[str, VectorRecord] = {}
        for rec in records:
            if not isinstance(rec, VectorRecord):
                raise InputError(f"expected VectorRecord, got {type(rec).__name__}")
            if not isinstance(rec.entity_id, str) or not rec.entity_id:
                raise InputError(f"entity id must be a non-empty string, got {rec.entity_id!r}")
            latest[rec.entity_id] = rec
        if not latest:
            return
        try:
            raw = np.array([rec.vector for rec in latest.values()], dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise InvalidVector(f"vectors are not numeric or not all of one length: {exc}") from exc
        if raw.ndim != 2 or raw.shape[1] != self.dimension:
            raise InvalidVector(f"vectors have shape {raw.shape}, expected (n, {self.dimension})")
        matrix, ok = valid_rows(raw, self.dimension)  # every record checked before anything is written
        if not ok.all():
            bad = list(latest)[int(np.flatnonzero(~ok)[0])]
            raise InvalidVector(f"vector of {bad[:80]!r} is non-finite or all zero", entity_id=bad[:80])
        if self.read_only:
            raise ReadOnly(f"flat vector index {self.path} is open read-only")
        with self._lock:
            shard = self._open(scope, create=True)
            assert shard is not None
            shard.append(list(latest), [r.content_hash for r in latest.values()], matrix)

    def delete(self, scope: Scope, entity_ids: Sequence[str]) -> None:
        _require_scope(scope)
        if isinstance(entity_ids, str):
            raise InputError("entity_ids must be a sequence of ids, not one string")
        for entity_id in entity_ids:
            if not isinstance(entity_id, str) or not entity_id:
                raise InputError(f"entity id must be a non-empty string, got {entity_id!r}")
        if self.read_only:
            raise ReadOnly(f"flat vector index {self.path} is open read-only")
        if not entity_ids:
            return
        with self._lock:
            shard = self._open(scope, create=False)
            if shard is not None:
                shard.remove(list(entity_ids))

    def search(self, scope: Scope, vector: Sequence[float], k: int) -> list[VectorHit]:
        _require_scope(scope)
        query = checked_vector(vector, self.dimension)
        k = _clamp_k(k)
        shard, snap = self._snapshot(scope)
        if shard is None or snap is None or snap.live == 0:
            return []
        if snap.codes is not None and snap.codes.rows == snap.rows:
            rows = candidates(snap.codes, snap.matrix, snap.dead, query, k)
        else:
            scores = snap.matrix @ query  # BLAS: the GIL is released for the product
            if snap.dead is not None:
                scores[snap.dead] = -np.inf
            rows = shortlist(scores, k)
        found = ranked(snap.matrix, snap.ids, rows, query, k)
        self._maybe_code(scope, shard)
        stored = shard.scope.as_dict()  # what the directory holds: core re-checks it
        return [
            VectorHit(entity_id=snap.ids[row], score=score, content_hash=snap.hashes[row], **stored)
            for row, score in found
        ]

    # -- codes (codes.py): built in the background, used once installed ------------------------

    def _maybe_code(self, scope: Scope, shard: ScopeShard) -> None:
        with self._lock:
            shard.searches += 1
            if self._closed or not shard.wants_codes(self.codes_min_rows):
                return
            shard.coding = True
            snap, generation = shard.snapshot, shard.generation
        threading.Thread(
            target=self._build_codes,
            args=(scope, shard, snap, generation),
            name="graphctx-flat-codes",
            daemon=True,
        ).start()

    def _build_codes(self, scope: Scope, shard: ScopeShard, snap: Snapshot, generation: int) -> None:
        try:
            import numkong  # noqa: F401  (its first import is slow: paid here, not by a search)

            book = CodeBook(snap.matrix[: snap.rows])
        except Exception:  # the searches stay brute force (exact): worth a log line, not a failure
            log.exception("flat vector codes of %s could not be built", scope)
            book = None
        with self._lock:
            shard.coding = False
            if book is not None and not self._closed and self._shards.get(scope) is shard:
                shard.install_codes(book, generation)

    def build_codes(self, scope: Scope) -> bool:
        """Build the scope's codes now, in this thread (tests, benchmarks); False: nothing stored."""
        _require_scope(scope)
        shard, snap = self._snapshot(scope)
        if shard is None or snap is None or snap.rows == 0:
            return False
        with self._lock:
            generation = shard.generation
        self._build_codes(scope, shard, snap, generation)
        return shard.snapshot.codes is not None

    def hashes(self, scope: Scope) -> dict[str, str]:
        _require_scope(scope)
        with self._lock:
            shard = self._open(scope, create=False)
            return shard.live_hashes() if shard is not None else {}

    def caches(self) -> CacheSizes:
        """The open scopes (an LRU of `max_open_scopes`; `evictions` so far), their matrices (not a
        cache, the index itself: rows x dimension x 4 bytes, mapped from the shard files) and the
        int8 codes built in this process's memory (a cache: about a quarter of the matrices)."""
        with self._lock:
            snaps = [s.snapshot for s in self._shards.values()]
            codes = sum(shard.codes_bytes() for shard in self._shards.values())
            evictions = self._evictions
        rows = sum(s.rows for s in snaps)
        return {
            "flat_open_scopes": {
                "entries": len(snaps),
                "max_entries": self.max_open_scopes,
                "evictions": evictions,
            },
            "flat_vectors": {"bytes": rows * self.dimension * 4},
            "flat_codes": {"bytes": codes},
        }

    def defer_durability(self) -> bool:
        """Writes searchable in this process at once, synced and published at `flush()`."""
        with self._lock:
            if self.read_only or self._closed:
                return False
            self._deferred = True
            for shard in self._shards.values():
                shard.deferred = True
            return True

    def flush(self) -> None:
        """Every write is synced and published before it returns (deferred: at this call)."""
        with self._lock:
            if self._closed:
                raise BackendError(f"flat vector index {self.path} is closed")
            for shard in self._shards.values():
                shard.sync()

    def close(self) -> None:
        with self._lock:
            try:
                for shard in self._shards.values() if not self._closed else ():
                    shard.sync()  # a failure leaves the writes journaled: the next open replays them
            finally:
                self._closed = True
                self._shards.clear()
                lock, self._writer_lock = self._writer_lock, None
                if lock is not None:
                    with contextlib.suppress(OSError):
                        lock.close()
