"""Writes: a validated batch becomes a plan, journaled durably before the graph sees it; then the
graph, then the indexes, then the journal entry is completed.

Every piece of a plan is idempotent (upserts of final versions, ends that only shorten validity,
deletes), so a plan that a crash, a kill or a failing backend interrupted is completed by applying
it again: at the next open for writing, before the next write, or by `reconcile`. A write is either
acknowledged done or reported as recorded-and-to-be-completed; it is never silently half-applied,
on a transactional store (SQLite) or not (TinkerGraph, HugeGraph).
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager, nullcontext, suppress
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from graphctx.durability import DeferredFlush
from graphctx.errors import (
    BackendError,
    GraphctxError,
    InputError,
    InvalidVector,
    NotFound,
    ScopeError,
    WriteIncomplete,
)
from graphctx.indexing import embedding_text, lexical_doc
from graphctx.kernel.ports import (
    LexicalIndex,
    OffloadsWrites,
    PendingWrite,
    QueuedWrites,
    RebuildingIndex,
    VectorRecord,
)
from graphctx.kernel.reads import batches, stored_hashes
from graphctx.kernel.stores import Stores
from graphctx.kernel.templates import (
    ENTITY_DELETE,
    ENTITY_GET,
    ENTITY_UPSERT,
    FACT_INVALIDATE,
    FACT_UPSERT,
    EntityDeleteParams,
    EntityGetParams,
    EntityUpsertParams,
    FactInvalidateParams,
    FactUpsertParams,
    own_derived_ids,
)
from graphctx.model import Entity, Fact
from graphctx.scope import Scope
from graphctx.vectors import checked_vector, checked_vectors

BATCH = 500
VECTOR_BATCH = 5000  # entities embedded and appended to the vector index per call
TEMPLATE_BATCH = 5000  # entity.upsert / fact.upsert take at most this many per call
IDS_BATCH = 1000  # entity.delete / fact.invalidate / entity.get_by_ids
_DETERMINISTIC = (InputError, NotFound, ScopeError)
"""Errors a backend raises before writing anything, the same however often the plan is applied."""

log = logging.getLogger(__name__)
_COUNTS = ("created", "updated", "unchanged")


class WritePlan(BaseModel):
    """One atomic unit of writing, resolved against the store: final versions to upsert, stored
    facts to end (id -> valid_to), entities to delete. Applied in that order."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    entities: tuple[Entity, ...] = ()
    facts: tuple[Fact, ...] = ()
    ends: dict[str, datetime] = {}
    delete_ids: tuple[str, ...] = ()

    # fact.upsert's id rule, checked when the plan is made: a plan it refuses is never journaled
    _check_ids = field_validator("facts")(own_derived_ids)

    def index_ids(self) -> list[str]:
        return list(dict.fromkeys([*(e.id for e in self.entities), *self.delete_ids]))

    def __len__(self) -> int:
        return len(self.entities) + len(self.facts) + len(self.ends) + len(self.delete_ids)


@dataclass
class ApplyReport:
    entities: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_COUNTS, 0))
    facts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_COUNTS, 0))
    ended: int = 0
    deleted: int = 0
    facts_removed: int = 0


class _Counting:
    """The graph store, counting the template calls that returned (that may have written)."""

    def __init__(self, graph: Any) -> None:
        self.graph = graph
        self.done = 0

    def run(self, template: Any, scope: Scope, params: Any) -> Any:
        result = self.graph.run(template, scope, params)
        self.done += 1
        return result


