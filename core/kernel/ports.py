"""The ports every backend implements. Core talks to stores only through these.

No method takes query text for a store to interpret: the graph runs catalogued templates, the
lexical index builds its own term queries from analysed tokens, the vector index takes vectors.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Literal, Protocol, TypeVar, runtime_checkable

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict

from graphctx.auth import IssuedKey, Principal
from graphctx.kernel.templates import Template
from graphctx.scope import Scope

P = TypeVar("P", bound=BaseModel)
R = TypeVar("R", bound=BaseModel)

Vector = NDArray[np.float32]


@dataclass(frozen=True)
class Capabilities:
    """What an adapter supports. Each field is one documented capability; the contract suite skips
    tests that need a capability the adapter declares absent, naming the field."""

    templates: frozenset[str] = frozenset()
    """Names of the catalogue templates the store translates (graph stores)."""
    durable: bool = True
    """Data survives close() and reopen on the same location."""
    concurrent_readers: bool = True
    """Other processes may read while this one writes."""
    exact_search: bool = True
    """Scoped vector search is exact (no filtered-HNSW recall loss)."""
    in_process: bool = False
    """Reads compute in this process (an embedded store) rather than wait on a server: they hold the
    interpreter, so when every store says so the service runs one read at a time per process
    (`Settings.read_concurrency`). False, the default, claims nothing and leaves reads unlimited."""
    extra: Mapping[str, bool] = field(default_factory=dict)
    """Adapter-specific flags, documented by the adapter."""


class _Hit(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    entity_id: str
    score: float
    tenant_id: str
    namespace: str
    graph_id: str
    content_hash: str


class LexicalHit(_Hit):
    """A BM25 hit, carrying the scope the index stored with it so core can re-check isolation."""


class VectorHit(_Hit):
    """A dense hit, carrying the scope the index stored with it so core can re-check isolation."""


class LexicalDoc(BaseModel):
    """What the lexical index holds for one entity: approved text only, never a source body."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    entity_id: str
    name: str
    aliases: tuple[str, ...] = ()
    type: str = ""
    qualified_name: str = ""
    path: str = ""
    summary: str = ""
    text: str = ""
    """Indexed-only text (Entity.search_text): searchable, never stored by the index nor returned."""
    content_hash: str


class VectorRecord(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True, defer_build=True)

    entity_id: str
    content_hash: str
    vector: tuple[float, ...]


@runtime_checkable
class GraphStore(Protocol):
    """The authoritative graph. Executes catalogue templates; takes no query text."""

    name: str

    @property
    def capabilities(self) -> Capabilities: ...

    def run(self, template: Template[P, R], scope: Scope, params: P) -> R: ...

    def ensure_schema(self) -> None: ...

    def close(self) -> None: ...


@runtime_checkable
class LexicalIndex(Protocol):
    name: str

    @property
    def capabilities(self) -> Capabilities: ...

    def upsert(self, scope: Scope, docs: Sequence[LexicalDoc]) -> None: ...

    def delete(self, scope: Scope, entity_ids: Sequence[str]) -> None: ...

    def search(self, scope: Scope, text: str, k: int) -> list[LexicalHit]: ...

    def hashes(self, scope: Scope) -> dict[str, str]: ...

    def flush(self) -> None:
        """Make every write so far visible to search (the contract suite calls it before reading)."""

    def close(self) -> None: ...


@runtime_checkable
class RebuildingIndex(Protocol):
    """Optional for a lexical index: after a layout change (new fields or analysers) it replaced an
    index of the old layout by an empty one and names the scopes the old one held; the service refills
    them from the graph when it opens, then calls `rebuild_done()`."""

    def rebuild_scopes(self) -> list[Scope]: ...

    def rebuild_done(self) -> None: ...


class QueuedWrites(Protocol):
    """A lexical index's writes sent ahead (`OffloadsWrites`): `upsert`/`delete` return once sent;
    `done()` waits for the oldest call sent and not yet done, which is then durable and searchable,
    or raises its failure (typed); calls take effect in the order sent. `pending()` counts the calls
    not done yet."""

    def upsert(self, scope: Scope, docs: Sequence[LexicalDoc]) -> None: ...

    def delete(self, scope: Scope, entity_ids: Sequence[str]) -> None: ...

    def pending(self) -> int: ...

    def done(self) -> None: ...


@runtime_checkable
class OffloadsWrites(Protocol):
    """Optional for a lexical index: for a long run of writes (a repository index) the writing may
    move to a process of its own while inside `writer_process()`, which yields a `QueuedWrites` to
    send calls ahead (None: it did not move). Meanwhile every plain upsert/delete keeps its contract:
    it returns once durable and searchable here, after the calls sent ahead."""

    def writer_process(self) -> AbstractContextManager[QueuedWrites | None]: ...


