"""Reads composed out of the template catalogue that several callers need: the scope's stored
(id, content hash) pairs in id order, and fixed-size batches for templates with a per-call cap."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

from graphctx.kernel.ports import GraphStore
from graphctx.kernel.templates import (
    ENTITY_HASHES,
    FACTS_FROM_ROOTS,
    Direction,
    EntityHashesParams,
    FactsFromRootsParams,
)
from graphctx.model import Fact, IndexedHash
from graphctx.scope import Scope

T = TypeVar("T")

HASH_PAGE = 5000
"""entity.hashes' own clamp: the fewest requests for a full scan."""


def batches(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def stored_hashes(
    graph: GraphStore,
    scope: Scope,
    prefix: str = "",
    *,
    page: int = HASH_PAGE,
    progress: Callable[[int], None] | None = None,
) -> Iterator[IndexedHash]:
    """The scope's entities whose id starts with `prefix`, in id order, one request per page; it
    stops at the first id past the prefix (ids are prefix-enumerable). `progress` gets each page's size."""
    after = prefix
    while True:
        items = graph.run(ENTITY_HASHES, scope, EntityHashesParams(after=after, limit=page)).items
        if progress:
            progress(len(items))
        inside = [item for item in items if item.id.startswith(prefix)]
        yield from inside
        if len(inside) < len(items) or len(items) < page:
            return
        after = items[-1].id


ROOTS_PER_CALL = 64
"""fact.from_roots' own bound on roots."""


def facts_of(
    graph: GraphStore,
    scope: Scope,
    roots: Sequence[str],
    predicates: Sequence[str],
    direction: Direction,
) -> list[Fact]:
    """Every fact (history included) of these predicates leaving (`out`) or entering (`in`) the
    roots. A call cut at the template's fact limit is split until each root is read on its own; a
    single root with more facts than the limit yields the limit's worth (the caller says which)."""
    out: dict[str, Fact] = {}
    todo = [list(chunk) for chunk in batches(sorted(set(roots)), ROOTS_PER_CALL)]
    preds = tuple(sorted(set(predicates)))
    while todo:
        chunk = todo.pop()
        params = FactsFromRootsParams(
            roots=tuple(chunk), predicates=preds, direction=direction, include_invalid=True
        )
        found = graph.run(FACTS_FROM_ROOTS, scope, params)
        if found.truncated and len(chunk) > 1:
            half = len(chunk) // 2
            todo += [chunk[:half], chunk[half:]]
            continue
        out.update((f.id, f) for f in found.facts)
    return list(out.values())
