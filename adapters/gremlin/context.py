"""What a template translation needs from the store: the dialect, a traversal source to build
bytecode with, and request submission (each call is one round trip)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Protocol, TypeVar

from gremlin_python.process.graph_traversal import GraphTraversal, GraphTraversalSource, __
from gremlin_python.structure.io.graphsonV3d0 import GraphSONWriter

from graphctx.model import PREDICATES
from graphctx.scope import Scope

from . import keys
from .binding import Binder
from .dialect import GremlinDialect

X = TypeVar("X")

# the allowlist's own strings: an edge label in a traversal is always one of these objects
_LABELS: dict[str, str] = {p: p for p in PREDICATES}


class Ctx(Protocol):
    dialect: GremlinDialect
    g: GraphTraversalSource
    max_request_bytes: int

    def read(self, t: GraphTraversal, b: Binder, what: str) -> list[Any]:
        """Submit a read built with binder `b`; retried on connection failures."""

    def write(self, t: GraphTraversal, b: Binder, what: str, *, idempotent: bool) -> list[Any]:
        """Submit a write built with binder `b`; retried only when `idempotent`."""


def label(ctx: Ctx, predicate: str) -> str:
    return ctx.dialect.edge_label(_LABELS[predicate])


def labels(ctx: Ctx, predicates: Iterable[str]) -> list[str]:
    return [label(ctx, p) for p in predicates]


def id_cost(scope: Scope) -> Callable[[str], int]:
    """Estimated GraphSON bytes one id adds to a request: bound once or twice (a vertex id embeds
    the scope), JSON-escaped. Measured, with a margin."""
    scope_len = len(scope.tenant_id) + len(scope.namespace) + len(scope.graph_id)
    return lambda item: 3 * (len(json.dumps(item)) + scope_len) + 160


def write_in_chunks(ctx: Ctx, b: Binder, pieces: Sequence[GraphTraversal], what: str) -> None:
    """Submit `g.inject(0).sideEffect(piece)...count()` in as few requests as the budget allows; each
    piece is measured as serialized, so no request goes over (a lone piece over it goes alone). The
    pieces are idempotent, so the requests are retried on connection failures."""
    for run in piece_runs(ctx, pieces):
        t = ctx.g.inject(0)
        for piece in run:
            t = t.side_effect(piece)
        ctx.write(t.count(), b, what, idempotent=True)


def piece_runs(ctx: Ctx, pieces: Sequence[GraphTraversal]) -> Iterator[list[GraphTraversal]]:
    """Consecutive runs of anonymous traversals whose serialized size stays under the request budget
    (a lone piece over it goes alone)."""
    writer = GraphSONWriter()
    sized = [(piece, len(writer.write_object(piece.bytecode)) + 64) for piece in pieces]
    for run in chunks(sized, ctx, lambda item: item[1]):
        yield [piece for piece, _ in run]


def chunks(items: Sequence[X], ctx: Ctx, size: Callable[[X], int]) -> Iterator[list[X]]:
    """Consecutive runs of `items` whose estimated encoded size stays under the request budget."""
    measure = size
    budget = ctx.max_request_bytes - 1024  # the request envelope and the fixed steps
    run: list[X] = []
    used = 0
    for item in items:
        cost = measure(item)
        if run and used + cost > budget:
            yield run
            run, used = [], 0
        run.append(item)
        used += cost
    if run:
        yield run


def valid_at(ctx: Ctx, t: GraphTraversal, b: Binder, when: Any) -> GraphTraversal:
    """Keep fact edges valid at `when` (an encoded time): valid_from <= when < valid_to."""
    started = ctx.dialect.compare(__.identity(), b, keys.VALID_FROM, "lte", when)
    not_ended = ctx.dialect.compare(__.identity(), b, keys.VALID_TO, "gt", when)
    return t.or_(__.has_not(keys.VALID_FROM), started).or_(__.has_not(keys.VALID_TO), not_ended)


def not_literal(t: GraphTraversal) -> GraphTraversal:
    return t.has(keys.LITERAL, False)
