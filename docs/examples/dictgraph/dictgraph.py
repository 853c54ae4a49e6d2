"""dictgraph: a complete GraphStore adapter over plain Python dicts (in memory, no dependency).

A worked example for docs/adapters.md. It translates every template of the catalogue
(docs/templates.md) with the reference semantics, keeps each scope's data in its own dicts so no
lookup can reach another scope, and orders every answer deterministically (by id, never by dict
insertion order or hashing). It is certified by test_dictgraph.py next to it:

    class TestDictGraph(GraphStoreContract):
        @pytest.fixture
        def graph_store(self): ...

Layout of the data, per scope key (tenant_id, namespace, graph_id):

    _ScopeData.entities  {entity id: Entity}   stored with the scope and UTC timestamps filled in
    _ScopeData.facts     {fact id: Fact}        both endpoints exist in the same scope
    _ScopeData.out/into  {entity id: {fact id}} adjacency, so a hop never scans the whole scope

Register it for graphctx with an entry point (see pyproject.toml here):

    [project.entry-points."graphctx.graph_stores"]
    dictgraph = "dictgraph:create_graph_store"
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from graphctx.errors import BackendUnavailable, InputError, NotFound, ScopeError
from graphctx.kernel import templates as t
from graphctx.kernel.dispatch import Handler, TemplateDispatch
from graphctx.kernel.ports import Capabilities
from graphctx.model import Entity, Fact, IndexedHash
from graphctx.scope import Scope
from graphctx.settings import Settings

Clock = Callable[[], datetime]
Key = tuple[str, str, str]

_RANK: tuple[t.ExactField, ...] = ("id", "qualified_name", "name", "alias")
# the fields `entity.upsert` compares to decide that an entity is unchanged (timestamps are not)
_STORED_FIELDS = (
    "name", "type", "aliases", "summary", "qualified_name", "path", "line_start", "line_end",
    "signature", "source",
)  # fmt: skip
_FACT_FIELDS = ("subject_id", "predicate", "object_id", "value", "source", "confidence")


def utc(value: datetime | None) -> datetime | None:
    """Every timestamp is kept aware and in UTC; a naive one means UTC (as in the reference)."""
    if value is None:
        return None
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def usable(value: object) -> bool:
    """Text that could equal a stored id or name: valid UTF-8 without NUL. Anything else matches
    nothing (it is dropped from lookups, never an error)."""
    if not isinstance(value, str) or "\x00" in value:
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def unique(values: Iterable[str]) -> list[str]:
    """Order-preserving de-duplication of the usable values."""
    return [v for v in dict.fromkeys(values) if usable(v)]


def fact_order(f: Fact) -> tuple[str, str, str, str]:
    """The catalogue's edge order: (subject, predicate, object, id); a value-only fact sorts first."""
    return (f.subject_id, f.predicate, f.object_id or "", f.id)


def valid_at(f: Fact, when: datetime) -> bool:
    return (f.valid_from is None or f.valid_from <= when) and (f.valid_to is None or f.valid_to > when)


@dataclass
class _ScopeData:
    entities: dict[str, Entity] = field(default_factory=dict)
    facts: dict[str, Fact] = field(default_factory=dict)
    out: dict[str, set[str]] = field(default_factory=dict)
    into: dict[str, set[str]] = field(default_factory=dict)

    def link(self, f: Fact) -> None:
        self.facts[f.id] = f
        self.out.setdefault(f.subject_id, set()).add(f.id)
        if f.object_id is not None:
            self.into.setdefault(f.object_id, set()).add(f.id)

    def unlink(self, fact_id: str) -> None:
        f = self.facts.pop(fact_id)
        self.out[f.subject_id].discard(fact_id)
        if f.object_id is not None:
            self.into[f.object_id].discard(fact_id)

    def touching(self, entity_id: str) -> set[str]:
        return self.out.get(entity_id, set()) | self.into.get(entity_id, set())


@dataclass(frozen=True)
class _Step:
    near: str  # the frontier endpoint
    far: str  # the endpoint the step reaches
    fact: Fact


