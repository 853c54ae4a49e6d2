"""Scope-wide templates: statistics and clear."""

from __future__ import annotations

from datetime import datetime

from gremlin_python.process.graph_traversal import __
from gremlin_python.process.traversal import Scope as Local

from graphctx.kernel.templates import CountResult, ScopeStats
from graphctx.scope import Scope

from . import keys
from .binding import Binder
from .context import Ctx, valid_at


def stats(ctx: Ctx, scope: Scope, now: datetime) -> ScopeStats:
    """One request: entities by type, facts, facts valid now (every fact leaves its subject once)."""
    d = ctx.dialect
    b = Binder()
    facts = d.scoped(__.unfold().out_e(), b, scope)
    valid = valid_at(ctx, d.scoped(__.unfold().out_e(), b, scope), b, d.encode_time(now))
    t = (
        d.scope_vertices(ctx.g, b, scope)
        .fold()
        .project("by_type", "facts", "valid")
        .by(__.unfold().group_count().by(keys.TYPE))
        .by(facts.count())
        .by(valid.count())
    )
    (row,) = ctx.read(t, b, "scope.stats")
    by_type = {str(k): int(v) for k, v in sorted(row["by_type"].items())}
    return ScopeStats(
        entities=sum(by_type.values()),
        facts=int(row["facts"]),
        valid_facts=int(row["valid"]),
        by_type=by_type,
    )


def clear(ctx: Ctx, scope: Scope) -> CountResult:
    """Count entities and facts, then drop the scope's vertices (their edges go with them). Two
    requests; the drop is not retried."""
    d = ctx.dialect
    b = Binder()
    t = (
        d.scope_vertices(ctx.g, b, scope)
        .fold()
        .project("entities", "facts")
        .by(__.count(Local.local))
        .by(d.scoped(__.unfold().out_e(), b, scope).count())
    )
    (row,) = ctx.read(t, b, "scope.clear")
    if row["entities"]:
        b = Binder()
        ctx.write(d.drop_entities(d.scope_vertices(ctx.g, b, scope)), b, "scope.clear", idempotent=False)
    return CountResult(count=int(row["entities"]) + int(row["facts"]))
