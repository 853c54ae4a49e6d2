"""ContextService: the one facade every transport (Python, CLI, HTTP, MCP) is a thin layer over."""

from __future__ import annotations

import contextvars
import functools
import itertools
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from pydantic import ValidationError

from graphctx import bounds, deadlines, registry, timeline
from graphctx.clock import Clock, iso, utc_now
from graphctx.code.ops import DEFAULT_LIMIT, CodeOps
from graphctx.code.report import IndexReport
from graphctx.code.repos import list_repositories
from graphctx.datadir import Mode, exposed, process_usage, writer_pid
from graphctx.durability import DeferredFlush
from graphctx.envelope import Budget, Option, open_envelope
from graphctx.errors import BackendUnavailable, GraphctxError, ReadOnly, WriteIncomplete, from_validation
from graphctx.followups import call
from graphctx.gate import FairGate
from graphctx.group import GroupCommit
from graphctx.kernel.ports import DefersDurability, ReportsCaches
from graphctx.kernel.reads import batches, facts_of
from graphctx.kernel.rules import endpoints
from graphctx.kernel.stores import Stores, open_stores
from graphctx.kernel.templates import (
    CATALOG_VERSION,
    ENTITY_GET,
    FACTS_FROM_ROOTS,
    NEIGHBOURHOOD,
    SCOPE_STATS,
    SHORTEST_PATH,
    EntityGetParams,
    FactsFromRootsParams,
    NeighbourhoodParams,
    NoParams,
    ShortestPathParams,
)
from graphctx.model import Entity, Fact
from graphctx.names import resolve
from graphctx.records import Located, check_endpoints, jsonl_records, validate
from graphctx.retrieval.ends import name_ends
from graphctx.retrieval.isolation import Isolation
from graphctx.retrieval.pipeline import Retriever, Stopwatch
from graphctx.retrieval.render import entity_card, fact_line, facts_about
from graphctx.retrieval.runner import LegRunner
from graphctx.scope import Scope
from graphctx.settings import Settings
from graphctx.writes import IDS_BATCH, ApplyReport, IndexSync, ReconcileReport, SyncReport, WritePlan

if TYPE_CHECKING:  # the code indexer (parsers, tree-sitter, pathspec) is imported by the writes using it
    from graphctx.code.indexer import IndexProgress

DEFAULT_EXPLAIN_TOKENS = 4_000
LOAD_BATCH = 2_000
"""Records per all-or-nothing batch of a bulk load: where Ctrl-C stops it."""
Progress = Callable[[int], None]
log = logging.getLogger(__name__)
F = TypeVar("F", bound=Callable[..., Any])


def _bounded(method: F, *, write: bool = False) -> F:
    """An operation: it runs under the deadline (`settings.deadline_s`, or `write_deadline_s` for a
    write) that bounds every backend call, lock and pool wait made for it (`graphctx.deadlines`)."""

    @functools.wraps(method)
    def run(self: ContextService, *args: Any, **kwargs: Any) -> Any:
        token = next(self._tokens)
        seconds = self.settings.write_deadline_s if write else self.settings.deadline_s
        self._running[token] = (method.__name__, time.monotonic(), seconds)
        gate = None if write or _in_read.get() else self._read_gate
        try:
            with deadlines.within(seconds):
                if gate is None:
                    return method(self, *args, **kwargs)
                deadlines.acquire(gate, "a read slot (settings.read_concurrency)")
                entered = _in_read.set(True)
                try:
                    return method(self, *args, **kwargs)
                finally:
                    _in_read.reset(entered)
                    gate.release()
        finally:
            self._running.pop(token, None)

    return cast(F, run)


def resolve_read_slots(settings: Settings, stores: Stores) -> int:
    """Reads one process runs at once (0: no limit): `settings.read_concurrency`, or when unset 1 if
    every store computes in this process, else no limit. Measured with `serve --workers 2` on the demo
    memory (8 keep-alive clients, 2 cores): 1 slot 573 req/s at 3.3 ms of server CPU a request, no
    limit 493 at 3.7 (one worker alone: 256 vs 167 req/s, 4.2 vs 7.4 ms); docs/operations.md."""
    if settings.read_concurrency is not None:
        return settings.read_concurrency
    return 1 if stores.in_process else 0


_in_read: contextvars.ContextVar[bool] = contextvars.ContextVar("graphctx_in_read", default=False)
"""Inside a read that holds a slot of the read gate: an operation it calls does not take another."""


def _bounded_write(method: F) -> F:
    return _bounded(method, write=True)


