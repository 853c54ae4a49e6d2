"""ContextService: the one facade every transport (Python, CLI, HTTP, MCP) is a thin layer over."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from graphctx import bounds
from graphctx.clock import Clock, iso, utc_now
from graphctx.code.indexer import Indexer, IndexProgress, IndexReport, check_excludes
from graphctx.code.ops import DEFAULT_LIMIT, CodeOps
from graphctx.envelope import Budget, Option, open_envelope
from graphctx.errors import InputError, ScopeError, from_validation
from graphctx.kernel.reads import batches
from graphctx.kernel.stores import Stores, open_stores
from graphctx.kernel.templates import (
    CATALOG_VERSION,
    ENTITY_GET,
    FACT_INVALIDATE,
    FACT_UPSERT,
    FACTS_FROM_ROOTS,
    NEIGHBOURHOOD,
    SCOPE_STATS,
    SHORTEST_PATH,
    EntityGetParams,
    FactInvalidateParams,
    FactsFromRootsParams,
    FactUpsertParams,
    NeighbourhoodParams,
    NoParams,
    ShortestPathParams,
)
from graphctx.model import Entity, Fact
from graphctx.names import resolve
from graphctx.retrieval.isolation import Isolation
from graphctx.retrieval.pipeline import Retriever, Stopwatch
from graphctx.retrieval.render import entity_card, fact_line, facts_about
from graphctx.scope import Scope
from graphctx.settings import Settings
from graphctx.writes import IndexSync, ReconcileReport

DEFAULT_EXPLAIN_TOKENS = 4_000
WRITE_BATCH = 500
Progress = Callable[[int], None]


def parse(model: type[Entity] | type[Fact], data: Mapping[str, Any], where: str) -> Any:
    """Validate client data into a model; errors become InputError naming the field."""
    if not isinstance(data, Mapping):
        raise InputError(f"{where}: expected an object, got {type(data).__name__}")
    try:
        return model.model_validate(dict(data))
    except ValidationError as exc:
        raise from_validation(exc, where=where, default_loc="record") from None


def _bind(scope: Scope, obj: Entity | Fact, now: datetime) -> Any:
    """Stamp the caller's scope onto a record; a record naming another scope is refused."""
    for field, value in scope.as_dict().items():
        given = getattr(obj, field)
        if given not in (None, value):
            raise ScopeError(
                f"record {obj.id[:60]!r} names {field} {given[:40]!r}, outside the caller's scope"
            )
    return obj.model_copy(update={**scope.as_dict(), "updated_at": obj.updated_at or now})


