"""Backend-neutral rules of the graph templates that every store applies the same way: which lookup
values can match, who may own a written model, when a fact may be written, the catalogue's edge
order and how exact matches are ranked."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from graphctx.errors import NotFound, ScopeError
from graphctx.kernel.templates import EntityFindExactParams, ExactField, ExactMatch, ExactMatches
from graphctx.model import Entity, Fact

_SCOPE_FIELDS = ("tenant_id", "namespace", "graph_id")


def usable(value: object) -> bool:
    """A lookup value that could equal stored text: stored text is valid UTF-8 without NUL."""
    if not isinstance(value, str) or "\x00" in value:
        return False
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def unique(values: Iterable[str]) -> list[str]:
    """Order-preserving de-duplication, dropping values that cannot match stored text."""
    return [v for v in dict.fromkeys(values) if usable(v)]


def check_owner(item: Entity | Fact, owner: Sequence[str]) -> None:
    """A model that names a scope must name the request's scope (tenant_id, namespace, graph_id):
    a value never moves a write elsewhere."""
    for field, want in zip(_SCOPE_FIELDS, owner, strict=True):
        have = getattr(item, field)
        if have is not None and have != want:
            kind = type(item).__name__.lower()
            raise ScopeError(f"{kind} {item.id[:80]!r} carries a {field} other than the request's scope")


def endpoints(facts: Iterable[Fact]) -> list[str]:
    """The entity ids the facts hang between."""
    return [e for f in facts for e in (f.subject_id, f.object_id) if e is not None]


def require_endpoints(facts: Iterable[Fact], present: set[str]) -> None:
    """Every endpoint must exist in the scope; checked before any write, so a batch with a dangling
    endpoint changes nothing."""
    for f in facts:
        for endpoint in (f.subject_id, f.object_id):
            if endpoint is not None and endpoint not in present:
                raise NotFound(
                    f"fact {f.id[:80]!r} needs entity {endpoint[:80]!r}, which does not exist in this scope",
                    entity_id=endpoint,
                    fact_id=f.id,
                )


def fact_order(f: Fact) -> tuple[str, str, str, str]:
    """The catalogue's edge order; object ids are never empty, so '' sorts like SQL's NULL-first."""
    return (f.subject_id, f.predicate, f.object_id or "", f.id)


ExactLookup = Callable[[ExactField, list[str], int], Iterable[tuple[Entity, int]]]
"""(field, probes, limit) -> the `limit` entities of smallest id whose field equals one of the
probes, in id order, each with the position of the first probe it matched."""

_RANK: tuple[ExactField, ...] = ("id", "qualified_name", "name", "alias")
_CASEFOLDED = frozenset({"name", "alias"})


def find_exact(p: EntityFindExactParams, lookup: ExactLookup) -> ExactMatches:
    """Each entity once, under its best field; ordered by field rank, then entity id. Name and alias
    probes are casefolded; the answer names the first given value with that key. One lookup per
    field asked for, in rank order, until the page is full."""
    values = unique(p.values)
    folded: dict[str, str] = {}  # casefold key -> first given value with that key
    for v in values:
        folded.setdefault(v.casefold(), v)
    matches: list[ExactMatch] = []
    seen: set[str] = set()
    for field in (f for f in _RANK if f in p.fields):
        if len(matches) >= p.limit:
            break
        probes = list(folded) if field in _CASEFOLDED else values
        if not probes:
            continue
        # entities already matched under a better field are skipped, so fetch enough to fill the page
        for e, at in lookup(field, probes, p.limit + len(seen)):
            if e.id in seen:
                continue
            seen.add(e.id)
            probe = probes[at]
            value = folded[probe] if field in _CASEFOLDED else probe
            matches.append(ExactMatch.trusted(entity=e, field=field, value=value))
    return ExactMatches.trusted(matches=tuple(matches[: p.limit]))