def apply_plan(stores: Stores, scope: Scope, plan: WritePlan, graph: Any = None) -> ApplyReport:
    """Run the plan's templates in order; idempotent, so a second run after a partial one completes it."""
    graph = graph or stores.graph
    report = ApplyReport()
    for chunk in batches(plan.entities, TEMPLATE_BATCH):
        result = graph.run(ENTITY_UPSERT, scope, EntityUpsertParams(entities=tuple(chunk)))
        _count(report.entities, result)
    for facts in batches(plan.facts, TEMPLATE_BATCH):
        _count(report.facts, graph.run(FACT_UPSERT, scope, FactUpsertParams(facts=tuple(facts))))
    by_end: dict[datetime, list[str]] = {}
    for fact_id, end in plan.ends.items():
        by_end.setdefault(end, []).append(fact_id)
    for end, fact_ids in sorted(by_end.items()):
        for ids in batches(sorted(fact_ids), IDS_BATCH):
            params = FactInvalidateParams(ids=tuple(ids), valid_to=end)
            report.ended += graph.run(FACT_INVALIDATE, scope, params).count
    for ids in batches(plan.delete_ids, IDS_BATCH):
        deleted = graph.run(ENTITY_DELETE, scope, EntityDeleteParams(ids=tuple(ids)))
        report.deleted += deleted.deleted
        report.facts_removed += deleted.facts_removed
    return report


def _count(totals: dict[str, int], result: Any) -> None:
    for key in _COUNTS:
        totals[key] += getattr(result, key)


def merged(plans: Sequence[WritePlan]) -> WritePlan:
    """Independent plans as one (what a group commit journals): an end given twice keeps the earlier."""
    ends: dict[str, datetime] = {}
    for plan in plans:
        for fact_id, end in plan.ends.items():
            ends[fact_id] = min(end, ends.get(fact_id, end))
    return WritePlan(
        entities=tuple(e for p in plans for e in p.entities),
        facts=tuple(f for p in plans for f in p.facts),
        ends=ends,
        delete_ids=tuple(dict.fromkeys(i for p in plans for i in p.delete_ids)),
    )


def _failed(outcome: object) -> bool:
    return isinstance(outcome, GraphctxError)


def _rejournal(journal: Any, scope: Scope, seq: int, kept: Sequence[WritePlan]) -> int:
    """Replace a group's journal entry by one without a refused plan (recording the new one first)."""
    new = journal.record_write(scope, merged(kept).model_dump_json())
    journal.complete_write(seq)
    return int(new)


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
class PipelineReport:
    """What a `pipelined` run's queued index writes left to report, known once they are done."""

    errors: list[str] = field(default_factory=list)
    vector_skipped: list[str] = field(default_factory=list)