class ContextService:
    def __init__(self, stores: Stores, settings: Settings | None = None, clock: Clock = utc_now) -> None:
        self.stores = stores
        self.settings = settings or Settings()
        self.clock = clock
        self._executor = ThreadPoolExecutor(max_workers=4, thread_name_prefix="graphctx-leg")
        self.retriever = Retriever(
            stores, self._executor, clock, self.settings.deadline_s, self.settings.dense_deadline_s
        )
        self.sync = IndexSync(stores)
        # one writer at a time keeps journal, graph and index order consistent; reads run concurrently
        # (each adapter is thread-safe on its own)
        self._writes = threading.Lock()
        self.code = CodeOps(self.stores, self.retriever, self.clock)
        self.sync.refill_rebuilt()

    @classmethod
    def open(cls, settings: Settings | None = None, clock: Clock = utc_now) -> ContextService:
        settings = settings or Settings()
        return cls(open_stores(settings), settings, clock)

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
        self.stores.close()

    def __enter__(self) -> ContextService:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reads --------------------------------------------------------------------------------

    def recall(
        self,
        scope: Scope,
        query: str,
        *,
        max_tokens: int | None = None,
        depth: int = 1,
        include_ids: bool = False,
    ) -> dict[str, Any]:
        return self.retriever.recall(
            scope, query, max_tokens=max_tokens, depth=depth, include_ids=include_ids
        )

    def explain(
        self,
        scope: Scope,
        name: str,
        *,
        max_tokens: int | None = None,
        include_history: bool = True,
        include_ids: bool = False,
    ) -> dict[str, Any]:
        watch = Stopwatch()
        entity = resolve(self.stores.graph, scope, name)
        params = FactsFromRootsParams(roots=(entity.id,), include_invalid=include_history, as_of=self.clock())
        result = self.stores.graph.run(FACTS_FROM_ROOTS, scope, params)
        isolation = Isolation(scope)
        facts = [f for f in result.facts if isolation.admit_fact(f)]
        names = self._names(scope, isolation, {entity.id: entity.display_name()}, facts)
        # a fact whose far end is not an entity of the scope says nothing the caller may see
        facts = [f for f in facts if all(i is None or i in names for i in (f.subject_id, f.object_id))]
        now = self.clock()
        lines = []
        for fact in facts_about(entity.id, facts):
            line = fact_line(fact, entity.id, names, include_ids=include_ids)
            line["current"] = fact.is_valid_at(now)
            lines.append(line)
        lines.sort(key=lambda ln: not ln["current"])  # current facts first, history after
        envelope, budget = self._envelope("explain", scope, max_tokens, DEFAULT_EXPLAIN_TOKENS, isolation)
        envelope["subject"] = entity_card(entity, include_ids=include_ids)
        budget.require_fit(f"the subject {entity.display_name()!r}")
        if result.truncated:
            budget.note({"what": "facts", "reason": "limit", "limit": bounds.MAX_FACTS})
        budget.place("facts", [(ln.get("predicate", ""), [Option(ln)]) for ln in lines])
        envelope["isolation"] = {"rejected": isolation.rejected}
        return budget.finish(watch.total())

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
            envelope["follow_up"] = (
                f"No path within {params.max_depth} hops; try `neighbourhood` on {start.display_name()!r}."
            )
        envelope["isolation"] = {"rejected": isolation.rejected}
        return budget.finish(watch.total())

    # -- code (graphctx.code.ops) -------------------------------------------------------------

    def search(
        self, scope: Scope, query: str, *, max_tokens: int | None = None, include_ids: bool = False
    ) -> dict[str, Any]:
        return self.code.search(scope, query, max_tokens=max_tokens, include_ids=include_ids)

    def symbol(
        self, scope: Scope, name: str, *, limit: int = DEFAULT_LIMIT, max_tokens: int | None = None,
        include_ids: bool = False,
    ) -> dict[str, Any]:  # fmt: skip
        return self.code.symbol(scope, name, limit=limit, max_tokens=max_tokens, include_ids=include_ids)

    def callers(
        self, scope: Scope, name: str, *, depth: int = 1, limit: int = DEFAULT_LIMIT,
        max_tokens: int | None = None, include_ids: bool = False,
    ) -> dict[str, Any]:  # fmt: skip
        return self.code.calls(
            scope, name, "in", depth=depth, limit=limit, max_tokens=max_tokens, include_ids=include_ids
        )

    def callees(
        self, scope: Scope, name: str, *, depth: int = 1, limit: int = DEFAULT_LIMIT,
        max_tokens: int | None = None, include_ids: bool = False,
    ) -> dict[str, Any]:  # fmt: skip
        return self.code.calls(
            scope, name, "out", depth=depth, limit=limit, max_tokens=max_tokens, include_ids=include_ids
        )

    def impact(
        self, scope: Scope, files: Sequence[str] = (), diff: str | None = None, *, depth: int = 1,
        limit: int = DEFAULT_LIMIT, max_tokens: int | None = None, include_ids: bool = False,
    ) -> dict[str, Any]:  # fmt: skip
        return self.code.impact(
            scope, files, diff, depth=depth, limit=limit, max_tokens=max_tokens, include_ids=include_ids
        )

    # -- writes -------------------------------------------------------------------------------

    def remember(
        self,
        scope: Scope,
        entities: Iterable[Entity | Mapping[str, Any]] = (),
        facts: Iterable[Fact | Mapping[str, Any]] = (),
        progress: Progress | None = None,
    ) -> dict[str, Any]:
        """Validate everything first (bad input writes nothing), then graph, then indexes."""
        now = self.clock()
        ents = [
            _bind(scope, e if isinstance(e, Entity) else parse(Entity, e, f"entity {i + 1}"), now)
            for i, e in enumerate(entities)
        ]
        fs = [
            _bind(scope, f if isinstance(f, Fact) else parse(Fact, f, f"fact {i + 1}"), now)
            for i, f in enumerate(facts)
        ]
        bounds.check_count("records", [*ents, *fs], bounds.BULK_RECORDS)
        report: dict[str, Any] = {
            "entities": {"created": 0, "updated": 0, "unchanged": 0},
            "facts": {"created": 0, "updated": 0, "unchanged": 0},
            "vector_skipped": 0,
            "index_errors": [],
        }
        with self._writes:
            self._write(scope, ents, fs, report, progress)
        if report["index_errors"]:
            report["follow_up"] = "The graph has the data; run `graphctx reconcile` to finish indexing."
        return report

    def _write(
        self,
        scope: Scope,
        ents: list[Entity],
        fs: list[Fact],
        report: dict[str, Any],
        progress: Progress | None,
    ) -> None:
        for chunk in batches(ents, WRITE_BATCH):
            result, synced = self.sync.upsert_entities(scope, chunk)
            _add(report["entities"], result)
            report["vector_skipped"] += len(synced.vector_skipped)
            if synced.index_error:
                report["index_errors"].append(synced.index_error)
            if progress:
                progress(len(chunk))
        for facts in batches(fs, WRITE_BATCH):
            result = self.stores.graph.run(FACT_UPSERT, scope, FactUpsertParams(facts=tuple(facts)))
            _add(report["facts"], result)
            if progress:
                progress(len(facts))

    def remember_jsonl(
        self, scope: Scope, lines: Iterable[str], progress: Progress | None = None
    ) -> dict[str, Any]:
        """Bulk load: one JSON object per line, {"kind": "entity"|"fact", ...}."""
        entities: list[Entity] = []
        facts: list[Fact] = []
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            bounds.check_text(f"line {number}", line, bounds.SUMMARY_BYTES * 4)
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"line {number}: not valid JSON ({exc.msg})", line=number) from None
            if not isinstance(record, dict):
                raise InputError(f"line {number}: expected a JSON object", line=number)
            kind = record.pop("kind", None)
            if kind == "entity":
                entities.append(parse(Entity, record, f"line {number}"))
            elif kind == "fact":
                facts.append(parse(Fact, record, f"line {number}"))
            else:
                raise InputError(f"line {number}: kind must be 'entity' or 'fact', got {kind!r}", line=number)
            bounds.check_count("records", entities, bounds.BULK_RECORDS)
        return self.remember(scope, entities, facts, progress)

    def forget(
        self, scope: Scope, entity_ids: Sequence[str] = (), fact_ids: Sequence[str] = ()
    ) -> dict[str, Any]:
        """Entities are deleted (with their facts); facts are invalidated and keep their rows."""
        bounds.check_count("entity ids", entity_ids, 1000)
        bounds.check_count("fact ids", fact_ids, 1000)
        for i in [*entity_ids, *fact_ids]:
            bounds.check_text("id", i, bounds.ID_BYTES)
        report: dict[str, Any] = {"entities_deleted": 0, "facts_removed": 0, "facts_invalidated": 0}
        with self._writes:
            self._forget(scope, entity_ids, fact_ids, report)
        return report

    def _forget(
        self, scope: Scope, entity_ids: Sequence[str], fact_ids: Sequence[str], report: dict[str, Any]
    ) -> None:
        if entity_ids:
            result, _ = self.sync.delete_entities(scope, list(entity_ids))
            report.update(entities_deleted=result.deleted, facts_removed=result.facts_removed)
        if fact_ids:
            params = FactInvalidateParams(ids=tuple(fact_ids), valid_to=self.clock())
            report["facts_invalidated"] = self.stores.graph.run(FACT_INVALIDATE, scope, params).count

    def reconcile(self, scope: Scope, progress: Progress | None = None) -> dict[str, Any]:
        report = ReconcileReport()
        with self._writes:
            self.sync.replay_journal(report)
            self.sync.reconcile_scope(scope, report, progress)
        return report.as_dict()

    def index_repository(
        self,
        scope: Scope,
        root: str | Path,
        *,
        progress: IndexProgress | None = None,
        exclude: Sequence[str] = (),
    ) -> IndexReport:
        """Index (or incrementally re-index) the Python and Markdown files under root into the scope."""
        root = Path(bounds.check_selector("repository path", str(root)))
        patterns = check_excludes([*self.settings.code_exclude, *check_excludes(exclude)])
        with self._writes:
            return Indexer(self.stores, self.sync, progress).run(scope, root, patterns)

    def status(self, scope: Scope) -> dict[str, Any]:
        stats = self.stores.graph.run(SCOPE_STATS, scope, NoParams())
        vector = self.stores.vector
        return {
            "scope": scope.as_dict(),
            "backends": {**self.stores.describe(), "catalog": CATALOG_VERSION},
            "graph": stats.model_dump(),
            "lexical_docs": len(self.stores.lexical.hashes(scope)),
            "vectors": len(vector.hashes(scope)) if vector is not None else 0,
            "pending_index_work": self.stores.journal.count_pending(),
            "data_dir": str(self.settings.data_dir),
            "as_of": iso(self.clock()),
        }

    # -- helpers ------------------------------------------------------------------------------

    def _names(
        self, scope: Scope, isolation: Isolation, names: dict[str, str], facts: Sequence[Fact]
    ) -> dict[str, str]:
        missing = sorted({i for f in facts for i in (f.subject_id, f.object_id) if i and i not in names})
        if missing:
            ends = self.stores.graph.run(ENTITY_GET, scope, EntityGetParams(ids=tuple(missing)))
            names.update({e.id: e.display_name() for e in ends.entities if isolation.admit_entity(e)})
        return names

    def _envelope(
        self, op: str, scope: Scope, max_tokens: int | None, default: int, isolation: Isolation
    ) -> tuple[dict[str, Any], Budget]:
        tokens = bounds.normalise_tokens(max_tokens, default)
        return open_envelope(
            op,
            scope,
            as_of=self.clock(),
            backends=self.stores.describe(),
            max_tokens=tokens,
            rejected=isolation.rejected,
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


def _add(totals: dict[str, int], result: Any) -> None:
    for key in ("created", "updated", "unchanged"):
        totals[key] += getattr(result, key)
