"""Entity templates: upsert, hydrate, exact lookup, delete, hash pages."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from datetime import datetime
from typing import Any, TypeVar, cast

from gremlin_python.process.graph_traversal import GraphTraversal, __
from gremlin_python.process.traversal import Scope as Local

from graphctx.errors import InputError
from graphctx.kernel import rules as store_rules
from graphctx.kernel.rules import check_owner, unique, usable
from graphctx.kernel.templates import (
    DeleteResult,
    EntityFindExactParams,
    EntityHashesParams,
    EntityName,
    EntityNames,
    ExactField,
    ExactMatches,
    HashPage,
    UpsertResult,
)
from graphctx.model import Entity, IndexedHash
from graphctx.scope import Scope

from . import batch, codec, keys
from .binding import Binder
from .context import Ctx, chunks, id_cost, write_in_chunks
from .dialect import VERTEX_ID_FIELD

_E = TypeVar("_E", Entity, EntityName)
_ID_CHUNK = 200  # ids per lookup request (each id is bound once, with its scope-derived vertex id)


def get_by_ids(ctx: Ctx, scope: Scope, ids: Sequence[str]) -> list[Entity]:
    """In the order given, each once; ids absent from the scope are absent. One request per chunk."""
    return _by_ids(
        ctx, scope, ids, keys.ENTITY_KEYS, "entity.get_by_ids", lambda p: codec.entity(p, ctx.dialect)
    )


def names(ctx: Ctx, scope: Scope, ids: Sequence[str]) -> EntityNames:
    """get_by_ids narrowed to what a name needs: only those properties cross the wire."""
    return EntityNames(
        names=tuple(_by_ids(ctx, scope, ids, keys.NAME_KEYS, "entity.names", codec.entity_name))
    )


def _by_ids(
    ctx: Ctx,
    scope: Scope,
    ids: Sequence[str],
    fetched: Sequence[str],
    what: str,
    decode: Callable[[dict[str, Any]], _E],
) -> list[_E]:
    """The scope's entity vertices among `ids`, their `fetched` properties decoded, in the order of
    the ids, each once."""
    wanted = unique(ids)
    found: dict[str, _E] = {}
    for run in chunks(wanted, ctx, id_cost(scope)):
        for part in (run[i : i + _ID_CHUNK] for i in range(0, len(run), _ID_CHUNK)):
            b = Binder()
            t = ctx.dialect.entity_vertices(ctx.g, b, scope, part).value_map(*fetched)
            for props in ctx.read(t, b, what):
                item = decode(codec.flat(props))
                found[item.id] = item
    return [found[i] for i in wanted if i in found]


def upsert(ctx: Ctx, scope: Scope, entities: Sequence[Entity], now: datetime) -> UpsertResult:
    """Insert or replace by id; an entity equal in every stored field is left untouched. One read
    of what exists, then one idempotent write per chunk of changed entities."""
    for e in entities:
        check_owner(e, codec.owner(scope))
    state: dict[str, Entity] = {e.id: e for e in get_by_ids(ctx, scope, [e.id for e in entities])}
    stored = set(state)
    pending: dict[str, Entity] = {}
    created = updated = unchanged = 0
    for e in entities:  # in batch order, so a repeated id is compared with its earlier version
        row = state.get(e.id)
        if row is not None and codec.same_entity(row, e):
            unchanged += 1
            continue
        created_at = row.created_at if row is not None else e.created_at or now
        new = e.model_copy(update={"created_at": created_at, "updated_at": e.updated_at or now})
        state[e.id] = pending[e.id] = new
        if row is None:
            created += 1
        else:
            updated += 1
    if pending:
        items = list(pending.values())
        d = ctx.dialect
        if d.writes_rows() and all(d.vertex_id(scope, e.id) is not None for e in items):
            _write_entity_rows(ctx, scope, items, stored)
        else:  # the server assigns vertex ids, or the dialect writes item by item
            _write_entities(ctx, scope, items)
    return UpsertResult(created=created, updated=updated, unchanged=unchanged)


def _write_entity_rows(ctx: Ctx, scope: Scope, entities: Sequence[Entity], stored: set[str]) -> None:
    """The final versions as bound rows (batch.py), one traversal per request: the request's stored
    vertices are looked up once (by id, in the scope), each row finds its vertex there or adds it,
    drops the optional fields and aliases a stored vertex may hold, then sets every present field.
    Running a request twice leaves the same graph, so requests are retried on connection failures.
    Legs: the rows with one set of present fields and one `stored` flag."""
    d = ctx.dialect
    rows = []
    for e in entities:
        props = {k: v for k, v in codec.entity_props(e, scope, d).items() if v is not None}
        vid = d.vertex_id(scope, e.id)
        data = {**props, VERTEX_ID_FIELD: vid, **d.alias_fields(scope, e.id, codec.alias_keys(e.aliases))}
        # the vertex id is bound twice: in its row and in the request's lookup
        row = batch.Row(
            leg=(tuple(props), e.id in stored), data=data, extra=batch.encoded_size(vid), ids=(e.id,)
        )
        rows.append(row)

    def leg(b: Binder, key: Hashable, data: list[dict[str, Any]]) -> GraphTraversal:
        present, was_stored = cast(tuple[tuple[str, ...], bool], key)
        t = (
            batch.rows(b, data)
            .coalesce(
                __.select(batch.ENDS).select(batch.field(keys.SORT_KEY)).unfold(),
                d.new_vertex_from_row(b, scope),
            )
            .as_(batch.ELEMENT)
        )
        if was_stored:
            t = t.side_effect(__.properties(*keys.ENTITY_OPTIONAL, keys.ALIAS_KEY).drop())
        for key_ in present:
            t = t.property(key_, batch.field(key_))
        return d.set_aliases_from_row(t, b, scope, stored=was_stored)

    cost = batch.leg_costs(lambda key: leg(Binder(), key, []))
    for run in batch.row_runs(rows, ctx.max_request_bytes, cost):
        b = Binder()
        vids = [d.vertex_id(scope, i) for i in dict.fromkeys(i for row in run for i in row.ids)]
        found = d.scoped(__.V(b(vids)).has_label(d.vertex_label), b, scope)
        t = ctx.g.inject(0).side_effect(batch.lookup(found))
        for key, leg_rows in batch.by_leg(run).items():
            t = t.side_effect(leg(b, key, leg_rows))
        ctx.write(t.count(), b, "entity.upsert", idempotent=True)


def _write_entities(ctx: Ctx, scope: Scope, entities: Sequence[Entity]) -> None:
    b = Binder()
    d = ctx.dialect
    pieces = []
    for e in entities:
        one = __.coalesce(d.find_vertex(b, scope, e.id), d.new_vertex(b, scope, e.id))
        # optional fields and aliases a new version may lack go first, then every value is set
        one = one.side_effect(__.properties(*keys.ENTITY_OPTIONAL, keys.ALIAS_KEY).drop())
        for key, value in codec.entity_props(e, scope, d).items():
            if value is not None:
                one = one.property(key, b(value))
        one = d.set_aliases(one, b, scope, e.id, codec.alias_keys(e.aliases))
        pieces.append(one)
    write_in_chunks(ctx, b, pieces, "entity.upsert")


_FIELD_KEY: dict[ExactField, str] = {
    "id": keys.ENTITY_ID,
    "qualified_name": keys.QUALIFIED_NAME,
    "name": keys.NAME_KEY,
    "alias": keys.ALIAS_KEY,
}


def find_exact(ctx: Ctx, scope: Scope, p: EntityFindExactParams) -> ExactMatches:
    """Each entity once, under its best field (store_rules.find_exact). One request for every field
    asked for (more only if the probes are over the request budget), fetched before the ranking
    asks for the first field."""
    values = unique(p.values)
    folded = list(dict.fromkeys(v.casefold() for v in values))  # the probes store_rules gives name, alias
    asked = {f: folded if f in ("name", "alias") else values for f in p.fields} if values else {}
    # store_rules asks a field for limit + (entities matched so far, fewer than limit) at most
    ahead = 2 * p.limit
    fetched: dict[ExactField, list[Entity]] = {}

    def lookup(field: ExactField, probes: list[str], limit: int) -> list[tuple[Entity, int]]:
        if not fetched:
            fetched.update(_find_fields(ctx, scope, asked, ahead))
        found = fetched.get(field)
        if found is None or asked[field] != probes or (limit > ahead and len(found) == ahead):
            found = _find_fields(ctx, scope, {field: probes}, limit)[field]  # not what was fetched ahead
        return [(e, min(_probe_positions(field, e, probes))) for e in found[:limit]]

    return store_rules.find_exact(p, lookup)


def _find_fields(
    ctx: Ctx, scope: Scope, asked: dict[ExactField, list[str]], limit: int
) -> dict[ExactField, list[Entity]]:
    """Per field, the `limit` entities of smallest id whose field equals one of its probes, in id
    order: `g.inject(0).project(<field keys>)`, each by() a mid-traversal lookup, folded."""
    d = ctx.dialect
    cost = id_cost(scope)
    found: dict[ExactField, list[Entity]] = {}
    for run in chunks(list(asked.items()), ctx, lambda item: sum(map(cost, item[1]))):
        b = Binder()
        t = ctx.g.inject(0).project(*[_FIELD_KEY[field] for field, _ in run])
        for field, probes in run:
            if field == "id":
                leg = d.entity_vertices(__, b, scope, probes)
            else:
                leg = d.find_any(__, b, scope, _FIELD_KEY[field], probes)
            t = t.by(leg.order().by(keys.SORT_KEY).limit(b.long(limit)).value_map(*keys.ENTITY_KEYS).fold())
        (row,) = ctx.read(t, b, "entity.find_exact")
        for field, _ in run:
            entities = (codec.entity(codec.flat(props), d) for props in row[_FIELD_KEY[field]])
            found[field] = sorted(entities, key=lambda e: e.id)
    return found


def _probe_positions(field: ExactField, e: Entity, probes: list[str]) -> list[int]:
    if field == "id":
        have = {e.id}
    elif field == "qualified_name":
        have = {e.qualified_name or ""} if e.qualified_name is not None else set()
    elif field == "name":
        have = {e.name.casefold()}
    else:
        have = set(codec.alias_keys(e.aliases))
    return [i for i, probe in enumerate(probes) if probe in have]


def delete(ctx: Ctx, scope: Scope, ids: Sequence[str]) -> DeleteResult:
    """Count the entities and the facts touching them, then drop the vertices (their edges go with
    them). Two requests per chunk; the drop is not retried."""
    deleted = facts = 0
    for run in chunks(unique(ids), ctx, id_cost(scope)):
        b = Binder()
        count = (
            ctx.dialect.entity_vertices(ctx.g, b, scope, run)
            .fold()
            .project("entities", "facts")
            .by(__.count(Local.local))
            .by(ctx.dialect.scoped(__.unfold().both_e(), b, scope).dedup().count())
        )
        (counts,) = ctx.read(count, b, "entity.delete")
        if counts["entities"]:
            b = Binder()
            ctx.write(
                ctx.dialect.drop_entities(ctx.dialect.entity_vertices(ctx.g, b, scope, run)),
                b,
                "entity.delete",
                idempotent=False,
            )
        deleted += counts["entities"]
        facts += counts["facts"]
    return DeleteResult(deleted=deleted, facts_removed=facts)


def hashes(ctx: Ctx, scope: Scope, p: EntityHashesParams) -> HashPage:
    """One page in id order after `p.after`: the sort key makes the server's order code-point order."""
    if not usable(p.after):
        raise InputError("entity.hashes `after` must be valid text without NUL", field="after")
    b = Binder()
    t = ctx.dialect.scope_vertices(ctx.g, b, scope)
    if p.after:  # every id is greater than ""
        t = ctx.dialect.compare(t, b, keys.SORT_KEY, "gt", codec.sort_key(p.after))
    t = (
        t.order()
        .by(keys.SORT_KEY)
        .limit(b.long(p.limit))
        .project("id", "hash")
        .by(keys.ENTITY_ID)
        .by(keys.CONTENT_HASH)
    )
    rows = ctx.read(t, b, "entity.hashes")
    return HashPage(items=tuple(IndexedHash(id=r["id"], content_hash=r["hash"]) for r in rows))
