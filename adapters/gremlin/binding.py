"""Every user value of a traversal goes through a Binder: it becomes a named `Bindings` value.

Labels, property keys, edge labels and step names are constants from code; nothing a caller gives is
ever placed in a traversal except as the value of a binding.

Servers resolve a binding only where it is a step argument (`has(key, binding)`, `V(binding)`,
`limit(binding)`, `withSideEffect(key, binding)`), not inside a predicate (`P.gt(binding)` reaches the
step as the Binding object itself and compares false; measured on Gremlin Server 3.8.1, and 3.5's
JavaTranslator has the same rule). So:

* a set of allowed values is an `or()` of `has(key, binding)` (`has_any`), or `V(binding)` for ids;
* an order comparison binds the value as a side effect of the traversal source and compares with
  `where(P.<op>(side-effect key)).by(key).by()` (`compare`); `finish` adds those side effects;
* a long set of allowed values is bound once as a list side effect and kept with
  `where(P.within(side-effect key)).by(key).by()` (`within`; measured on HugeGraph 1.5.0 and Gremlin
  Server 3.8.1).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from gremlin_python.process.graph_traversal import GraphTraversal, __
from gremlin_python.process.traversal import Binding, Bindings, P
from gremlin_python.statics import long

Op = Literal["gt", "gte", "lt", "lte"]


class Binder:
    """Hands out bindings with unique names (`b0`, `b1`, ...) for one traversal."""

    def __init__(self, prefix: str = "b") -> None:
        self._prefix = prefix
        self._count = 0
        self._side_effects: list[tuple[str, Binding]] = []

    def __call__(self, value: Any) -> Binding:
        name = f"{self._prefix}{self._count}"
        self._count += 1
        return Bindings.of(name, value)

    def long(self, value: int) -> Binding:
        """An integer bound as a 64-bit long (what limit(), range() and epoch times take)."""
        return self(long(value))

    def has_any(self, t: GraphTraversal, key: str, values: Sequence[Any]) -> GraphTraversal:
        """Keep elements whose `key` equals one of `values` (non-empty)."""
        if len(values) == 1:
            return t.has(key, self(values[0]))
        return t.or_(*[__.has(key, self(v)) for v in values])

    def compare(self, t: GraphTraversal, key: str, op: Op, value: Any) -> GraphTraversal:
        """Keep elements whose `key` is `op` `value` (elements without `key` are dropped)."""
        name = f"_{self._prefix}{self._count}"
        self._side_effects.append((name, self(value)))
        return t.has(key).where(getattr(P, op)(name)).by(key).by()

    def within(self, t: GraphTraversal, key: str, values: Sequence[Any]) -> GraphTraversal:
        """Keep elements whose `key` equals one of `values`, bound once as a list side effect (where an
        `or()` of equalities would cost steps per value): `where(P.within(side-effect key))`."""
        name = f"_{self._prefix}{self._count}"
        self._side_effects.append((name, self(list(values))))
        return t.has(key).where(P.within(name)).by(key).by()

    def finish(self, t: GraphTraversal) -> GraphTraversal:
        """Declare the side effects `compare` used; call once, on the finished traversal."""
        for name, binding in self._side_effects:
            t.bytecode.add_source("withSideEffect", name, binding)
        return t