class _VectorWrites:
    """Vector work in the order it comes, on one background thread (in line for a sync of one graph
    read): each graph read's entities embedded and appended to the vector index, at least every
    VECTOR_BATCH entities, deletes in line with them, so the caller's graph reads and lexical writes
    go on meanwhile. A sync waits for its own at its end; a `pipelined` run has one for the whole
    run and waits at the run's end, so its graph writes never wait for the embedder. What the index
    holds does not depend on the batching. After a failure nothing later is written and the
    failure is raised, as it was, by the next call and by `wait`. Nothing runs without an embedder
    and a vector index."""

    AHEAD = 50_000
    """Entities submitted and not yet embedded before `add` waits (the caller holds them anyway)."""

    def __init__(self, sync: IndexSync, *, background: bool) -> None:
        self.sync = sync
        self.enabled = sync.stores.embedder is not None and sync.stores.vector is not None
        self.pool = ThreadPoolExecutor(1, thread_name_prefix="graphctx-embed") if background else None
        self.tasks: deque[tuple[Future[None], int]] = deque()
        self.ahead = 0  # entities in `tasks`
        self.error: Exception | None = None
        # touched by the one thread that runs the work: embedded and not yet appended, and refused
        self.rows: tuple[Scope, dict[str, VectorRecord]] | None = None
        self.skipped: list[str] = []

    def add(self, scope: Scope, entities: list[Entity]) -> None:
        if self.enabled:
            self._submit(lambda: self._embed(scope, entities), len(entities))

    def delete(self, scope: Scope, ids: list[str]) -> None:
        if self.sync.stores.vector is not None:
            self._submit(lambda: self._delete(scope, ids), 0)

    def wait(self) -> list[str]:
        """Everything submitted written; the ids whose vector was refused since the last wait."""
        self._submit(self._append, 0)
        while self.tasks:
            self.tasks.popleft()[0].result()
        if self.error is not None:
            raise self.error
        skipped, self.skipped = self.skipped, []
        return skipped

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)

    def _submit(self, call: Callable[[], None], entities: int) -> None:
        while self.tasks and (self.ahead > self.AHEAD or self.tasks[0][0].done()):
            future, entities_done = self.tasks.popleft()
            future.result()
            self.ahead -= entities_done
        if self.error is not None:
            raise self.error
        if self.pool is None:
            self._guarded(call)
            if self.error is not None:
                raise self.error
            return
        self.tasks.append((self.pool.submit(self._guarded, call), entities))
        self.ahead += entities

    def _guarded(self, call: Callable[[], None]) -> None:
        if self.error is None:  # an earlier call failed: nothing after it is written
            try:
                call()
            except Exception as exc:
                self.error = exc

    def _embed(self, scope: Scope, entities: list[Entity]) -> None:
        records, refused = self.sync._vector_rows(entities)
        if self.rows is not None and self.rows[0] != scope:
            self._append()  # in order: another scope's rows first
        if self.rows is None:
            self.rows = (scope, {})
        self.rows[1].update((r.entity_id, r) for r in records)
        if refused or len(self.rows[1]) >= VECTOR_BATCH:
            self._append()
        if refused:  # rare: their old vectors go, after the rows embedded before them
            assert self.sync.stores.vector is not None
            self.sync.stores.vector.delete(scope, refused)
            self.skipped += refused

    def _delete(self, scope: Scope, ids: list[str]) -> None:
        self._append()  # in order: an id embedded in an earlier read, gone in this one
        assert self.sync.stores.vector is not None
        self.sync.stores.vector.delete(scope, ids)

    def _append(self) -> None:
        if self.rows is not None:
            (scope, rows), self.rows = self.rows, None
            vector = self.sync.stores.vector
            if vector is not None and rows:
                vector.upsert(scope, list(rows.values()))


class _LexicalWrites:
    """Lexical writes in the order they come: made in line; or, for `pipelined`, sent ahead to the
    index's own writer process (`queued`, OffloadsWrites) or made on one background thread, so the
    caller goes on with its next graph work while the index writes and commits (tantivy's commit
    waits outside the GIL). There, a scope's upserts are gathered into calls of up to GATHER
    documents, sent before any delete and before another scope's writes, so the index ends as
    writing in line leaves it. After a failure nothing queued is written and every later call
    raises it."""

    IN_FLIGHT = 2  # calls queued to the thread and not done: about two graph reads' documents in memory
    SENT_AHEAD = 8
    """Calls sent to the index's own writer process and not answered: it reads each as it comes
    (at most GATHER documents each, held there), so the graph writes go on while it indexes."""
    GATHER = 5_000
    """In the background, upserts of one scope are sent as one call (one commit) of up to this many
    documents: nothing waits for each one's commit (a run's journal entries complete at its end),
    and with no document replaced during the run the BM25 statistics do not depend on the commits."""

    def __init__(
        self, lexical: LexicalIndex, *, background: bool = False, queued: QueuedWrites | None = None
    ) -> None:
        self.lexical, self.queued = lexical, queued
        self.pool = None
        if background and queued is None:
            self.pool = ThreadPoolExecutor(1, thread_name_prefix="graphctx-lexical")
        self.inline = queued is None and self.pool is None
        self.limit = self.IN_FLIGHT if queued is None else self.SENT_AHEAD  # calls not yet done
        self.tasks: deque[Future[None]] = deque()
        self.error: GraphctxError | None = None
        self.gathered: tuple[Scope, list[Entity]] | None = None

    def upsert(self, scope: Scope, entities: list[Entity]) -> None:
        if self.inline:
            self._send(scope, entities)
            return
        if self.gathered is not None and self.gathered[0] != scope:
            self._flush()
        if self.gathered is None:
            self.gathered = (scope, [])
        self.gathered[1].extend(entities)
        if len(self.gathered[1]) >= self.GATHER:
            self._flush()

    def delete(self, scope: Scope, ids: list[str]) -> None:
        self._flush()  # in order: an id upserted in a gathered call, deleted in this one
        target = self.queued or self.lexical
        self._run(lambda: target.delete(scope, ids))

    def send_gathered(self) -> None:
        """A failure is kept for the calls after it and for `wait`, which report it."""
        with suppress(GraphctxError):
            self._flush()

    def _flush(self) -> None:
        if self.gathered is not None:
            (scope, entities), self.gathered = self.gathered, None
            self._send(scope, entities)

    def _send(self, scope: Scope, entities: list[Entity]) -> None:
        target = self.queued or self.lexical
        self._run(lambda: target.upsert(scope, [lexical_doc(e) for e in entities]))

    def _run(self, call: Callable[[], None]) -> None:
        if self.inline:
            call()
            return
        while self._in_flight() >= self.limit:
            self._done_one()
        if self.error is not None:
            raise self.error
        if self.queued is not None:
            self._guarded(call)  # sends it
        else:
            assert self.pool is not None
            self.tasks.append(self.pool.submit(self._guarded, call))

    def _in_flight(self) -> int:
        return self.queued.pending() if self.queued is not None else len(self.tasks)

    def _done_one(self) -> None:
        if self.queued is not None:
            self._caught(self.queued.done)  # always takes one answer, so a wait for room ends
        else:
            self.tasks.popleft().result()

    def _guarded(self, call: Callable[[], None]) -> None:
        if self.error is None:  # an earlier call failed: nothing after it is written
            self._caught(call)

    def _caught(self, call: Callable[[], None]) -> None:
        try:
            call()
        except GraphctxError as exc:
            self.error = self.error or exc
        except Exception:
            error = BackendError("the lexical index write failed unexpectedly (see the log)")
            self.error = self.error or error
            log.exception("lexical index write failed")

    def wait(self) -> None:
        """Every call done; a failure raised."""
        if self.error is None:
            self._flush()
        while self._in_flight() and self.error is None:
            self._done_one()
        if self.error is not None:
            raise self.error

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)


