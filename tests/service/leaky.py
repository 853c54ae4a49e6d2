"""Stores that leak, for the core's isolation re-check: each wraps a real store and adds what a real
backend with a scope bug would add to its answers. Each counts the foreign records it handed out, so
a test can prove the leak happened (a test whose double leaked nothing proves nothing).

* `ScopeBlindGraph`: every read also answers from other scopes (their records keep their own
  scope), appended after the scope's own answer; a shortest path may take a foreign shortcut.
* `SecondHopBlindGraph`: traversals bind the scope on the first hop only; later hops follow any
  scope's edges, and the far ends are hydrated in the caller's scope (colliding ids look like own).
* `ScopeBlindIndex`: a lexical or vector index whose search also returns other scopes' hits.
* `RelabellingIndex`: worse, it stamps the caller's scope on the other scopes' hits.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from graphctx.kernel import templates as t
from graphctx.kernel import walk
from graphctx.kernel.ports import GraphStore
from graphctx.model import Entity, Fact
from graphctx.scope import Scope

READS = frozenset(
    {
        t.ENTITY_GET.name,
        t.ENTITY_NAMES.name,
        t.ENTITY_FIND_EXACT.name,
        t.FACTS_FROM_ROOTS.name,
        t.NEIGHBOURHOOD.name,
        t.SHORTEST_PATH.name,
    }
)


class _Wrapper:
    def __init__(self, inner: Any, foreign: Sequence[Scope]) -> None:
        self.inner, self.foreign = inner, list(foreign)
        self.leaked = 0

    def __getattr__(self, item: str) -> Any:
        return getattr(self.inner, item)

    def others(self, scope: Scope) -> list[Scope]:
        return [s for s in self.foreign if s != scope]

    def count(self, items: Sequence[Any], scope: Scope) -> None:
        own = (scope.tenant_id, scope.namespace, scope.graph_id)
        self.leaked += sum(1 for i in items if (i.tenant_id, i.namespace, i.graph_id) != own)


class ScopeBlindGraph(_Wrapper):
    def run(self, template: t.Template[Any, Any], scope: Scope, params: Any) -> Any:
        own = self.inner.run(template, scope, params)
        if template.name not in READS:
            return own
        answers = [self.inner.run(template, s, params) for s in self.others(scope)]
        if isinstance(own, t.EntityList):
            extra: list[Any] = [e for a in answers for e in a.entities]
            self.count(extra, scope)
            return t.EntityList(entities=(*own.entities, *extra))
        if isinstance(own, t.EntityNames):
            extra = [n for a in answers for n in a.names]
            self.count(extra, scope)
            return t.EntityNames(names=(*own.names, *extra))
        if isinstance(own, t.ExactMatches):
            extra = [m for a in answers for m in a.matches]
            self.count([m.entity for m in extra], scope)
            return t.ExactMatches(matches=(*own.matches, *extra))
        if isinstance(own, t.FactList):
            extra = [f for a in answers for f in a.facts]
            self.count(extra, scope)
            return own.model_copy(update={"facts": (*own.facts, *extra)})
        if isinstance(own, t.Subgraph):
            nodes = [n for a in answers for n in a.nodes]
            edges = [e for a in answers for e in a.edges]
            self.count([n.entity for n in nodes] + edges, scope)
            return own.model_copy(update={"nodes": (*own.nodes, *nodes), "edges": (*own.edges, *edges)})
        shortcut = min((a for a in answers if a.nodes), key=lambda a: len(a.nodes), default=None)
        if shortcut is not None and (not own.nodes or len(shortcut.nodes) < len(own.nodes)):
            self.count([*shortcut.nodes, *shortcut.edges], scope)
            return shortcut
        return own


class SecondHopBlindGraph(_Wrapper):
    """Re-binds the scope on the first hop only (a Gremlin `both()` after the first step without
    `has('tenant_id', ...)`, an SQL join that binds the scope on the first hop's rows only)."""

    def run(self, template: t.Template[Any, Any], scope: Scope, params: Any) -> Any:
        if template.name == t.NEIGHBOURHOOD.name:
            return walk.neighbourhood(
                params.roots,
                depth=params.depth,
                limit=params.limit,
                hop=self._hop(scope, params.direction, params.edge_types, params.as_of),
                hydrate=lambda ids: self._get(scope, ids),
            )
        if template.name == t.SHORTEST_PATH.name:
            return walk.shortest_path(
                params.source,
                params.target,
                max_depth=params.max_depth,
                hop=self._hop(scope, params.direction, params.edge_types, params.as_of),
                hydrate=lambda ids: self._get(scope, ids),
            )
        return self.inner.run(template, scope, params)

    def _get(self, scope: Scope, ids: Sequence[str]) -> tuple[Entity, ...]:
        return tuple(self.inner.run(t.ENTITY_GET, scope, t.EntityGetParams(ids=tuple(ids))).entities)

    def _hop(self, scope: Scope, direction: Any, edge_types: Any, as_of: Any) -> Any:
        calls = {"n": 0}

        def hop(frontier: Sequence[str]) -> walk.Hop:
            calls["n"] += 1
            scopes = [scope] if calls["n"] == 1 else [scope, *self.others(scope)]
            found = {e.id for e in self._get(scope, frontier)} if calls["n"] == 1 else None
            steps: dict[tuple[Any, ...], walk.Step] = {}
            for s in scopes:
                for fact in self._facts(s, frontier, direction, edge_types, as_of):
                    for near, far in _ends(fact, direction):
                        if near in frontier:
                            key = (near, far, fact.id, fact.tenant_id, fact.namespace, fact.graph_id)
                            steps[key] = walk.Step(near, far, fact)
            ordered = sorted(steps.values(), key=walk.step_order)
            self.count([st.fact for st in ordered], scope)
            return walk.Hop(ordered, 0, found)

        return hop

    def _facts(
        self, scope: Scope, roots: Sequence[str], direction: Any, edge_types: Any, as_of: Any
    ) -> tuple[Fact, ...]:
        params = t.FactsFromRootsParams(
            roots=tuple(roots), direction=direction, predicates=tuple(edge_types), as_of=as_of, limit=1000
        )
        facts = self.inner.run(t.FACTS_FROM_ROOTS, scope, params).facts
        return tuple(f for f in facts if f.object_id is not None)


def _ends(fact: Fact, direction: str) -> list[tuple[str, str]]:
    assert fact.object_id is not None
    out = []
    if direction in ("out", "both"):
        out.append((fact.subject_id, fact.object_id))
    if direction in ("in", "both"):
        out.append((fact.object_id, fact.subject_id))
    return out


class ScopeBlindIndex(_Wrapper):
    """Lexical or vector: the search runs without its scope clause; foreign hits come after own ones."""

    def search(self, scope: Scope, query: Any, k: int) -> list[Any]:
        own = self.inner.search(scope, query, k)
        extra = [h for s in self.others(scope) for h in self.inner.search(s, query, k)]
        self.count(extra, scope)
        return [*own, *extra]


class RelabellingIndex(ScopeBlindIndex):
    """Other scopes' hits stamped with the caller's scope: only hydration can keep them out."""

    def search(self, scope: Scope, query: Any, k: int) -> list[Any]:
        own = self.inner.search(scope, query, k)
        extra = [h for s in self.others(scope) for h in self.inner.search(s, query, k)]
        self.leaked += len(extra)
        return [*own, *(h.model_copy(update=scope.as_dict()) for h in extra)]


def graph_of(store: GraphStore) -> GraphStore:
    """The innermost real store of a chain of wrappers."""
    while isinstance(store, _Wrapper):
        store = store.inner
    return store
