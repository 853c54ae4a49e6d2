"""Reads composed out of the template catalogue that several callers need: the scope's stored
(id, content hash) pairs in id order, and fixed-size batches for templates with a per-call cap."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

from graphctx.kernel.ports import GraphStore
from graphctx.kernel.templates import ENTITY_HASHES, EntityHashesParams
from graphctx.model import IndexedHash
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
