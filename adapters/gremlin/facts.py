"""Fact templates: upsert, invalidate, facts from roots."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from datetime import UTC, datetime
from typing import Any, cast

from gremlin_python.process.graph_traversal import GraphTraversal, __

from graphctx.kernel.rules import check_owner, endpoints, fact_order, require_endpoints, unique
from graphctx.kernel.templates import (
    CountResult,
    FactInvalidateParams,
    FactList,
    FactsFromRootsParams,
    UpsertResult,
)
from graphctx.model import Fact, derived_fact_ids
from graphctx.scope import Scope

from . import batch, codec, keys
from .binding import Binder
from .context import Ctx, chunks, id_cost, label, labels, not_literal, valid_at, write_in_chunks
from .dialect import EDGE_ID_FIELD, SUBJECT_FIELD, TARGET_FIELD


def existing_ids(ctx: Ctx, scope: Scope, ids: Sequence[str]) -> set[str]:
    out: set[str] = set()
    for run in chunks(unique(ids), ctx, id_cost(scope)):
        b = Binder()
        t = ctx.dialect.entity_vertices(ctx.g, b, scope, run).values(keys.ENTITY_ID)
        out.update(ctx.read(t, b, "fact.upsert"))
    return out


def stored_facts(ctx: Ctx, scope: Scope, ids: Sequence[str], what: str) -> dict[str, Fact]:
    out: dict[str, Fact] = {}
    for run in chunks(unique(ids), ctx, id_cost(scope)):
        b = Binder()
        t = ctx.dialect.fact_edges(ctx.g, b, scope, run).value_map(*keys.FACT_KEYS)
        for props in ctx.read(t, b, what):
            f = codec.fact(codec.flat(props), ctx.dialect)
            out[f.id] = f
    return out


def stored_versions(ctx: Ctx, scope: Scope, facts: Sequence[Fact], what: str) -> dict[str, Fact]:
    """The stored version of each fact's id. With supplied edge ids, by id. Else each fact is first
    looked for at its subject under its predicate's label: one request per chunk, a leg per
    predicate reading its edges at the chunk's subjects that have a fact of it, keeping those whose
    fact id the chunk asks for (bound once, as a list). An id derived from the fact's content
    (fact.upsert refuses a derived-form id of other content) can hang nowhere else, so only the other
    ids not found there go through the scope-wide `fact_edges` lookup, which costs as much as the
    scope has facts on some servers (HugeGraph)."""
    d = ctx.dialect
    ids = unique(f.id for f in facts)
    if all(d.edge_id(scope, i) is not None for i in ids):
        return stored_facts(ctx, scope, ids, what)
    out: dict[str, Fact] = {}
    cost = id_cost(scope)
    ordered = sorted(facts, key=lambda f: (f.predicate, f.subject_id))  # a pair's facts in one request
    for run in chunks(ordered, ctx, lambda f: cost(f.subject_id) + cost(f.id)):
        b = Binder()
        by_label: dict[str, list[str]] = {}
        for f in run:
            by_label.setdefault(f.predicate, []).append(f.subject_id)
        # one leg per predicate, from the subjects that have a fact of it here: every (subject,
        # predicate) pair is read once (on HugeGraph a range of the vertex's edges of that label)
        legs = [
            d.entity_vertices(__, b, scope, unique(subjects)).out_e(label(ctx, predicate))
            for predicate, subjects in by_label.items()
        ]
        t = ctx.g.inject(0).union(*legs)
        t = b.within(d.scoped(t, b, scope), keys.FACT_ID, unique(f.id for f in run))
        for props in ctx.read(t.value_map(*keys.FACT_KEYS), b, what):
            f = codec.fact(codec.flat(props), d)
            out[f.id] = f
    elsewhere = [f.id for f in facts if f.id not in out and f.id not in derived_fact_ids(f)]
    if elsewhere:
        out.update(stored_facts(ctx, scope, elsewhere, what))
    return out


def _fact_at(
    ctx: Ctx, b: Binder, scope: Scope, fact_id: str, subject_id: str, predicate: str
) -> GraphTraversal:
    """Anonymous: the scope's edge of `fact_id` leaving `subject_id` with `predicate`'s label."""
    d = ctx.dialect
    edges = d.fact_edge(d.find_vertex(b, scope, subject_id).out_e(label(ctx, predicate)), b, scope, fact_id)
    return d.scoped(edges, b, scope)


def upsert(ctx: Ctx, scope: Scope, facts: Sequence[Fact], now: datetime) -> UpsertResult:
    """Both endpoints must exist in the scope (checked before any write, so a dangling endpoint
    changes nothing). Reads: endpoints, stored versions; then one idempotent write per chunk."""
    for f in facts:
        check_owner(f, codec.owner(scope))
    ends = endpoints(facts)
    require_endpoints(facts, existing_ids(ctx, scope, ends) if ends else set())
    stored = stored_versions(ctx, scope, facts, "fact.upsert") if facts else {}
    state = dict(stored)
    pending: dict[str, tuple[Fact, Fact | None]] = {}  # id -> (new version, version on the server)
    created = updated = unchanged = 0
    for f in facts:
        row = state.get(f.id)
        if row is not None and codec.same_fact(row, f):
            unchanged += 1
            continue
        created_at = row.created_at if row is not None else f.created_at or now
        new = f.model_copy(update={"created_at": created_at, "updated_at": f.updated_at or now})
        state[f.id] = new
        pending[f.id] = (new, stored.get(f.id))
        if row is None:
            created += 1
        else:
            updated += 1
    if pending:
        items = list(pending.values())
        d = ctx.dialect
        ends = [f.object_id or f.subject_id for f, _ in items] + [f.subject_id for f, _ in items]
        if d.writes_rows() and all(d.vertex_id(scope, i) is not None for i in ends):
            _write_fact_rows(ctx, scope, items)
        else:  # the server assigns vertex ids, or the dialect writes item by item
            _write_facts(ctx, scope, items)
    return UpsertResult(created=created, updated=updated, unchanged=unchanged)


def _write_fact_rows(ctx: Ctx, scope: Scope, run: Sequence[tuple[Fact, Fact | None]]) -> None:
    """The new versions as bound rows (batch.py), one traversal per request: first what must go (the
    stored edges of these fact ids: by edge id when the dialect supplies them, else the stored
    version's edge at its subject, and at the new place unless an add there replaces it), then the
    request's endpoints are looked up once (by id, in the scope), then each leg adds its rows' edges
    between them. Running a request twice leaves the same graph, so requests are retried on
    connection failures. Legs: the rows with one predicate and one set of present fields."""
    d = ctx.dialect
    dropper = Binder("d")  # the per-fact drops are built once, with binding names of their own
    by_id = all(d.edge_id(scope, f.id) is not None for f, _ in run)
    rows = []
    for f, old in run:
        props = {
            k: v
            for k, v in codec.fact_props(f, scope, d).items()
            if v is not None and k not in d.edge_identity_keys
        }
        pair = (f.subject_id, f.object_id or f.subject_id)  # a value-only fact loops on its subject
        # the ends by sort key, as batch.lookup keys the request's vertices
        ends = {SUBJECT_FIELD: codec.sort_key(pair[0]), TARGET_FIELD: codec.sort_key(pair[1])}
        data = {**props, **ends, **d.edge_fields(scope, f.id)}
        before = []
        if not by_id:
            if old is not None or not d.edge_add_replaces:
                before.append(_drop_edge(ctx, dropper, scope, f.subject_id, f.predicate, f.id))
            if old is not None and (old.subject_id, old.predicate) != (f.subject_id, f.predicate):
                before.append(_drop_edge(ctx, dropper, scope, old.subject_id, old.predicate, f.id))
        # both endpoints are bound again in the request's lookup, an edge id in its drop; drops measured
        bound_again = [d.vertex_id(scope, i) for i in pair] + list(d.edge_fields(scope, f.id).values())
        extra = sum(map(batch.encoded_size, bound_again)) + sum(map(batch.sized, before))
        rows.append(
            batch.Row(leg=(f.predicate, tuple(props)), data=data, extra=extra, before=before, ids=pair)
        )

    def leg(b: Binder, key: Hashable, data: list[dict[str, Any]]) -> GraphTraversal:
        predicate, present = cast(tuple[str, tuple[str, ...]], key)
        t = (
            batch.rows(b, data)
            .add_e(label(ctx, predicate))
            .from_(__.select(batch.ENDS).select(batch.field(SUBJECT_FIELD)).unfold())
            .to(__.select(batch.ENDS).select(batch.field(TARGET_FIELD)).unfold())
        )
        t = d.edge_identity_from_row(t, b, scope)
        for key_ in present:
            t = t.property(key_, batch.field(key_))
        return t

    cost = batch.leg_costs(lambda key: leg(Binder(), key, []))
    for part in batch.row_runs(rows, ctx.max_request_bytes, cost):
        b = Binder()
        if by_id:  # every stored edge of these ids, wherever it hangs, goes first
            eids = [row.data[EDGE_ID_FIELD] for row in part]
            t = d.scoped(ctx.g.E(b(eids)), b, scope).drop().fold()
        else:
            t = ctx.g.inject(0)
        for row in part:
            for piece in row.before:
                t = t.side_effect(piece)
        vids = [d.vertex_id(scope, i) for i in dict.fromkeys(i for row in part for i in row.ids)]
        t = t.side_effect(batch.lookup(d.scoped(__.V(b(vids)).has_label(d.vertex_label), b, scope)))
        for key, leg_rows in batch.by_leg(part).items():
            t = t.side_effect(leg(b, key, leg_rows))
        ctx.write(t.count(), b, "fact.upsert", idempotent=True)


def _drop_edge(
    ctx: Ctx, b: Binder, scope: Scope, subject_id: str, predicate: str, fact_id: str
) -> GraphTraversal:
    return _fact_at(ctx, b, scope, fact_id, subject_id, predicate).drop()


def _write_facts(ctx: Ctx, scope: Scope, run: Sequence[tuple[Fact, Fact | None]]) -> None:
    """Drop any edge of the fact id (where the stored and the new version hang), then add the new
    version: running it twice leaves the same graph, so it is safe to retry."""
    b = Binder()
    d = ctx.dialect
    pieces = []
    for f, old in run:
        # one piece per fact: its drops and its add always travel in the same request
        one = __.side_effect(_drop_edge(ctx, b, scope, f.subject_id, f.predicate, f.id))
        if old is not None and (old.subject_id, old.predicate) != (f.subject_id, f.predicate):
            one = one.side_effect(_drop_edge(ctx, b, scope, old.subject_id, old.predicate, f.id))
        target = d.find_vertex(b, scope, f.object_id or f.subject_id)  # a value-only fact loops
        add = d.edge_identity(
            d.find_vertex(b, scope, f.subject_id).add_e(label(ctx, f.predicate)).to(target), b, scope, f.id
        )
        for key, value in codec.fact_props(f, scope, d).items():
            if value is not None and key not in d.edge_identity_keys:
                add = add.property(key, b(value))
        pieces.append(one.side_effect(add))
    write_in_chunks(ctx, b, pieces, "fact.upsert")


def invalidate(ctx: Ctx, scope: Scope, p: FactInvalidateParams, now: datetime) -> CountResult:
    """Only ever shortens validity: a later valid_to never revives a closed fact; and never ends a
    fact before it starts (one invalidated before its valid_from ends at its valid_from). A read finds
    each fact's own end; then one request per end and chunk, not retried (its count is only right
    once), still filtered on the server so a concurrent shorter end is kept."""
    d = ctx.dialect
    stamp = d.encode_time(now)
    requested = p.valid_to if p.valid_to.tzinfo else p.valid_to.replace(tzinfo=UTC)
    by_end: dict[datetime, list[str]] = {}
    for f in stored_facts(ctx, scope, p.ids, "fact.invalidate").values():
        end = max(requested, f.valid_from) if f.valid_from else requested
        if f.valid_to is None or f.valid_to > end:
            by_end.setdefault(end, []).append(f.id)
    count = 0
    for end_at, ids in sorted(by_end.items()):
        end = d.encode_time(end_at)
        for run in chunks(ids, ctx, id_cost(scope)):
            b = Binder()
            t = (
                d.fact_edges(ctx.g, b, scope, run)
                .or_(__.has_not(keys.VALID_TO), d.compare(__.identity(), b, keys.VALID_TO, "gt", end))
                .property(keys.VALID_TO, b(end))
                .property(keys.UPDATED_AT, b(stamp))
                .count()
            )
            (n,) = ctx.write(t, b, "fact.invalidate", idempotent=False)
            count += n
    return CountResult(count=count)


def fact_edges_from(
    ctx: Ctx,
    b: Binder,
    scope: Scope,
    direction: str,
    predicates: Sequence[str],
    when: object | None,
    *,
    literals: bool = False,
) -> GraphTraversal:
    """Anonymous, from entity vertices: the fact edges leaving (`out`) or entering (`in`) them, of the
    allowed predicates (none: all), valid at `when` (None: any), whose far endpoint is an entity of
    the scope. Value-only facts (self-loops) only with `literals`, and only leaving their subject."""
    d = ctx.dialect
    step = __.out_e(*labels(ctx, predicates)) if direction == "out" else __.in_e(*labels(ctx, predicates))
    t = d.scoped(step, b, scope)
    if direction == "in" or not literals:
        t = not_literal(t)
    if when is not None:
        t = valid_at(ctx, t, b, when)
    far = __.in_v() if direction == "out" else __.out_v()
    return t.where(d.scoped(far.has_label(d.vertex_label), b, scope))


def from_roots(ctx: Ctx, scope: Scope, p: FactsFromRootsParams, now: datetime) -> FactList:
    """One request: both directions unioned, deduplicated, ordered by the catalogue's edge order on
    the server and cut at limit + 1 (the extra one tells whether the answer was cut)."""
    roots = unique(p.roots)
    if not roots:
        return FactList()
    d = ctx.dialect
    b = Binder()
    when = None if p.include_invalid else d.encode_time(p.as_of or now)
    legs = [
        fact_edges_from(ctx, b, scope, direction, p.predicates, when, literals=True)
        for direction in {"out": ("out",), "in": ("in",), "both": ("out", "in")}[p.direction]
    ]
    t = d.entity_vertices(ctx.g, b, scope, roots)
    t = t.union(*legs) if len(legs) > 1 else t.flat_map(legs[0])
    t = t.dedup().order().by(keys.ORDER_KEY).limit(b.long(p.limit + 1)).value_map(*keys.FACT_KEYS)
    found = [codec.fact(codec.flat(props), d) for props in ctx.read(t, b, "fact.from_roots")]
    ordered = sorted(found, key=fact_order)
    return FactList(facts=tuple(ordered[: p.limit]), truncated=len(ordered) > p.limit)
