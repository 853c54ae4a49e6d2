"""The mandatory isolation re-check. Every hit, entity and fact is compared with the caller's scope
before it contributes anything; a backend that ignored its filter must not leak. Cannot be disabled.

A traversal answer is re-checked as a whole: a node is kept only when the roots still reach it
through edges and nodes that passed the check, so a node reached only through a rejected edge (or
a rejected node) is dropped too, and a path is reported only when every node and edge of it passes
and they still form one chain from the source to the target."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from graphctx.kernel.ports import LexicalHit, VectorHit
from graphctx.kernel.templates import Direction, EntityName, Node, PathResult, Subgraph
from graphctx.model import Entity, Fact
from graphctx.scope import Scope


@dataclass(frozen=True)
class Admitted:
    """What a traversal answer keeps after the re-check. `clean` is False when the check dropped
    anything: the store's own figures (`omitted`, `truncated`) then count foreign data and are not
    passed on."""

    nodes: list[Node]
    edges: list[Fact]
    clean: bool
    truncated: bool = False
    omitted: int = 0

    def limit_note(self, what: str) -> dict[str, Any] | None:
        """The omission record of the store's limit cut, if it cut anything; its count only when the
        answer was clean (a count of foreign edges would tell the caller that other scopes match)."""
        if not self.truncated:
            return None
        note: dict[str, Any] = {"what": what, "reason": "limit"}
        if self.clean:
            note["count"] = self.omitted
        return note


class Isolation:
    def __init__(self, scope: Scope) -> None:
        self.scope = scope
        self.rejected = 0

    def _admit(self, tenant_id: str | None, namespace: str | None, graph_id: str | None) -> bool:
        if self.scope.contains(tenant_id or "", namespace or "", graph_id or ""):
            return True
        self.rejected += 1
        return False

    def admit_hit(self, hit: LexicalHit | VectorHit) -> bool:
        return self._admit(hit.tenant_id, hit.namespace, hit.graph_id)

    def admit_entity(self, entity: Entity) -> bool:
        return self._admit(entity.tenant_id, entity.namespace, entity.graph_id)

    def admit_name(self, name: EntityName) -> bool:
        return self._admit(name.tenant_id, name.namespace, name.graph_id)

    def admit_fact(self, fact: Fact) -> bool:
        return self._admit(fact.tenant_id, fact.namespace, fact.graph_id)

    def admit_subgraph(
        self, sub: Subgraph, roots: Collection[str], direction: Direction, depth: int
    ) -> Admitted:
        """The nodes the roots reach within `depth` hops (in `direction`) over admitted edges between
        admitted nodes, each at its distance from the roots, in (depth, id) order; the admitted edges
        between kept nodes. For an honest store this is exactly its answer."""
        before = self.rejected
        entities = {n.entity.id: n.entity for n in sub.nodes if self.admit_entity(n.entity)}
        edges = [e for e in sub.edges if self.admit_fact(e)]
        steps: dict[str, list[str]] = {}
        for e in edges:
            if e.object_id is None or e.subject_id not in entities or e.object_id not in entities:
                continue
            if direction in ("out", "both"):
                steps.setdefault(e.subject_id, []).append(e.object_id)
            if direction in ("in", "both"):
                steps.setdefault(e.object_id, []).append(e.subject_id)
        dist = {r: 0 for r in roots if r in entities}
        frontier = sorted(dist)
        for d in range(1, depth + 1):
            frontier = sorted({far for near in frontier for far in steps.get(near, ()) if far not in dist})
            dist.update(dict.fromkeys(frontier, d))
        unreached = len(entities) - len(dist)
        self.rejected += unreached  # in scope, but reached only through something that was not
        nodes = sorted((Node.trusted(entity=entities[i], depth=d) for i, d in dist.items()), key=_node_order)
        kept = [e for e in edges if e.subject_id in dist and (e.object_id or "") in dist]
        return Admitted(nodes, kept, self.rejected == before, sub.truncated, sub.omitted)

    def admit_path(self, found: PathResult, source: str, target: str) -> PathResult:
        """The path when every node and edge passes and they form one chain from source to target
        (each edge joining two consecutive nodes, either way round); else no path."""
        nodes = [n for n in found.nodes if self.admit_entity(n)]
        edges = [e for e in found.edges if self.admit_fact(e)]
        if not found.nodes or len(nodes) != len(found.nodes) or len(edges) != len(found.edges):
            return PathResult()
        if not _chain(nodes, edges, source, target):
            self.rejected += 1
            return PathResult()
        return found


def _node_order(node: Node) -> tuple[int, str]:
    return (node.depth, node.entity.id)


def _chain(nodes: Sequence[Entity], edges: Sequence[Fact], source: str, target: str) -> bool:
    ids = [n.id for n in nodes]
    if ids[0] != source or ids[-1] != target or len(edges) != len(ids) - 1 or len(set(ids)) != len(ids):
        return False
    return all({e.subject_id, e.object_id} == {a, b} for e, a, b in zip(edges, ids, ids[1:], strict=False))
