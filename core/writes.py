"""Writes: the graph first, then the indexes, idempotently, with pending work journaled durably so
a crash between the two is repaired by `reconcile` (graph vs indexes by id + content hash)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from graphctx.errors import GraphctxError, InvalidVector
from graphctx.indexing import embedding_text, lexical_doc
from graphctx.kernel.ports import RebuildingIndex, VectorRecord
from graphctx.kernel.reads import batches, stored_hashes
from graphctx.kernel.stores import Stores
from graphctx.kernel.templates import (
    ENTITY_DELETE,
    ENTITY_GET,
    ENTITY_UPSERT,
    EntityDeleteParams,
    EntityGetParams,
    EntityUpsertParams,
)
from graphctx.model import Entity
from graphctx.scope import Scope
from graphctx.vectors import checked_vector

BATCH = 500


@dataclass
class SyncReport:
    indexed: int = 0
    removed: int = 0
    vector_skipped: list[str] = field(default_factory=list)
    index_error: str | None = None

    def add(self, other: SyncReport) -> None:
        self.indexed += other.indexed
        self.removed += other.removed
        self.vector_skipped += other.vector_skipped


@dataclass
class ReconcileReport:
    journal_replayed: int = 0
    lexical_repaired: int = 0
    vector_repaired: int = 0
    removed_from_indexes: int = 0
    graph_entities: int = 0
    vector_skipped: int = 0

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class IndexSync:
    """Keeps the lexical and vector indexes in step with the authoritative graph."""

    def __init__(self, stores: Stores) -> None:
        self.stores = stores

    def upsert_entities(self, scope: Scope, entities: Sequence[Entity]) -> tuple[Any, SyncReport]:
        ids = [e.id for e in entities]
        seqs = self.stores.journal.record(scope, ids, "upsert")
        result = self.stores.graph.run(ENTITY_UPSERT, scope, EntityUpsertParams(entities=tuple(entities)))
        return result, self._sync_then_complete(scope, ids, seqs)

    def delete_entities(self, scope: Scope, ids: Sequence[str]) -> tuple[Any, SyncReport]:
        seqs = self.stores.journal.record(scope, ids, "delete")
        result = self.stores.graph.run(ENTITY_DELETE, scope, EntityDeleteParams(ids=tuple(ids)))
        return result, self._sync_then_complete(scope, ids, seqs)

    def _sync_then_complete(self, scope: Scope, ids: Sequence[str], seqs: Sequence[int]) -> SyncReport:
        """The graph has committed; if an index fails now the journal keeps the work for reconcile
        and the report says so (hydration already hides anything the indexes still hold)."""
        try:
            report = self.sync(scope, ids)
        except GraphctxError as exc:
            return SyncReport(index_error=exc.message)
        self.stores.journal.complete(seqs)
        return report

    def sync(self, scope: Scope, ids: Sequence[str]) -> SyncReport:
        """Make both indexes hold exactly what the graph holds for these ids (idempotent)."""
        report = SyncReport()
        for batch in batches(ids, BATCH):
            chunk = list(dict.fromkeys(batch))
            found = self.stores.graph.run(ENTITY_GET, scope, EntityGetParams(ids=tuple(chunk))).entities
            present = [
                e for e in found if scope.contains(e.tenant_id or "", e.namespace or "", e.graph_id or "")
            ]
            gone = sorted(set(chunk) - {e.id for e in present})
            if present:
                self.stores.lexical.upsert(scope, [lexical_doc(e) for e in present])
                report.vector_skipped += self._upsert_vectors(scope, present)
            if gone:
                self.stores.lexical.delete(scope, gone)
                if self.stores.vector is not None:
                    self.stores.vector.delete(scope, gone)
            report.indexed += len(present)
            report.removed += len(gone)
        self.flush()
        return report

    def _upsert_vectors(self, scope: Scope, entities: Sequence[Entity]) -> list[str]:
        embedder, vector = self.stores.embedder, self.stores.vector
        if embedder is None or vector is None:
            return []
        matrix = embedder.embed([embedding_text(e) for e in entities])
        records, skipped = [], []
        for entity, row in zip(entities, matrix, strict=True):
            try:
                vec = checked_vector(row, embedder.dimension)
            except InvalidVector:
                skipped.append(entity.id)  # lexical and exact legs still find it
                continue
            records.append(
                VectorRecord(
                    entity_id=entity.id, content_hash=entity.content_hash, vector=tuple(vec.tolist())
                )
            )
        if records:
            vector.upsert(scope, records)
        if skipped:
            vector.delete(scope, skipped)
        return skipped

    def flush(self) -> None:
        self.stores.lexical.flush()
        if self.stores.vector is not None:
            self.stores.vector.flush()

    # -- reconcile ----------------------------------------------------------------------------

    def replay_journal(self, report: ReconcileReport) -> None:
        while pending := self.stores.journal.pending(BATCH):
            by_scope: dict[Scope, list[int]] = {}
            ids: dict[Scope, list[str]] = {}
            for entry in pending:
                by_scope.setdefault(entry.scope, []).append(entry.seq)
                ids.setdefault(entry.scope, []).append(entry.entity_id)
            for scope, seqs in by_scope.items():
                self.sync(scope, ids[scope])
                self.stores.journal.complete(seqs)
                report.journal_replayed += len(seqs)

    def refill_rebuilt(self) -> ReconcileReport:
        """Refill a lexical index that was rebuilt for a new layout from the graph (idempotent: an
        interrupted refill is redone on the next open)."""
        report = ReconcileReport()
        lexical = self.stores.lexical
        if isinstance(lexical, RebuildingIndex):
            scopes = lexical.rebuild_scopes()
            for scope in scopes:
                self.reconcile_scope(scope, report, None)
            if scopes:
                lexical.rebuild_done()
        return report

    def reconcile_scope(
        self, scope: Scope, report: ReconcileReport, progress: Callable[[int], None] | None
    ) -> None:
        graph_hashes = {
            h.id: h.content_hash for h in stored_hashes(self.stores.graph, scope, progress=progress)
        }
        report.graph_entities += len(graph_hashes)
        lexical = self.stores.lexical.hashes(scope)
        vector = self.stores.vector.hashes(scope) if self.stores.vector is not None else dict(graph_hashes)
        lexical_bad = {i for i, h in graph_hashes.items() if lexical.get(i) != h}
        vector_bad = {i for i, h in graph_hashes.items() if vector.get(i) != h}
        extra = (set(lexical) | set(vector)) - set(graph_hashes)
        todo = sorted(lexical_bad | vector_bad | extra)
        if todo:
            synced = self.sync(scope, todo)
            report.vector_skipped += len(synced.vector_skipped)
        report.lexical_repaired += len(lexical_bad)
        report.vector_repaired += len(vector_bad)
        report.removed_from_indexes += len(extra)