class DictGraphStore(TemplateDispatch):
    """In-memory graph store. Thread-safe: every template runs under one lock, and a write checks
    everything it needs before it changes anything, so a failed write leaves no trace.

    `clock` returns the current time (used for stamps and as the default `as_of`); tests pin it.
    """

    name = "dictgraph"

    def __init__(self, *, clock: Clock | None = None) -> None:
        self._clock: Clock = clock or (lambda: datetime.now(UTC))
        self._lock = threading.RLock()
        self._scopes: dict[Key, _ScopeData] | None = {}

    # ---- the port ---------------------------------------------------------------------------------

    @property
    def capabilities(self) -> Capabilities:
        # in memory: nothing survives close(), and no other process can read it
        return Capabilities(templates=self.supported_templates(), durable=False, concurrent_readers=False)

    def ensure_schema(self) -> None:
        """Nothing to create; idempotent like every adapter's ensure_schema."""
        self._live()

    def close(self) -> None:
        with self._lock:
            self._scopes = None

    def run(self, template: t.Template[Any, Any], scope: Scope, params: Any) -> Any:
        # TemplateDispatch.run checks the template (name + version), the Scope and the params model
        with self._lock:
            self._live()
            return super().run(template, scope, params)

    def handlers(self) -> Mapping[str, Handler]:
        return {
            t.ENTITY_UPSERT.name: self._entity_upsert,
            t.ENTITY_GET.name: self._entity_get,
            t.ENTITY_NAMES.name: self._entity_names,
            t.ENTITY_FIND_EXACT.name: self._entity_find_exact,
            t.ENTITY_DELETE.name: self._entity_delete,
            t.ENTITY_HASHES.name: self._entity_hashes,
            t.FACT_UPSERT.name: self._fact_upsert,
            t.FACT_INVALIDATE.name: self._fact_invalidate,
            t.FACTS_FROM_ROOTS.name: self._facts_from_roots,
            t.NEIGHBOURHOOD.name: self._neighbourhood,
            t.SHORTEST_PATH.name: self._shortest_path,
            t.SCOPE_STATS.name: self._scope_stats,
            t.SCOPE_CLEAR.name: self._scope_clear,
        }

    # ---- plumbing ---------------------------------------------------------------------------------

    def _live(self) -> dict[Key, _ScopeData]:
        if self._scopes is None:
            raise BackendUnavailable("dictgraph store is closed")
        return self._scopes

    def _data(self, scope: Scope) -> _ScopeData:
        """The scope's own dicts. Reads of an unknown scope see an empty one (nothing is created)."""
        return self._live().get(_key(scope)) or _ScopeData()

    def _writable(self, scope: Scope) -> _ScopeData:
        return self._live().setdefault(_key(scope), _ScopeData())

    def _now(self) -> datetime:
        now = utc(self._clock())
        assert now is not None
        return now

    # ---- entities ---------------------------------------------------------------------------------

    def _entity_upsert(self, scope: Scope, p: t.EntityUpsertParams) -> t.UpsertResult:
        for e in p.entities:
            _check_owner(e, scope)
        data, now = self._writable(scope), self._now()
        created = updated = unchanged = 0
        for e in p.entities:
            old = data.entities.get(e.id)
            if old is not None and all(getattr(old, f) == getattr(e, f) for f in _STORED_FIELDS):
                unchanged += 1  # equal content: timestamps are left as they are
                continue
            data.entities[e.id] = e.model_copy(
                update={
                    **scope.as_dict(),
                    "created_at": old.created_at if old is not None else utc(e.created_at) or now,
                    "updated_at": utc(e.updated_at) or now,
                }
            )
            if old is None:
                created += 1
            else:
                updated += 1
        return t.UpsertResult(created=created, updated=updated, unchanged=unchanged)

    def _entity_get(self, scope: Scope, p: t.EntityGetParams) -> t.EntityList:
        entities = self._data(scope).entities
        return t.EntityList(entities=tuple(entities[i] for i in unique(p.ids) if i in entities))

    def _entity_names(self, scope: Scope, p: t.EntityGetParams) -> t.EntityNames:
        """Optional: only what a name needs (a remote backend would fetch just these properties)."""
        found = self._entity_get(scope, p).entities
        return t.EntityNames(
            names=tuple(
                t.EntityName(
                    id=e.id,
                    name=e.name,
                    qualified_name=e.qualified_name,
                    tenant_id=e.tenant_id,
                    namespace=e.namespace,
                    graph_id=e.graph_id,
                )
                for e in found
            )
        )

    def _entity_find_exact(self, scope: Scope, p: t.EntityFindExactParams) -> t.ExactMatches:
        values = unique(p.values)
        folded: dict[str, str] = {}  # casefolded value -> the first given value with that casefold
        for v in values:
            folded.setdefault(v.casefold(), v)
        matches: list[t.ExactMatch] = []
        seen: set[str] = set()
        # field rank first, then entity id; each entity once, under its best field
        for field_name in (f for f in _RANK if f in p.fields):
            found: dict[str, str] = {}  # entity id -> the first given value that matched it
            for e in self._data(scope).entities.values():
                if e.id not in seen:
                    value = _matching_value(e, field_name, values, folded)
                    if value is not None:
                        found[e.id] = value
            for entity_id in sorted(found):
                seen.add(entity_id)
                entity = self._data(scope).entities[entity_id]
                matches.append(t.ExactMatch(entity=entity, field=field_name, value=found[entity_id]))
        return t.ExactMatches(matches=tuple(matches[: p.limit]))

    def _entity_delete(self, scope: Scope, p: t.EntityDeleteParams) -> t.DeleteResult:
        data = self._data(scope)
        ids = [i for i in unique(p.ids) if i in data.entities]
        if not ids:
            return t.DeleteResult()
        data = self._writable(scope)
        touching = set().union(*(data.touching(i) for i in ids))
        for fact_id in sorted(touching):
            data.unlink(fact_id)
        for entity_id in ids:
            del data.entities[entity_id]
            data.out.pop(entity_id, None)
            data.into.pop(entity_id, None)
        return t.DeleteResult(deleted=len(ids), facts_removed=len(touching))

    def _entity_hashes(self, scope: Scope, p: t.EntityHashesParams) -> t.HashPage:
        if not usable(p.after):
            raise InputError("entity.hashes `after` must be valid text without NUL", field="after")
        entities = self._data(scope).entities
        page = sorted(i for i in entities if i > p.after)[: p.limit]
        return t.HashPage(items=tuple(IndexedHash(id=i, content_hash=entities[i].content_hash) for i in page))

    # ---- facts ------------------------------------------------------------------------------------

    def _fact_upsert(self, scope: Scope, p: t.FactUpsertParams) -> t.UpsertResult:
        data = self._data(scope)
        # every check before any write: a batch with a foreign or dangling endpoint changes nothing
        for f in p.facts:
            _check_owner(f, scope)
        for f in p.facts:
            for endpoint in (f.subject_id, f.object_id):
                if endpoint is not None and endpoint not in data.entities:
                    raise NotFound(
                        f"fact {f.id[:80]!r} needs entity {endpoint[:80]!r}, "
                        "which does not exist in this scope",
                        entity_id=endpoint,
                        fact_id=f.id,
                    )
        if not p.facts:
            return t.UpsertResult()
        data, now = self._writable(scope), self._now()
        created = updated = unchanged = 0
        for f in p.facts:
            old = data.facts.get(f.id)
            if old is not None and _same_fact(old, f):
                unchanged += 1
                continue
            if old is not None:
                data.unlink(f.id)
            data.link(
                f.model_copy(
                    update={
                        **scope.as_dict(),
                        "valid_from": utc(f.valid_from),
                        "valid_to": utc(f.valid_to),
                        "created_at": old.created_at if old is not None else utc(f.created_at) or now,
                        "updated_at": utc(f.updated_at) or now,
                    }
                )
            )
            if old is None:
                created += 1
            else:
                updated += 1
        return t.UpsertResult(created=created, updated=updated, unchanged=unchanged)

    def _fact_invalidate(self, scope: Scope, p: t.FactInvalidateParams) -> t.CountResult:
        data, now, valid_to = self._data(scope), self._now(), utc(p.valid_to)
        assert valid_to is not None
        count = 0
        for fact_id in unique(p.ids):
            f = data.facts.get(fact_id)
            if f is None:
                continue
            # never before it starts: a fact invalidated before its valid_from ends at its valid_from
            end = max(valid_to, f.valid_from) if f.valid_from else valid_to
            # only ever shortens validity: a later valid_to never revives a closed fact
            if f.valid_to is None or f.valid_to > end:
                data.facts[fact_id] = f.model_copy(update={"valid_to": end, "updated_at": now})
                count += 1
        return t.CountResult(count=count)

    def _facts_from_roots(self, scope: Scope, p: t.FactsFromRootsParams) -> t.FactList:
        data = self._data(scope)
        as_of = utc(p.as_of) or self._now()
        found: dict[str, Fact] = {}
        for root in unique(p.roots):
            ids: set[str] = set()
            if p.direction in ("out", "both"):
                ids |= data.out.get(root, set())
            if p.direction in ("in", "both"):
                ids |= data.into.get(root, set())
            for fact_id in ids:
                f = data.facts[fact_id]
                if p.predicates and f.predicate not in p.predicates:
                    continue
                if not p.include_invalid and not valid_at(f, as_of):
                    continue
                if _ends_in_scope(data, f):
                    found[f.id] = f
        ordered = sorted(found.values(), key=fact_order)
        return t.FactList(facts=tuple(ordered[: p.limit]), truncated=len(ordered) > p.limit)

    # ---- traversals -------------------------------------------------------------------------------

    def _hop(
        self,
        data: _ScopeData,
        frontier: Sequence[str],
        *,
        direction: t.Direction,
        edge_types: Sequence[str],
        as_of: datetime,
        per_node: int | None = None,
    ) -> tuple[list[_Step], int]:
        """Steps from the frontier over valid entity-to-entity facts, and how many steps the
        per-node cut left out. Each frontier node keeps its first `per_node` edges per direction:
        outgoing in (predicate, object, id) order, incoming in (subject, predicate, id) order."""
        steps: list[_Step] = []
        cut = 0
        ways = {"out": ("out",), "in": ("in",), "both": ("out", "in")}[direction]
        for way in ways:
            for near in frontier:
                index = data.out if way == "out" else data.into
                edges = []
                for fact_id in index.get(near, set()):
                    f = data.facts[fact_id]
                    if f.object_id is None or not _ends_in_scope(data, f):
                        continue
                    if edge_types and f.predicate not in edge_types:
                        continue
                    if valid_at(f, as_of):
                        edges.append(f)
                if way == "out":
                    edges.sort(key=lambda f: (f.predicate, f.object_id or "", f.id))
                else:
                    edges.sort(key=lambda f: (f.subject_id, f.predicate, f.id))
                if per_node is not None and len(edges) > per_node:
                    cut += len(edges) - per_node
                    edges = edges[:per_node]
                for f in edges:
                    far = f.object_id if way == "out" else f.subject_id
                    assert far is not None
                    steps.append(_Step(near=near, far=far, fact=f))
        steps.sort(key=lambda s: (fact_order(s.fact), s.near))
        return steps, cut

    def _neighbourhood(self, scope: Scope, p: t.NeighbourhoodParams) -> t.Subgraph:
        """BFS to `depth` hops. `limit` caps the nodes beyond the roots; at each hop the new nodes
        with the smallest ids are kept. `omitted` counts the steps a limit left out: the
        per-direction cut plus edges to nodes over `limit`."""
        data = self._data(scope)
        as_of = utc(p.as_of) or self._now()
        roots = sorted(i for i in unique(p.roots) if i in data.entities)
        depth_of = dict.fromkeys(roots, 0)
        edges: dict[str, Fact] = {}
        dropped: set[str] = set()
        cut = 0
        frontier = roots
        for depth in range(1, p.depth + 1):
            if not frontier:
                break
            steps, hop_cut = self._hop(
                data, frontier, direction=p.direction, edge_types=p.edge_types, as_of=as_of,
                per_node=p.per_direction_limit,
            )  # fmt: skip
            cut += hop_cut
            reached = sorted({s.far for s in steps if s.far not in depth_of})
            room = p.limit - (len(depth_of) - len(roots))
            frontier = reached[: max(0, room)]
            depth_of.update(dict.fromkeys(frontier, depth))
            for s in steps:
                if s.far in depth_of:
                    edges.setdefault(s.fact.id, s.fact)
                else:
                    dropped.add(s.fact.id)
        omitted = cut + len(dropped - edges.keys())
        nodes = sorted(
            (t.Node(entity=data.entities[i], depth=d) for i, d in depth_of.items()),
            key=lambda n: (n.depth, n.entity.id),
        )
        return t.Subgraph(
            nodes=tuple(nodes),
            edges=tuple(sorted(edges.values(), key=fact_order)),
            truncated=omitted > 0,
            omitted=omitted,
        )

    def _shortest_path(self, scope: Scope, p: t.ShortestPathParams) -> t.PathResult:
        """Layered BFS from the source; among the shortest paths, the smallest sequence of ids."""
        data = self._data(scope)
        as_of = utc(p.as_of) or self._now()
        if not (usable(p.source) and usable(p.target)):
            return t.PathResult()
        if p.source not in data.entities or p.target not in data.entities:
            return t.PathResult()
        if p.source == p.target:
            return t.PathResult(nodes=(data.entities[p.source],))
        dist = {p.source: 0}
        forward: dict[str, list[_Step]] = {}  # steps from a node at distance d to one at d + 1
        frontier = [p.source]
        for depth in range(1, p.max_depth + 1):
            steps, _ = self._hop(data, frontier, direction=p.direction, edge_types=p.edge_types, as_of=as_of)
            for s in steps:
                if dist.setdefault(s.far, depth) == depth:
                    forward.setdefault(s.near, []).append(s)
            if p.target in dist:
                break
            frontier = sorted(n for n, d in dist.items() if d == depth)
            if not frontier:
                return t.PathResult()
        else:
            return t.PathResult()
        # nodes that still reach the target, found backwards from it
        length = dist[p.target]
        good = {p.target}
        for d in range(length - 1, -1, -1):
            good |= {
                n for n, nd in dist.items() if nd == d and any(s.far in good for s in forward.get(n, ()))
            }
        node_ids, path_edges = [p.source], []
        here = p.source
        for _ in range(length):
            # the smallest next id keeps the id sequence smallest; parallel edges in catalogue order
            step = min((s for s in forward[here] if s.far in good), key=lambda s: (s.far, fact_order(s.fact)))
            node_ids.append(step.far)
            path_edges.append(step.fact)
            here = step.far
        return t.PathResult(nodes=tuple(data.entities[i] for i in node_ids), edges=tuple(path_edges))

    # ---- scope-wide -------------------------------------------------------------------------------

    def _scope_stats(self, scope: Scope, p: t.NoParams) -> t.ScopeStats:
        data, now = self._data(scope), self._now()
        by_type: dict[str, int] = {}
        for e in data.entities.values():
            by_type[e.type] = by_type.get(e.type, 0) + 1
        return t.ScopeStats(
            entities=len(data.entities),
            facts=len(data.facts),
            valid_facts=sum(valid_at(f, now) for f in data.facts.values()),
            by_type=dict(sorted(by_type.items())),
        )

    def _scope_clear(self, scope: Scope, p: t.NoParams) -> t.CountResult:
        data = self._live().pop(_key(scope), None)
        if data is None:
            return t.CountResult()
        return t.CountResult(count=len(data.entities) + len(data.facts))


