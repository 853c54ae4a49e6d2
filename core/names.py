"""Ambiguity-safe name resolution: exact id, then qualified name, then `path::name`, then a plain
name or alias, then a name a package exports (`pkg.get` for `pkg.api.get`), then a dotted tail of a
qualified name (`Session.request`, `http.Client.Do`), each only when it is unambiguous; otherwise
the ranked candidates with the identity to use."""

from __future__ import annotations

from typing import Any

from graphctx import bounds
from graphctx.errors import AmbiguousName, NotFound
from graphctx.kernel.ports import GraphStore
from graphctx.kernel.reads import facts_of
from graphctx.kernel.templates import ENTITY_FIND_EXACT, EntityFindExactParams, ExactField
from graphctx.model import EdgeKind, Entity
from graphctx.retrieval.isolation import Isolation
from graphctx.scope import Scope

MAX_CANDIDATES = 20
MAX_EXPORT_HOPS = 3
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
        found = _through_exports(graph, scope, name)
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            raise AmbiguousName(name, candidates_of(found))
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


def _through_exports(graph: GraphStore, scope: Scope, name: str, hops: int = 0) -> list[Entity]:
    """`pkg.get` where the package `pkg` exports `get` from `pkg.api` (an `exports` edge the code
    indexer records): the definition; `pkg.Client.fetch` the member of the exported class. The
    longest package prefix is tried first; a name re-exported through several packages takes at
    most MAX_EXPORT_HOPS of them. Read from the definitions of that name (a few edges each), not
    from the package (which may export hundreds)."""
    parts = name.split(".")
    isolation = Isolation(scope)
    for cut in range(len(parts) - 1, 0, -1):
        head, member, rest = ".".join(parts[:cut]), parts[cut], parts[cut + 1 :]
        packages = {e.id for e in _find(graph, scope, head, ("qualified_name",)) if e.type == "module"}
        if not packages:
            continue
        params = EntityFindExactParams(values=(member,), fields=("name",), limit=_TAIL_SCAN)
        named = {
            m.entity.id: m.entity
            for m in graph.run(ENTITY_FIND_EXACT, scope, params).matches
            if m.entity.name == member and isolation.admit_entity(m.entity)
        }
        edges = facts_of(graph, scope, list(named), [EdgeKind.EXPORTS.value], "in") if named else []
        exported = sorted(
            {named[f.object_id].id: named[f.object_id] for f in edges
             if f.subject_id in packages and f.object_id in named}.values(),
            key=lambda e: e.id,
        )  # fmt: skip
        if not exported:
            continue
        if not rest or len(exported) > 1:
            return exported
        inner = f"{exported[0].qualified_name}.{'.'.join(rest)}"
        found = _find(graph, scope, inner, ("qualified_name",))
        if not found and hops < MAX_EXPORT_HOPS:
            found = _through_exports(graph, scope, inner, hops + 1)
        return found
    return []


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
