"""The mandatory isolation re-check. Every hit, entity and fact is compared with the caller's scope
before it contributes anything; a backend that ignored its filter must not leak. Cannot be disabled."""

from __future__ import annotations

from graphctx.kernel.ports import LexicalHit, VectorHit
from graphctx.model import Entity, Fact
from graphctx.scope import Scope


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

    def admit_fact(self, fact: Fact) -> bool:
        return self._admit(fact.tenant_id, fact.namespace, fact.graph_id)