@runtime_checkable
class DefersDurability(Protocol):
    """Optional for a lexical or vector index: asked once by a service that opens for writing. When it
    answers True, every later upsert/delete is searchable in this process when it returns but durable
    (on disk, seen by other processes) only after the next `flush()`. The service then acknowledges a
    write before the index's slow disk commit and keeps the write journaled until a flush made the
    index durable (core/durability.py): a crash in between is repaired by the journal replay."""

    def defer_durability(self) -> bool: ...


CacheSizes = dict[str, dict[str, int]]
"""Per cache: `entries` (now) and `max_entries`, or `bytes` and `max_bytes`: what `status` shows. A
figure without a maximum is data the store holds (sized by what was stored), not a cache."""


@runtime_checkable
class ReportsCaches(Protocol):
    """Optional for any store: the caches it keeps in this process and their bounds (docs/operations.md
    lists them). Everything a store keeps beyond these is data it was asked to hold."""

    def caches(self) -> CacheSizes: ...


@runtime_checkable
class VectorIndex(Protocol):
    """Dense vectors for one embedding model (id + dimension): one collection per model."""

    name: str
    model_id: str
    dimension: int

    @property
    def capabilities(self) -> Capabilities: ...

    def upsert(self, scope: Scope, records: Sequence[VectorRecord]) -> None: ...

    def delete(self, scope: Scope, entity_ids: Sequence[str]) -> None: ...

    def search(self, scope: Scope, vector: Sequence[float], k: int) -> list[VectorHit]: ...

    def hashes(self, scope: Scope) -> dict[str, str]: ...

    def flush(self) -> None: ...

    def close(self) -> None: ...


@runtime_checkable
class Embedder(Protocol):
    """Local, offline, deterministic. `model_id` and `dimension` are its identity."""

    model_id: str
    dimension: int
    similarity_floor: float
    """Cosine below which a dense hit is noise for this model (measured per model); the dense leg
    drops such hits so an unrelated query finds nothing instead of the nearest strangers."""

    def embed(self, texts: Sequence[str]) -> Vector:
        """Shape (len(texts), dimension), float32."""


JournalOp = Literal["upsert", "delete"]


class JournalEntry(BaseModel):
    model_config = ConfigDict(frozen=True)

    seq: int
    tenant_id: str
    namespace: str
    graph_id: str
    entity_id: str
    op: JournalOp

    @property
    def scope(self) -> Scope:
        return Scope(self.tenant_id, self.namespace, self.graph_id)


class PendingWrite(BaseModel):
    """A write batch recorded before it touched the graph and not yet completed: its plan is
    re-applied (every piece is idempotent) and its entities re-indexed at the next open for writing."""

    model_config = ConfigDict(frozen=True)

    seq: int
    tenant_id: str
    namespace: str
    graph_id: str
    plan: str
    """The batch's plan as JSON (graphctx.writes.WritePlan)."""

    @property
    def scope(self) -> Scope:
        return Scope(self.tenant_id, self.namespace, self.graph_id)


@runtime_checkable
class IndexJournal(Protocol):
    """Durable record of writes in flight: write plans recorded before the graph sees them, and
    index work that the graph has committed and the indexes may not have."""

    def record(self, scope: Scope, entity_ids: Sequence[str], op: JournalOp) -> list[int]: ...

    def complete(self, seqs: Sequence[int]) -> None: ...

    def pending(self, limit: int) -> list[JournalEntry]: ...

    def count_pending(self) -> int: ...

    def record_write(self, scope: Scope, plan: str) -> int:
        """Durably record a write plan; returning means it survives a crash."""

    def complete_write(self, seq: int) -> None:
        """Idempotent."""

    def pending_writes(self, limit: int) -> list[PendingWrite]:
        """Oldest first."""

    def close(self) -> None: ...


@runtime_checkable
class KeyStore(Protocol):
    """API keys, stored hashed. `verify` returns the principal of a valid, unrevoked key.

    A store whose `verify` never waits (a local lookup of microseconds, no network, no lock held
    across I/O) may set the class attribute `verify_in_loop = True`: `graphctx serve` then calls it
    in its event loop instead of handing every request's check to a worker thread. Without it (the
    default), `verify` runs in a worker thread and may block."""

    def create(self, principal: Principal) -> IssuedKey: ...

    def verify(self, token: str) -> Principal:
        """The key's principal; graphctx.auth.AuthError for anything else (one message for all)."""

    def revoke(self, key_id: str) -> bool: ...

    def list(self) -> list[Principal]: ...

    def close(self) -> None: ...
