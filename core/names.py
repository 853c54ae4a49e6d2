"""Ambiguity-safe name resolution: exact id, then qualified name, then `path::name`, then a plain
name or alias, then a dotted tail of a qualified name (`Session.request`, `http.Client.Do`), each only
when it is unambiguous; otherwise the ranked candidates with the identity to use."""

from __future__ import annotations

from typing import Any

from graphctx import bounds
from graphctx.errors import AmbiguousName, NotFound
from graphctx.kernel.ports import GraphStore
from graphctx.kernel.templates import ENTITY_FIND_EXACT, EntityFindExactParams, ExactField
from graphctx.model import Entity
from graphctx.retrieval.isolation import Isolation
from graphctx.scope import Scope

MAX_CANDIDATES = 20
_TAIL_SCAN = 100
"""Entities read by their last name segment to match a dotted tail (the template's cap): when that
many share the name, a tail cannot be shown unique and is not resolved."""


def identity(entity: Entity, clash: bool) -> str:
    """The string that resolves to exactly this entity: qualified name or path::name when unique,
    else the id."""
    return entity.id if clash else entity.identity()


def _find(graph: GraphStore, scope: Scope, value: str, fields: tuple[ExactField, ...]) -> list[Entity]:
    params = EntityFindExactParams(values=(value,), fields=fields, limit=MAX_CANDIDATES + 1)
    isolation = Isolation(scope)
    return [
        m.entity
        for m in graph.run(ENTITY_FIND_EXACT, scope, params).matches
        if isolation.admit_entity(m.entity)
    ]


def candidates_of(entities: list[Entity]) -> list[dict[str, Any]]:
    by_identity: dict[str, int] = {}
    for e in entities:
        key = e.qualified_name or (f"{e.path}::{e.name}" if e.path else e.id)
        by_identity[key] = by_identity.get(key, 0) + 1
    out = []
    for e in sorted(entities, key=lambda e: (e.type, e.qualified_name or e.name, e.id)):
        key = e.qualified_name or (f"{e.path}::{e.name}" if e.path else e.id)
        cand: dict[str, Any] = {"identity": identity(e, by_identity[key] > 1), "name": e.name, "type": e.type}
        if e.path:
            cand["path"] = e.path
        if e.summary:
            cand["summary"] = e.summary[:120]
        out.append(cand)
    return out[:MAX_CANDIDATES]


def resolve(graph: GraphStore, scope: Scope, name: str) -> Entity:
    name = bounds.check_selector("name", name)
    for fields in (("id",), ("qualified_name",)):
        found = _find(graph, scope, name, fields)
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            raise AmbiguousName(name, candidates_of(found))
    if "::" in name:
        path, _, plain = name.rpartition("::")
        found = [e for e in _find(graph, scope, plain, ("name",)) if e.path and _same_path(e.path, path)]
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            raise AmbiguousName(name, candidates_of(found))
    for fields in (("name",), ("alias",)):
        found = _find(graph, scope, name, fields)  # type: ignore[arg-type]
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            raise AmbiguousName(name, candidates_of(found))
    if "." in name and "::" not in name:
        found, complete = _by_tail(graph, scope, name)
        if len(found) > 1:
            raise AmbiguousName(name, candidates_of(found))
        if complete and found:
            return found[0]
        if not complete:
            raise NotFound(
                f"no unique entity named {name[:80]!r}: over {_TAIL_SCAN - 1} entities share its last "
                "name; give the qualified name",
                name=name[:80],
            )
    raise NotFound(f"no entity named {name[:80]!r} in this scope", name=name[:80])


def _plain(qualified: str) -> str:
    """Go's method names without their receiver's punctuation: `net/http.(*Client).Do` ->
    `net/http.Client.Do`, so `Client.Do` is its tail as it is Python's `Session.request`'s."""
    return qualified.replace("(*", "").replace("(", "").replace(")", "")


def _by_tail(graph: GraphStore, scope: Scope, name: str) -> tuple[list[Entity], bool]:
    """Entities whose qualified name ends with `name` at a `.` or `/` boundary, and whether every
    entity with that last segment was read."""
    tail = _plain(name).strip(".")
    last = tail.rsplit(".", 1)[-1]
    if not last or tail == last:
        return [], True
    params = EntityFindExactParams(values=(last,), fields=("name",), limit=_TAIL_SCAN)
    matches = graph.run(ENTITY_FIND_EXACT, scope, params).matches
    isolation = Isolation(scope)
    found = []
    for m in matches:
        q = _plain(m.entity.qualified_name or "")
        if (q == tail or q.endswith(("." + tail, "/" + tail))) and isolation.admit_entity(m.entity):
            found.append(m.entity)
    return found, len(matches) < _TAIL_SCAN


def _same_path(stored: str, given: str) -> bool:
    return stored == given or stored.endswith("/" + given.lstrip("/"))