def _checked_or_none(row: Any, dimension: int) -> list[float] | None:
    try:
        return list(checked_vector(row, dimension).tolist())
    except InvalidVector:
        return None


def _where(exc: GraphctxError) -> dict[str, Any]:
    """The store and backend a failure names, carried onto the error that wraps it."""
    return {k: exc.details[k] for k in ("store", "backend") if k in exc.details}


def _index_failed(exc: GraphctxError) -> SyncReport:
    """The report of an index update that failed after the graph committed: the caller is told what
    failed (never the backend's paths or driver text, which go to the log)."""
    log.warning("index update failed (completed later from the journal): %s", exc.message)
    return SyncReport(index_error=exc.to_dict()["message"])


@dataclass
class ReconcileReport:
    writes_completed: int = 0
    writes_abandoned: list[str] = field(default_factory=list)
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
        self.deferred: DeferredFlush | None = None
        """Set when the indexes defer durability: a write's journal entry is completed by its
        background flush, not when the write returns (core/durability.py)."""
        self._pipe: _LexicalWrites | None = None  # inside `pipelined`
        self._vectors: _VectorWrites | None = None  # inside `pipelined`
        self._held: list[Sequence[int]] = []  # journal entries completed when the pipe drains
        self._indexed: dict[tuple[Scope, str], str] | None = None
        """Inside `pipelined`: the content hash each entity was last given to both indexes with."""

    def _done(self, seq: int) -> None:
        if self.deferred is not None:
            self.deferred.hold(seq)
        else:
            self.stores.journal.complete_write(seq)

    def commit(self, scope: Scope, plan: WritePlan) -> tuple[ApplyReport, SyncReport]:
        """Journal the plan, apply it to the graph, sync the indexes, complete the journal entry.

        A backend that fails before writing anything for a reason that would recur (bad input, a
        missing endpoint) drops the plan and re-raises: nothing was written. Any other failure
        leaves the plan journaled and raises `WriteIncomplete`: the graph may hold part of it, and
        the next write (or open, or reconcile) completes it."""
        seq = self.stores.journal.record_write(scope, plan.model_dump_json())
        graph = _Counting(self.stores.graph)
        try:
            applied = apply_plan(self.stores, scope, plan, graph)
        except GraphctxError as exc:
            if isinstance(exc, _DETERMINISTIC) and graph.done == 0:  # refused before any write
                self.stores.journal.complete_write(seq)
                raise
            raise WriteIncomplete(
                f"the graph failed during the write ({exc.message}); the write is recorded and may be "
                "partly applied: graphctx completes it before the next write, at the next start, or "
                "now with `graphctx reconcile`",
                cause=exc.code,
                recorded=True,
                **_where(exc),
            ) from exc
        try:
            synced = self.sync(scope, plan.index_ids(), durable=self.deferred is None)
        except GraphctxError as exc:
            return applied, _index_failed(exc)  # stays journaled: completed later
        self._done(seq)
        return applied, synced

    def commit_group(
        self, scope: Scope, plans: Sequence[WritePlan]
    ) -> tuple[list[ApplyReport | GraphctxError], SyncReport]:
        """Several callers' plans (independent of one another) as one journaled write and one index
        commit; each plan is applied to the graph on its own, so each caller gets its own counts
        and its own verdict: a plan the graph refuses before writing anything is that caller's
        error alone (the journal entry is rewritten without it). A graph failure part way stops the
        batch: the callers not yet applied get `WriteIncomplete` (recorded, completed later), the
        ones applied get their report with the index update left to the journal."""
        if len(plans) == 1:
            try:
                applied, synced = self.commit(scope, plans[0])
            except GraphctxError as exc:
                return [exc], SyncReport()
            return [applied], synced
        journal = self.stores.journal
        seq = journal.record_write(scope, merged(plans).model_dump_json())
        outcomes: list[ApplyReport | GraphctxError] = []
        for i, plan in enumerate(plans):
            graph = _Counting(self.stores.graph)
            try:
                outcomes.append(apply_plan(self.stores, scope, plan, graph))
            except GraphctxError as exc:
                if isinstance(exc, _DETERMINISTIC) and graph.done == 0:  # refused before any write
                    outcomes.append(exc)
                    later = [*outcomes, *plans[i + 1 :]]
                    kept = [p for p, o in zip(plans, later, strict=True) if not _failed(o)]
                    seq = _rejournal(journal, scope, seq, kept)
                    continue
                incomplete = WriteIncomplete(
                    f"the graph failed during the write ({exc.message}); the write is recorded and may "
                    "be partly applied: graphctx completes it before the next write, at the next start, "
                    "or now with `graphctx reconcile`",
                    cause=exc.code,
                    recorded=True,
                    **_where(exc),
                )
                outcomes += [incomplete] * (len(plans) - i)
                return outcomes, SyncReport(
                    index_error="the graph failed before the indexes were updated; they are completed "
                    "from the journal before the next write"
                )
        kept = [p for p, o in zip(plans, outcomes, strict=True) if not _failed(o)]
        if not kept:
            journal.complete_write(seq)
            return outcomes, SyncReport()
        try:
            ids = list(dict.fromkeys(i for p in kept for i in p.index_ids()))
            synced = self.sync(scope, ids, durable=self.deferred is None)
        except GraphctxError as exc:
            return outcomes, _index_failed(exc)  # stays journaled: completed later
        self._done(seq)
        return outcomes, synced

    def recover(self, report: ReconcileReport | None = None) -> ReconcileReport:
        """Complete every journaled write (re-apply its plan, re-index its entities), then replay
        the index journal. Run at every open for writing and before every write."""
        report = report or ReconcileReport()
        # entries this process applied and is still flushing are not replayed (the write lock,
        # held here, keeps that set from growing)
        held = self.deferred.held() if self.deferred is not None else frozenset()
        while pending := [
            e for e in self.stores.journal.pending_writes(BATCH + len(held)) if e.seq not in held
        ]:
            for entry in pending:
                plan = self._readable(entry, report)
                if plan is None:
                    continue
                try:
                    apply_plan(self.stores, entry.scope, plan)
                except _DETERMINISTIC as exc:  # the store changed under it (another writer): give up
                    self._abandon(entry, report, exc.message)
                    continue
                except GraphctxError as exc:
                    raise WriteIncomplete(
                        f"an earlier write is still incomplete and the graph is not taking it "
                        f"({exc.message}); nothing else is written until it is",
                        cause=exc.code,
                        recorded=False,
                        **_where(exc),
                    ) from exc
                self.sync(entry.scope, plan.index_ids())
                self.stores.journal.complete_write(entry.seq)
                report.writes_completed += 1
        self.replay_journal(report)
        return report

    def _readable(self, entry: PendingWrite, report: ReconcileReport) -> WritePlan | None:
        """The journaled plan, or None when this version cannot read it (written by another version,
        or damaged): then it is abandoned, not left to refuse every later write and open, and the
        plan goes to the log."""
        try:
            return WritePlan.model_validate_json(entry.plan)
        except ValidationError as exc:
            first = exc.errors(include_url=False, include_input=False)[0]
            where = ".".join(str(part) for part in first["loc"]) or "the plan"
            why = f"{exc.error_count()} error(s), first at {where}: {first['msg']}"
        except InputError as exc:  # a rule the plan's own validators raise typed (fact ids)
            why = exc.message
        log.warning("journaled write %s: plan not readable by this version; plan: %s", entry.seq, entry.plan)
        self._abandon(entry, report, f"its journaled plan is not readable by this version ({why})")
        return None

    def _abandon(self, entry: PendingWrite, report: ReconcileReport, why: str) -> None:
        """Give up a journaled write that can never complete. The graph may hold it whole (it was
        acknowledged before its index flush) or in part (an interrupted try), so the scope's indexes
        are reconciled with the graph first: what the graph holds stays searchable."""
        log.warning("journaled write %s abandoned: %s", entry.seq, why)
        self.reconcile_scope(entry.scope, report, None)
        self.stores.journal.complete_write(entry.seq)
        report.writes_abandoned.append(
            f"write {entry.seq}: {why}; what of it reached the graph is kept and indexed"
        )

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
        pipe = self._pipe
        lexical = pipe or _LexicalWrites(self.stores.lexical, background=False)
        try:
            report = self._sync(scope, ids, True, lexical)
        except GraphctxError as exc:
            return _index_failed(exc)
        if pipe is not None:
            self._held.append(seqs)  # completed once the queued lexical writes are done
        else:
            self.stores.journal.complete(seqs)
        return report

    def sync(self, scope: Scope, ids: Sequence[str], *, durable: bool = True) -> SyncReport:
        """Make both indexes hold exactly what the graph holds for these ids (idempotent); durably
        unless `durable` is False (then searchable here, flushed by `deferred`)."""
        return self._sync(scope, ids, durable, _LexicalWrites(self.stores.lexical, background=False))

    def _sync(self, scope: Scope, ids: Sequence[str], durable: bool, lexical: _LexicalWrites) -> SyncReport:
        """The graph is read BATCH ids at a time and the lexical index written (one commit) per read,
        or, in a `pipelined` run, gathered into fewer calls; there an entity the indexes already got
        with the same content hash earlier in the run is not given to them again (tantivy's BM25
        statistics count a replaced document until a merge drops it). Each read's entities are
        embedded and appended to the vector index in order on a background thread while the next
        lexical write runs (the embedders' tokenizers and numpy release the GIL); a sync waits for
        its vectors at its end, a `pipelined` run at the run's end."""
        report = SyncReport()
        piped = self._vectors
        vectors = piped or _VectorWrites(self, background=len(ids) > BATCH)
        indexed = self._indexed
        try:
            for batch in batches(ids, BATCH):
                chunk = list(dict.fromkeys(batch))
                found = self.stores.graph.run(ENTITY_GET, scope, EntityGetParams(ids=tuple(chunk))).entities
                present = [
                    e for e in found if scope.contains(e.tenant_id or "", e.namespace or "", e.graph_id or "")
                ]
                gone = sorted(set(chunk) - {e.id for e in present})
                fresh = present
                if indexed is not None:  # written again with nothing the indexes hold changed: skipped
                    fresh = [e for e in present if indexed.get((scope, e.id)) != e.content_hash]
                    indexed.update(((scope, e.id), e.content_hash) for e in fresh)
                    for i in gone:
                        indexed.pop((scope, i), None)
                if fresh:
                    vectors.add(scope, fresh)
                    lexical.upsert(scope, fresh)
                if gone:
                    lexical.delete(scope, gone)
                    vectors.delete(scope, gone)
                report.indexed += len(present)
                report.removed += len(gone)
            if piped is None:
                report.vector_skipped += vectors.wait()
        finally:
            if piped is None:
                vectors.close()
        if durable and lexical is not self._pipe:
            self.flush()
        return report

    def send_gathered(self) -> None:
        """In a `pipelined` run, send the lexical upserts gathered so far now: the caller turns to
        other work (the indexer to its edges), so the index builds them meanwhile, not at the end."""
        if self._pipe is not None:
            self._pipe.send_gathered()

    @contextmanager
    def pipelined(self, *, offload: bool = True) -> Iterator[PipelineReport]:
        """For a long run of entity writes (the code indexer): each call's lexical writes are queued
        to a background thread (and made by the index's own process when it offers one,
        OffloadsWrites, and `offload`: starting that process costs a fresh interpreter) and its
        vectors to another, while the caller's next graph work runs. A call's journal entries
        complete when every queued write is done and durable, at the end; an index failure is
        raised by the calls after it (each reports it) and put in the yielded report's errors at
        the end, and the entries stay journaled (completed at the next open or write)."""
        lexical = self.stores.lexical
        elsewhere = (
            lexical.writer_process() if offload and isinstance(lexical, OffloadsWrites) else nullcontext(None)
        )
        with elsewhere as queued:
            pipe = _LexicalWrites(lexical, background=True, queued=queued)
            vectors = _VectorWrites(self, background=True)
            self._pipe, self._vectors, self._held, self._indexed = pipe, vectors, [], {}
            try:
                outcome = PipelineReport()
                yield outcome
                try:
                    pipe.wait()
                except GraphctxError as exc:
                    outcome.errors.append(_index_failed(exc).index_error or exc.message)
                try:
                    outcome.vector_skipped = vectors.wait()
                except GraphctxError as exc:
                    outcome.errors.append(_index_failed(exc).index_error or exc.message)
                if not outcome.errors:
                    if self.stores.vector is not None:
                        self.stores.vector.flush()
                    for seqs in self._held:
                        self.stores.journal.complete(seqs)
            finally:
                self._pipe, self._vectors, self._held, self._indexed = None, None, [], None
                vectors.close()
                pipe.close()

    def _vector_rows(self, entities: Sequence[Entity]) -> tuple[list[VectorRecord], list[str]]:
        """The entities' records for the vector index, and the ids whose vector is refused."""
        embedder = self.stores.embedder
        assert embedder is not None
        matrix = embedder.embed([embedding_text(e) for e in entities])
        checked = checked_vectors(matrix, embedder.dimension) if len(matrix) == len(entities) else None
        if checked is None:  # not an (n, dimension) matrix: each row refused on its own, as always
            rows = [_checked_or_none(row, embedder.dimension) for row in matrix]
        else:
            values, ok = checked
            rows = [v if good else None for v, good in zip(values.tolist(), ok.tolist(), strict=True)]
        records, skipped = [], []
        for entity, row in zip(entities, rows, strict=True):
            if row is None:
                skipped.append(entity.id)  # lexical and exact legs still find it
                continue
            # checked here: a tuple of floats, as the field declares, without validating 256 floats again
            records.append(
                VectorRecord.model_construct(
                    entity_id=entity.id, content_hash=entity.content_hash, vector=tuple(row)
                )
            )
        return records, skipped

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