def _key(scope: Scope) -> Key:
    return (scope.tenant_id, scope.namespace, scope.graph_id)


def _check_owner(item: Entity | Fact, scope: Scope) -> None:
    """A record that names a scope must name the request's: a value never moves a write elsewhere."""
    for name, want in scope.as_dict().items():
        have = getattr(item, name)
        if have is not None and have != want:
            kind = type(item).__name__.lower()
            raise ScopeError(f"{kind} {item.id[:80]!r} carries a {name} other than the request's scope")


def _matching_value(
    e: Entity, field_name: t.ExactField, values: list[str], folded: dict[str, str]
) -> str | None:
    """The first given value that equals the entity's field (names and aliases casefolded)."""
    if field_name == "id":
        return e.id if e.id in values else None
    if field_name == "qualified_name":
        return e.qualified_name if e.qualified_name is not None and e.qualified_name in values else None
    keys = [e.name.casefold()] if field_name == "name" else [a.casefold() for a in e.aliases]
    hits = [k for k in folded if k in keys]  # `folded` keeps the order the values were given in
    return folded[hits[0]] if hits else None


def _same_fact(old: Fact, new: Fact) -> bool:
    return (
        all(getattr(old, f) == getattr(new, f) for f in _FACT_FIELDS)
        and old.valid_from == utc(new.valid_from)
        and old.valid_to == utc(new.valid_to)
    )


def _ends_in_scope(data: _ScopeData, f: Fact) -> bool:
    """Both endpoints are entities of this scope: an edge is only seen if its ends are."""
    return f.subject_id in data.entities and (f.object_id is None or f.object_id in data.entities)


def create_graph_store(settings: Settings) -> DictGraphStore:
    """Entry point `graphctx.graph_stores: dictgraph` (settings are not needed in memory)."""
    return DictGraphStore()
