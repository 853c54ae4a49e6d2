"""Expansion names the far ends of facts through `entity.names` when the graph store declares it, and
through whole entities otherwise: the answers are the same either way."""

from __future__ import annotations

from typing import Any

from graphctx.kernel import templates as t
from graphctx.kernel.ports import Capabilities
from graphctx.kernel.stores import open_stores
from graphctx.scope import Scope
from graphctx.service import ContextService
from tests.conftest import fixed_clock
from tests.service import memory_data

SCOPE = Scope("tenant-names")
QUERIES = ("checkout-api", "payment-gateway", "who owns card processing", "Payments Team")


class Recording:
    """The real graph store, recording the templates run; `narrow=False` hides entity.names."""

    def __init__(self, inner: Any, *, narrow: bool) -> None:
        self.inner, self.narrow, self.calls = inner, narrow, []

    def __getattr__(self, item: str) -> Any:
        return getattr(self.inner, item)

    @property
    def capabilities(self) -> Capabilities:
        real = self.inner.capabilities
        if self.narrow:
            return real
        return Capabilities(templates=real.templates - {t.ENTITY_NAMES.name}, durable=real.durable)

    def run(self, template: t.Template[Any, Any], scope: Scope, params: Any) -> Any:
        self.calls.append(template.name)
        return self.inner.run(template, scope, params)


def _answers(settings: Any, *, narrow: bool) -> tuple[list[dict[str, Any]], list[str]]:
    stores = open_stores(settings)
    graph = stores.graph = Recording(stores.graph, narrow=narrow)  # type: ignore[assignment]
    with ContextService(stores, settings, clock=fixed_clock) as service:
        if narrow:
            memory_data.load(service, SCOPE, "MARK")
        graph.calls.clear()
        out = [service.recall(SCOPE, q, depth=d) for q in QUERIES for d in (1, 2)]
        out += [service.explain(SCOPE, n) for n in ("svc-checkout", "svc-pay", "team-pay")]
    for envelope in out:
        envelope.pop("timings_ms")
    return out, graph.calls


def test_expansion_answers_are_the_same_with_and_without_entity_names(settings):
    narrow, narrow_calls = _answers(settings, narrow=True)
    whole, whole_calls = _answers(settings, narrow=False)
    assert t.ENTITY_NAMES.name in narrow_calls, "the store declares entity.names: expansion uses it"
    assert t.ENTITY_NAMES.name not in whole_calls, "a store without it is never asked for it"
    assert whole_calls.count(t.ENTITY_GET.name) > narrow_calls.count(t.ENTITY_GET.name)
    explained = narrow[-3]  # svc-checkout: its facts name their far ends by name, not by id
    assert {"payment-gateway", "Commerce Platform"} <= {f.get("object") for f in explained["facts"]}
    assert narrow == whole