def _units(
    ents: list[Located[Entity]], fs: list[Located[Fact]], unit: int | None
) -> Iterator[tuple[Sequence[Located[Entity]], Sequence[Located[Fact]]]]:
    """The whole call as one unit, or entities then facts in runs of `unit` records."""
    if unit is None:
        yield ents, fs
        return
    for chunk in batches(ents, unit):
        yield chunk, ()
    for facts in batches(fs, unit):
        yield (), facts


class ContextService:
    def __init__(
        self,
        stores: Stores,
        settings: Settings | None = None,
        clock: Clock | None = None,
        *,
        owns_stores: bool = True,
    ) -> None:
        """`owns_stores=False`: the stores belong to someone else (a second service over them, a
        test double wrapping them): `close()` stops this service's threads and leaves them open."""
        self.stores = stores
        self.owns_stores = owns_stores
        self.settings = settings or Settings()
        self.clock = clock or utc_now
        self._executor = LegRunner()
        slots = resolve_read_slots(self.settings, stores)
        self.read_slots = slots
        """Reads this service runs at once (0: no limit); see `resolve_read_slots`."""
        self._read_gate: FairGate | None = FairGate(slots) if slots > 0 else None
        self._running: dict[int, tuple[str, float, float]] = {}
        """Operations in flight: (name, started); what `stuck_operations` reads."""
        self._tokens = itertools.count()
        self.retriever = Retriever(
            stores, self._executor, self.clock, self.settings.deadline_s, self.settings.dense_deadline_s
        )
        if self.settings.token_counter:
            self.retriever.counter = registry.factory("token_counter", self.settings.token_counter)(
                self.settings
            )
        self.sync = IndexSync(stores)
        # one writer at a time keeps journal, graph and index order consistent; reads run concurrently
        # (each adapter is thread-safe on its own)
        self._writes = threading.Lock()
        self._group: GroupCommit[_Write, _Written] = GroupCommit(
            self._commit_writes,
            self._writes,
            wait_s=self.settings.group_commit_wait_ms / 1000,
            max_items=self.settings.group_commit_max,
        )
        self.code = CodeOps(self.stores, self.retriever, self.clock)
        if stores.mode == "write":
            self._defer_durability()
            try:
                self.sync.refill_rebuilt()
            except BaseException:
                self._stop_threads()  # no one gets this service to close
                raise
        self.recovered: dict[str, Any] = {}
        """What the open for writing completed (journaled writes, index work)."""

    @classmethod
    def open(
        cls, settings: Settings | None = None, clock: Clock | None = None, mode: Mode = "write"
    ) -> ContextService:
        """Open the stores to read or to write (`graphctx.kernel.stores.open_stores`). A writer
        first completes what a crash or an interruption left (journaled writes, index work); if
        the backend cannot take it now, the next write tries again and says so."""
        settings = settings or Settings()
        service = cls(open_stores(settings, mode), settings, clock)
        if service.stores.mode == "write":
            try:
                service.recovered = service.sync.recover().as_dict()
            except WriteIncomplete as exc:
                log.warning("%s", exc.message)
            except BaseException:
                service.close()
                raise
        return service

    def stuck_operations(self) -> list[dict[str, Any]]:
        """Operations running for longer than twice their deadline plus a second: every wait they
        make is bounded by the deadline, so one still running then has escaped it (a wedged backend
        call, a bug). `/healthz` reports the process unhealthy while there are any."""
        now = time.monotonic()
        running = list(self._running.values())
        return [
            {"operation": name, "running_s": round(now - started, 1)}
            for name, started, seconds in running
            if now - started > 2 * seconds + 1.0
        ]

    @contextmanager
    def _write_lock(self) -> Iterator[None]:
        """The one writer's lock, waited for within the operation's deadline (forever outside one)."""
        deadlines.acquire(self._writes, "the write lock (another write is running)")
        try:
            yield
        finally:
            self._writes.release()

    def _defer_durability(self) -> None:
        """Writes acknowledged before the indexes' disk commits (settings.index_flush_ms), when every
        index can defer them (core/durability.py)."""
        indexes = [i for i in (self.stores.lexical, self.stores.vector) if i is not None]
        if self.settings.index_flush_ms <= 0 or not all(isinstance(i, DefersDurability) for i in indexes):
            return
        if any([i.defer_durability() for i in indexes if isinstance(i, DefersDurability)]):
            journal = self.stores.journal

            def complete(seqs: Sequence[int]) -> None:
                for seq in seqs:
                    journal.complete_write(seq)

            self.sync.deferred = DeferredFlush(self.sync.flush, complete, self.settings.index_flush_ms / 1000)

    def flush(self) -> None:
        """Make every acknowledged write durable in the indexes now and complete its journal entry
        (otherwise done in the background within settings.index_flush_ms)."""
        if self.sync.deferred is not None and not self.sync.deferred.flush_now():
            raise BackendUnavailable("the index flush failed; the writes stay journaled (see the log)")

    def close(self) -> None:
        """Stop this service's threads and close every store it owns; in-flight reads are
        abandoned. Also `with ContextService.open(...)`."""
        try:
            self._stop_threads()
        finally:
            if self.owns_stores:
                self.stores.close()

    def _stop_threads(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
        if self.sync.deferred is not None:
            self.sync.deferred.close()  # the last acknowledged writes made durable, entries completed

    def __enter__(self) -> ContextService:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reads --------------------------------------------------------------------------------

    @_bounded
    def recall(
        self,
        scope: Scope,
        query: str,
        *,
        max_tokens: int | None = None,
        depth: int = 1,
        include_ids: bool = False,
        as_of: datetime | None = None,
    ) -> dict[str, Any]:
        """What is valid at `as_of` (default now)."""
        return self.retriever.recall(
            scope, query, max_tokens=max_tokens, depth=depth, include_ids=include_ids, as_of=as_of
        )

    @_bounded
    def explain(
        self,
        scope: Scope,
        name: str,
        *,
        max_tokens: int | None = None,
        include_history: bool = True,
        include_ids: bool = False,
        as_of: datetime | None = None,
    ) -> dict[str, Any]:
        """One entity and its facts: what is valid at `as_of` (default now) first, then future facts,
        then its history; each line has its `status` and an ended fact of a single-valued predicate
        names the fact that `superseded_by` it."""
        watch = Stopwatch()
        when = as_of or self.clock()
        entity = resolve(self.stores.graph, scope, name)
        params = FactsFromRootsParams(roots=(entity.id,), include_invalid=include_history, as_of=when)
        result = self.stores.graph.run(FACTS_FROM_ROOTS, scope, params)
        isolation = Isolation(scope)
        facts = [f for f in result.facts if isolation.admit_fact(f)]
        names = name_ends(self.stores.graph, scope, isolation, {entity.id: entity.display_name()}, facts)
        # a fact whose far end is not an entity of the scope says nothing the caller may see
        facts = [f for f in facts if all(i is None or i in names for i in (f.subject_id, f.object_id))]
        successors = timeline.successors(facts, self.settings.single_valued_predicates)
        lines = []
        for fact in facts_about(entity.id, facts):
            line = fact_line(fact, entity.id, names, include_ids=include_ids)
            line["status"] = fact.status_at(when)
            line["current"] = line["status"] == "current"
            nxt = successors.get(fact.id)
            if nxt is not None and line["status"] == "ended":
                end, value = timeline.replacing_end(nxt, self.settings.single_valued_predicates)
                line["superseded_by"] = names.get(end or "", value or end)
                if include_ids:
                    line["superseded_by_id"] = nxt.id
            lines.append(line)
        rank = {"current": 0, "future": 1, "ended": 2}
        lines.sort(key=lambda ln: rank[ln["status"]])  # stable: the reading order within each
        envelope, budget = self._envelope(
            "explain", scope, max_tokens, DEFAULT_EXPLAIN_TOKENS, isolation, as_of=when
        )
        envelope["subject"] = entity_card(entity, include_ids=include_ids)
        budget.require_fit(f"the subject {entity.display_name()!r}")
        if result.truncated:
            budget.note({"what": "facts", "reason": "limit", "limit": bounds.MAX_FACTS})
        budget.place("facts", [(ln.get("predicate", ""), [Option(ln)]) for ln in lines])
        envelope["isolation"] = {"rejected": isolation.rejected}
        return budget.finish(watch.total())

    @_bounded
    def neighbourhood(
        self,
        scope: Scope,
        name: str,
        *,
        depth: int = 1,
        edge_types: Sequence[str] = (),
        direction: str = "both",
        limit: int = 50,
        max_tokens: int | None = None,
        include_ids: bool = False,
    ) -> dict[str, Any]:
        """The entities around `name` (an id, name or alias), 1 or 2 hops, as facts grouped by predicate;
        `edge_types` and `direction` ("in", "out", "both") filter the walk and `limit` bounds each direction.
        Raises NotFound / AmbiguousName for the root."""
        watch = Stopwatch()
        root = resolve(self.stores.graph, scope, name)
        params = self._params(
            NeighbourhoodParams,
            roots=(root.id,),
            depth=depth,
            edge_types=tuple(edge_types),
            direction=direction,
            limit=limit,
            as_of=self.clock(),
        )
        sub = self.stores.graph.run(NEIGHBOURHOOD, scope, params)
        isolation = Isolation(scope)
        kept = isolation.admit_subgraph(sub, (root.id,), params.direction, params.depth)
        nodes = [n for n in kept.nodes if n.entity.id != root.id]
        edges = kept.edges
        names = {root.id: root.display_name(), **{n.entity.id: n.entity.display_name() for n in nodes}}
        envelope, budget = self._envelope(
            "neighbourhood", scope, max_tokens, DEFAULT_EXPLAIN_TOKENS, isolation
        )
        envelope["subject"] = entity_card(root, include_ids=include_ids)
        budget.require_fit(f"the subject {root.display_name()!r}")
        note = kept.limit_note("nodes")
        if note:
            budget.note(note)
        node_entries = []
        for node in nodes:
            card = {
                "depth": node.depth,
                **entity_card(node.entity, include_ids=include_ids, summary_chars=160),
            }
            node_entries.append((node.entity.display_name(), [Option(card)]))
        budget.reserve("edges")
        budget.place("nodes", node_entries)
        edge_lines = [
            _edge(e, names) for e in edges if e.subject_id in names and (e.object_id or "") in names
        ]
        budget.place(
            "edges", [(f"{e['subject']} {e['predicate']} {e['object']}", [Option(e)]) for e in edge_lines]
        )
        envelope["isolation"] = {"rejected": isolation.rejected}
        return budget.finish(watch.total())

    @_bounded
    def path(
        self,
        scope: Scope,
        source: str,
        target: str,
        *,
        max_depth: int = bounds.PATH_MAX_DEPTH,
        edge_types: Sequence[str] = (),
        max_tokens: int | None = None,
        include_ids: bool = False,
    ) -> dict[str, Any]:
        """The shortest chain of facts from `source` to `target` (ids, names or aliases) within `max_depth`
        hops, optionally only along `edge_types`, as `nodes` and `edges`; `found` is false (with a follow-up)
        when none exists within the bound."""
        watch = Stopwatch()
        start = resolve(self.stores.graph, scope, source)
        end = resolve(self.stores.graph, scope, target)
        params = self._params(
            ShortestPathParams,
            source=start.id,
            target=end.id,
            max_depth=max_depth,
            edge_types=tuple(edge_types),
            as_of=self.clock(),
        )
        isolation = Isolation(scope)
        found = isolation.admit_path(self.stores.graph.run(SHORTEST_PATH, scope, params), start.id, end.id)
        nodes, edges = list(found.nodes), list(found.edges)
        complete = bool(nodes)
        envelope, budget = self._envelope("path", scope, max_tokens, DEFAULT_EXPLAIN_TOKENS, isolation)
        envelope["found"] = complete
        names = {n.id: n.display_name() for n in nodes}
        if complete:
            budget.place(
                "nodes",
                [
                    (n.display_name(), [Option(entity_card(n, include_ids=include_ids, summary_chars=160))])
                    for n in nodes
                ],
                required=len(nodes),
            )
            budget.place("edges", [(e.id, [Option(_edge(e, names))]) for e in edges], required=len(edges))
        else:
            missed = f"No path within {params.max_depth} hops; "
            envelope["follow_up"] = (
                missed + "see what surrounds the start: " + call("neighbourhood", name=start.identity())
            )
            if not budget.fits():  # a long name
                envelope["follow_up"] = missed + "try `neighbourhood` on the start."
        envelope["isolation"] = {"rejected": isolation.rejected}
        return budget.finish(watch.total())

    # -- code (graphctx.code.ops) -------------------------------------------------------------

    @_bounded
    def search(
        self, scope: Scope, query: str, *, max_tokens: int | None = None, include_ids: bool = False
    ) -> dict[str, Any]:
        """Code search: exact qualified or plain names first, then BM25 and dense over names, signatures and
        summaries of indexed modules and symbols (`graphctx index`)."""
        return self.code.search(scope, query, max_tokens=max_tokens, include_ids=include_ids)

    @_bounded
    def symbol(
        self, scope: Scope, name: str, *, limit: int = DEFAULT_LIMIT, max_tokens: int | None = None,
        include_ids: bool = False,
    ) -> dict[str, Any]:  # fmt: skip
        """One code symbol by qualified or plain name: its card (signature, file, lines, summary), callers
        (tests marked, each once), callees and the tests that call it."""
        return self.code.symbol(scope, name, limit=limit, max_tokens=max_tokens, include_ids=include_ids)

    @_bounded
    def callers(
        self, scope: Scope, name: str, *, depth: int = 1, limit: int = DEFAULT_LIMIT,
        max_tokens: int | None = None, include_ids: bool = False,
    ) -> dict[str, Any]:  # fmt: skip
        """Who calls `name`, `depth` 1 or 2 hops up the resolved call graph (unresolved calls are counted,
        never guessed); at most `limit` per hop."""
        return self.code.calls(
            scope, name, "in", depth=depth, limit=limit, max_tokens=max_tokens, include_ids=include_ids
        )

    @_bounded
    def callees(
        self, scope: Scope, name: str, *, depth: int = 1, limit: int = DEFAULT_LIMIT,
        max_tokens: int | None = None, include_ids: bool = False,
    ) -> dict[str, Any]:  # fmt: skip
        """What `name` calls, `depth` 1 or 2 hops down the resolved call graph (unresolved calls are counted,
        never guessed); at most `limit` per hop."""
        return self.code.calls(
            scope, name, "out", depth=depth, limit=limit, max_tokens=max_tokens, include_ids=include_ids
        )

    @_bounded
    def impact(
        self, scope: Scope, files: Sequence[str] = (), diff: str | None = None, *, depth: int = 1,
        limit: int = DEFAULT_LIMIT, max_tokens: int | None = None, include_ids: bool = False,
        repo: str | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        """What a change touches: the symbols in `files` or in the hunks of a unified `diff`, their callers up
        to `depth` hops and the tests to run (with commands); `repo` names the indexed repository the paths
        are relative to when there are several."""
        return self.code.impact(
            scope, files, diff, depth=depth, limit=limit, max_tokens=max_tokens, include_ids=include_ids,
            repo=repo,
        )  # fmt: skip

    # -- writes -------------------------------------------------------------------------------

    @_bounded_write
    def remember(
        self,
        scope: Scope,
        entities: Iterable[Entity | Mapping[str, Any]] = (),
        facts: Iterable[Fact | Mapping[str, Any]] = (),
        progress: Progress | None = None,
    ) -> dict[str, Any]:
        """All or nothing: every record is validated (schema, bounds, scope, endpoints in the batch
        or the store) before anything is written, then the whole call is one journaled write plan.
        Errors name the record (`entities[i]`, `facts[i]`), the field and the bound."""
        records = [
            *((f"entities[{i}]", "entity", e) for i, e in enumerate(entities)),
            *((f"facts[{i}]", "fact", f) for i, f in enumerate(facts)),
        ]
        return self._remember(scope, records, progress, unit=None, stop=None)

    def remember_jsonl(
        self,
        scope: Scope,
        lines: Iterable[str | bytes],
        progress: Progress | None = None,
        stop: Callable[[], bool] | None = None,
        batch: int = LOAD_BATCH,
    ) -> dict[str, Any]:
        """Bulk load (docs/memory.md): one JSON object per line, `{"kind": "entity"|"fact", ...}`.
        The whole file is validated first (errors name the line); then it is written in batches of
        `batch` records, entities first, each batch all or nothing. `stop()` is asked between
        batches: when it says so the load ends there, consistent, and the report says what was
        written (`interrupted`); running the same file again finishes it, nothing duplicated."""
        return self._remember(scope, jsonl_records(lines), progress, unit=batch, stop=stop)

    def _remember(
        self,
        scope: Scope,
        records: Iterable[tuple[str, str, object]],
        progress: Progress | None,
        unit: int | None,
        stop: Callable[[], bool] | None,
    ) -> dict[str, Any]:
        now = self.clock()
        ents, fs = validate(scope, records, now)
        report: dict[str, Any] = {
            "entities": {"created": 0, "updated": 0, "unchanged": 0},
            "facts": {"created": 0, "updated": 0, "unchanged": 0},
            "superseded": [],
            "records": len(ents) + len(fs),
            "written": 0,
            "vector_skipped": 0,
            "index_errors": [],
        }
        if unit is None and self.settings.group_commit:
            applied, superseded, synced = self._group.submit(_Write(scope, ents, fs, now))
            self._report(report, applied, superseded, synced, len(ents) + len(fs))
            if progress:
                progress(len(ents) + len(fs))
            return _follow_up(report)
        with self._write_lock():
            self._writable()
            self._check_endpoints(scope, ents, fs)
            for u_ents, u_facts in _units(ents, fs, unit):
                if stop is not None and stop():
                    report["interrupted"] = True
                    break
                plan, superseded = self._plan(scope, u_ents, u_facts, now)
                applied, synced = self.sync.commit(scope, plan)
                self._report(report, applied, superseded, synced, len(u_ents) + len(u_facts))
                if progress:
                    progress(len(u_ents) + len(u_facts))
        return _follow_up(report)

    @staticmethod
    def _report(
        report: dict[str, Any],
        applied: ApplyReport,
        superseded: list[dict[str, Any]],
        synced: SyncReport,
        written: int,
    ) -> None:
        _add(report["entities"], applied.entities)
        _add(report["facts"], applied.facts)
        report["superseded"] += superseded
        report["written"] += written
        report["vector_skipped"] += len(synced.vector_skipped)
        if synced.index_error:
            report["index_errors"].append(synced.index_error)

    def _commit_writes(self, writes: Sequence[_Write]) -> list[_Written | BaseException]:
        """A group commit's batch, under the write lock: independent calls of one scope are
        committed together (`IndexSync.commit_group`); a call touching what an earlier one of the
        batch touches (an entity, a fact, a single-valued slot) waits for the next round, planned
        against the store as the earlier one left it: the order of two concurrent calls is free, but
        each is resolved as if it ran alone."""
        self._writable()
        outcomes: dict[int, _Written | BaseException] = {}
        pending = list(enumerate(writes))
        while pending:
            scope = pending[0][1].scope
            written: set[tuple[str, ...]] = set()
            read: set[tuple[str, ...]] = set()
            group: list[tuple[int, _Write]] = []
            later: list[tuple[int, _Write]] = []
            for i, write in pending:
                puts, gets = write.touches(self.settings.single_valued_predicates)
                if write.scope != scope or puts & (written | read) or gets & written:
                    later.append((i, write))
                    continue
                written |= puts
                read |= gets
                group.append((i, write))
            planned: list[tuple[int, WritePlan, list[dict[str, Any]]]] = []
            for i, write in group:
                try:
                    self._check_endpoints(scope, write.ents, write.fs)
                    plan, superseded = self._plan(scope, write.ents, write.fs, write.now)
                except GraphctxError as exc:
                    outcomes[i] = exc
                    continue
                planned.append((i, plan, superseded))
            if planned:
                try:
                    results, synced = self.sync.commit_group(scope, [plan for _, plan, _ in planned])
                except GraphctxError as exc:  # this round's callers only: earlier rounds are written
                    failed: list[ApplyReport | GraphctxError] = [exc] * len(planned)
                    results, synced = failed, SyncReport()
                for (i, _, superseded), result in zip(planned, results, strict=True):
                    if isinstance(result, GraphctxError):
                        outcomes[i] = result
                    else:
                        outcomes[i] = (result, superseded, synced)
            pending = later
        return [outcomes[i] for i in range(len(writes))]

    def _check_endpoints(self, scope: Scope, ents: list[Located[Entity]], fs: list[Located[Fact]]) -> None:
        batch_ids = {e.item.id for e in ents}
        wanted = sorted({i for f in fs for i in endpoints([f.item]) if i not in batch_ids})
        stored: set[str] = set()
        for ids in batches(wanted, IDS_BATCH):
            found = self.stores.graph.run(ENTITY_GET, scope, EntityGetParams(ids=tuple(ids)))
            stored.update(e.id for e in found.entities)
        check_endpoints(fs, batch_ids, stored)

    def _plan(
        self, scope: Scope, ents: Sequence[Located[Entity]], fs: Sequence[Located[Fact]], now: datetime
    ) -> tuple[WritePlan, list[dict[str, Any]]]:
        """Resolve the facts against the stored timeline (supersession, kept validity)."""
        facts = [f.item for f in fs]
        single = self.settings.single_valued_predicates
        stored: list[Fact] = []
        if facts:
            stored += facts_of(
                self.stores.graph, scope, [f.subject_id for f in facts], [f.predicate for f in facts], "out"
            )
            by_object = [f for f in facts if single.get(f.predicate) == "object" and f.object_id]
            if by_object:
                stored += facts_of(
                    self.stores.graph,
                    scope,
                    [f.object_id or "" for f in by_object],
                    [f.predicate for f in by_object],
                    "in",
                )
        resolved = timeline.resolve(facts, [f.given for f in fs], stored, single, now)
        plan = WritePlan(
            entities=tuple(e.item for e in ents), facts=tuple(resolved.facts), ends=resolved.ends
        )
        superseded = [
            {"fact": s.fact_id, "by": s.by, "valid_to": iso(s.valid_to)} for s in resolved.superseded
        ]
        return plan, superseded

    @_bounded_write
    def forget(
        self, scope: Scope, entity_ids: Sequence[str] = (), fact_ids: Sequence[str] = ()
    ) -> dict[str, Any]:
        """Entities are deleted (with their facts); facts are invalidated and keep their rows. One
        journaled write plan: all of it or nothing."""
        bounds.check_count("entity ids", entity_ids, 1000)
        bounds.check_count("fact ids", fact_ids, 1000)
        for i in [*entity_ids, *fact_ids]:
            bounds.check_text("id", i, bounds.ID_BYTES)
        now = self.clock()
        plan = WritePlan(ends=dict.fromkeys(fact_ids, now), delete_ids=tuple(dict.fromkeys(entity_ids)))
        with self._write_lock():
            self._writable()
            applied, _ = self.sync.commit(scope, plan)
        return {
            "entities_deleted": applied.deleted,
            "facts_removed": applied.facts_removed,
            "facts_invalidated": applied.ended,
        }

    def reconcile(self, scope: Scope, progress: Progress | None = None) -> dict[str, Any]:
        """Repair the scope's lexical and dense indexes from the graph (the authority): pending index work
        first, then every document whose hash differs or is missing, and index entries the graph no longer
        has. Returns what was repaired."""
        report = ReconcileReport()
        with self._write_lock():
            self._require_write_mode()
            self.sync.recover(report)
            self.sync.reconcile_scope(scope, report, progress)
        return report.as_dict()

    def recover(self) -> dict[str, Any]:
        """Complete journaled writes and index work a crash or an interruption left (run at every
        open for writing; `serve` runs it at start)."""
        with self._write_lock():
            self._require_write_mode()
            return self.sync.recover().as_dict()

    def _require_write_mode(self) -> None:
        if self.stores.mode == "read":
            where = self.stores.data_dir.path if self.stores.data_dir is not None else "the stores"
            raise ReadOnly(
                f"{where} is open read-only in this process (a read command, a read-only directory "
                "or GRAPHCTX_READ_ONLY): writes are refused",
            )

    def _writable(self) -> None:
        """Before a write: the stores take writes, and earlier incomplete writes are completed."""
        self._require_write_mode()
        self.sync.recover()

    def index_repository(
        self,
        scope: Scope,
        root: str | Path,
        *,
        progress: IndexProgress | None = None,
        exclude: Sequence[str] = (),
        repo: str | None = None,
        roots: Sequence[str] = (),
    ) -> IndexReport:
        """Index (or incrementally re-index) the Python, Go and Markdown files under root into the scope
        as repository `repo` (default: the repository last indexed from root, else its project
        name, else its directory's name); other
        repositories in the scope are left as they are. `roots` (or the `code_roots` setting) name
        the import roots instead of the packaging declarations."""
        from graphctx.code.indexer import Indexer, check_excludes, check_roots

        root = Path(bounds.check_selector("repository path", str(root)))
        patterns = check_excludes([*self.settings.code_exclude, *check_excludes(exclude)])
        chosen = check_roots(roots) or check_roots(self.settings.code_roots)
        with self._write_lock():
            self._writable()
            return Indexer(self.stores, self.sync, progress, workers=self.settings.index_workers).run(
                scope, root, patterns, repo=repo, roots=chosen
            )

    @_bounded
    def repositories(self, scope: Scope) -> list[dict[str, Any]]:
        """The repositories indexed into the scope: name, root, layout, top-level packages, counts."""
        return [r.as_dict() for r in list_repositories(self.stores.graph, scope)]

    def remove_repository(self, scope: Scope, repo: str) -> dict[str, Any]:
        """Delete one repository's modules, symbols, documents and edges from the scope."""
        from graphctx.code.indexer import Indexer

        with self._write_lock():
            self._writable()
            return Indexer(self.stores, self.sync).remove(scope, repo)

    @_bounded
    def status(self, scope: Scope) -> dict[str, Any]:
        """What the scope holds (graph counts, lexical documents, vectors, pending index work) and which
        backends serve it, the data directory and its exposure."""
        stats = self.stores.graph.run(SCOPE_STATS, scope, NoParams())
        vectors: int | None = 0
        try:
            vectors = len(self.stores.vector.hashes(scope)) if self.stores.vector is not None else 0
        except BackendUnavailable:  # a reader beside a writer holding the vector shard
            vectors = None
        flushing = len(self.sync.deferred.held()) if self.sync.deferred is not None else 0
        return {
            "scope": scope.as_dict(),
            "backends": {**self.stores.describe(), "catalog": CATALOG_VERSION},
            "graph": stats.model_dump(),
            "lexical_docs": len(self.stores.lexical.hashes(scope)),
            "vectors": vectors,
            # index work to repair; writes waiting for their background flush are in index_flush
            "pending_index_work": max(0, self.stores.journal.count_pending() - flushing),
            "group_commit": {"enabled": self.settings.group_commit, **self._group.stats()},
            "index_flush": (
                {"enabled": True, **self.sync.deferred.stats()}
                if self.sync.deferred is not None
                else {"enabled": False}
            ),
            "memory": self.memory(),
            "data_dir": str(self.settings.data_dir),
            "mode": self.stores.mode,
            "writer_pid": writer_pid(self.settings.data_dir) if self.stores.data_dir else None,
            # what other local users could read there (relative names; empty when private)
            "exposed": exposed(self.settings.data_dir) if self.stores.data_dir else [],
            "as_of": iso(self.clock()),
        }

    def memory(self) -> dict[str, Any]:
        """This process's resident memory and open descriptors, and every cache its stores keep with
        its bound (docs/operations.md, "Memory")."""
        caches: dict[str, dict[str, int]] = {}
        for store in (self.stores.graph, self.stores.lexical, self.stores.vector, self.stores.embedder):
            if isinstance(store, ReportsCaches):
                caches.update(store.caches())
        caches["leg_threads"] = {"entries": self._executor.running, "max_entries": self._executor.limit}
        return {**process_usage(), "caches": caches}

    # -- helpers ------------------------------------------------------------------------------

    def _envelope(
        self,
        op: str,
        scope: Scope,
        max_tokens: int | None,
        default: int,
        isolation: Isolation,
        as_of: datetime | None = None,
    ) -> tuple[dict[str, Any], Budget]:
        tokens = bounds.normalise_tokens(max_tokens, default)
        return open_envelope(
            op,
            scope,
            as_of=as_of or self.clock(),
            backends=self.stores.describe(),
            max_tokens=tokens,
            rejected=isolation.rejected,
            counter=self.retriever.counter,
        )

    @staticmethod
    def _params(model: Any, **values: Any) -> Any:
        try:
            return model(**values)
        except ValidationError as exc:
            raise from_validation(exc) from None


def _edge(fact: Fact, names: Mapping[str, str]) -> dict[str, Any]:
    edge: dict[str, Any] = {
        "subject": names.get(fact.subject_id, fact.subject_id),
        "predicate": fact.predicate,
        "object": names.get(fact.object_id or "", fact.object_id),
    }
    if fact.value is not None:
        edge["value"] = fact.value
    return edge


@dataclass(frozen=True)
class _Write:
    """One `remember` call handed to the group commit: validated, not yet planned."""

    scope: Scope
    ents: list[Located[Entity]]
    fs: list[Located[Fact]]
    now: datetime

    def touches(self, single: Mapping[str, str]) -> tuple[set[tuple[str, ...]], set[tuple[str, ...]]]:
        """What its plan writes (entities, facts, the slot of a single-valued predicate) and what it
        reads besides (the entities its facts point at)."""
        writes: set[tuple[str, ...]] = {("entity", e.item.id) for e in self.ents}
        reads: set[tuple[str, ...]] = set()
        for located in self.fs:
            f = located.item
            writes.add(("fact", f.id))
            reads |= {("entity", f.subject_id), ("entity", f.object_id or "")}
            side = single.get(f.predicate)
            if side == "subject":
                writes.add(("slot", f.subject_id, f.predicate))
            elif side == "object" and f.object_id:
                writes.add(("slot-in", f.object_id, f.predicate))
        return writes, reads


_Written = tuple[ApplyReport, list[dict[str, Any]], SyncReport]


def _follow_up(report: dict[str, Any]) -> dict[str, Any]:
    if report["index_errors"]:
        report["follow_up"] = (
            "The graph has the data; the indexes are completed before the next write "
            "(or now with `graphctx reconcile`)."
        )
    return report


def _add(totals: dict[str, int], counts: Mapping[str, int]) -> None:
    for key in ("created", "updated", "unchanged"):
        totals[key] += counts[key]
