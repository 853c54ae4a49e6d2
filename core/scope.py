"""The caller's scope: which tenant, namespace and (for shared code graphs) graph a request may see."""

from __future__ import annotations

import re
from dataclasses import dataclass

from graphctx.errors import ScopeError

_SELECTOR = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,127}$")

SHARED_TENANT = "graphctx:shared"
"""Reserved tenant under which shared code graphs are stored once, for every tenant authorised to read
them; no principal or operator may take it as its own tenant."""
SHARED_NAMESPACE = "code"


def _check(field: str, value: str, *, allow_empty: bool = False) -> None:
    if not isinstance(value, str):
        raise ScopeError(f"scope {field} must be a string, got {type(value).__name__}")
    if allow_empty and value == "":
        return
    if not _SELECTOR.match(value):
        raise ScopeError(
            f"scope {field} {value[:40]!r} is not a valid selector "
            "(1-128 chars of letters, digits and . _ : @ -, starting with a letter or digit)"
        )


@dataclass(frozen=True, slots=True)
class Scope:
    """Immutable. Built from the authenticated principal and configuration, never from query text.

    `graph_id` is empty for tenant memory and names a shared code graph otherwise.
    """

    tenant_id: str
    namespace: str = "default"
    graph_id: str = ""

    def __post_init__(self) -> None:
        _check("tenant_id", self.tenant_id)
        _check("namespace", self.namespace)
        _check("graph_id", self.graph_id, allow_empty=True)
        if self.tenant_id == SHARED_TENANT and (not self.graph_id or self.namespace != SHARED_NAMESPACE):
            raise ScopeError(f"tenant id {SHARED_TENANT!r} is reserved for shared code graphs")

    def narrow(self, namespace: str | None = None) -> Scope:
        """A client may only pick a namespace the principal already has; this never widens."""
        if namespace is None or namespace == self.namespace:
            return self
        raise ScopeError(f"namespace {namespace[:40]!r} is not accessible from this scope")

    def contains(self, tenant_id: str, namespace: str, graph_id: str) -> bool:
        return (tenant_id, namespace, graph_id) == (self.tenant_id, self.namespace, self.graph_id)

    def as_dict(self) -> dict[str, str]:
        return {"tenant_id": self.tenant_id, "namespace": self.namespace, "graph_id": self.graph_id}


def shared_scope(graph_id: str) -> Scope:
    """The one copy of shared code graph `graph_id`, read by every tenant authorised for it."""
    if not graph_id:
        raise ScopeError("a shared code graph needs a graph id")
    return Scope(SHARED_TENANT, SHARED_NAMESPACE, graph_id)
