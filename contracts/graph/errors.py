"""Typed errors: the type is the contract, the wording is free."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from graphctx.contracts import datasets
from graphctx.contracts._markers import requires
from graphctx.contracts.graph._common import (
    FACTS,
    FROM_ROOTS,
    GET,
    STATS,
    UPSERT,
    _GraphSubject,
    edge,
    ent,
    from_roots,
    get_entities,
    ids,
    load,
    stats,
    upsert_entities,
    upsert_facts,
)
from graphctx.errors import InputError, NotFound, ScopeError, UnsupportedTemplate
from graphctx.kernel import templates as t
from graphctx.kernel.ports import GraphStore
from graphctx.model import Fact
from graphctx.scope import Scope

# ---- errors -----------------------------------------------------------------------------------

UNKNOWN_TEMPLATE: t.Template[Any, Any] = t.Template(
    "contract.unknown", 1, t.NoParams, t.CountResult, "Not in the catalogue."
)


def empty_scope_calls() -> dict[str, Any]:
    """Parameters for every catalogue template that are valid on an empty scope."""
    return {
        t.ENTITY_UPSERT.name: t.EntityUpsertParams(entities=()),
        t.ENTITY_GET.name: t.EntityGetParams(ids=("nothing",)),
        t.ENTITY_NAMES.name: t.EntityGetParams(ids=("nothing",)),
        t.ENTITY_FIND_EXACT.name: t.EntityFindExactParams(values=("nothing",)),
        t.ENTITY_DELETE.name: t.EntityDeleteParams(ids=("nothing",)),
        t.ENTITY_HASHES.name: t.EntityHashesParams(),
        t.FACT_UPSERT.name: t.FactUpsertParams(facts=()),
        t.FACT_INVALIDATE.name: t.FactInvalidateParams(ids=("nothing",), valid_to=datasets.T_NOW),
        t.FACTS_FROM_ROOTS.name: t.FactsFromRootsParams(roots=("nothing",)),
        t.NEIGHBOURHOOD.name: t.NeighbourhoodParams(roots=("nothing",)),
        t.SHORTEST_PATH.name: t.ShortestPathParams(source="nothing", target="nothing-else"),
        t.SCOPE_STATS.name: t.NoParams(),
        t.SCOPE_CLEAR.name: t.NoParams(),
    }


class ErrorTests(_GraphSubject):
    """Typed errors: the type is the contract, the message is free."""

    def test_run_unknown_template_raises_unsupported(self, graph_store: GraphStore, scope: Scope) -> None:
        """A template that is not in the catalogue is UnsupportedTemplate, never an empty result."""
        with pytest.raises(UnsupportedTemplate):
            graph_store.run(UNKNOWN_TEMPLATE, scope, t.NoParams())

    def test_run_other_template_version_raises_unsupported(
        self, graph_store: GraphStore, scope: Scope
    ) -> None:
        """A catalogue template of another version is UnsupportedTemplate."""
        for template in (t.ENTITY_GET, t.SCOPE_STATS):
            newer = dataclasses.replace(template, version=template.version + 1)
            with pytest.raises(UnsupportedTemplate):
                graph_store.run(newer, scope, empty_scope_calls()[template.name])  # type: ignore[misc]

    def test_run_declared_templates_match_capabilities(self, graph_store: GraphStore, scope: Scope) -> None:
        """Every declared template runs (empty scope: the empty result); any other is UnsupportedTemplate."""
        calls = empty_scope_calls()
        assert set(calls) == set(t.CATALOG), "the contract lists parameters for every catalogue template"
        declared = graph_store.capabilities.templates
        assert declared <= set(t.CATALOG), (
            f"declared templates outside the catalogue: {sorted(declared - set(t.CATALOG))}"
        )
        for name, template in t.CATALOG.items():
            if name in declared:
                assert graph_store.run(template, scope, calls[name]) == template.result(), name
            else:
                with pytest.raises(UnsupportedTemplate):
                    graph_store.run(template, scope, calls[name])

    @requires(UPSERT, GET)
    def test_run_wrong_params_type_raises_input_error(self, graph_store: GraphStore, scope: Scope) -> None:
        """Params that are not the template's parameter model are InputError, and nothing runs."""
        upsert_entities(graph_store, scope, [ent("a")])
        with pytest.raises(InputError):
            graph_store.run(t.ENTITY_GET, scope, t.EntityDeleteParams(ids=("a",)))  # type: ignore[misc]
        with pytest.raises(InputError):
            graph_store.run(t.ENTITY_GET, scope, {"ids": ["a"]})  # type: ignore[misc]
        with pytest.raises(InputError):
            graph_store.run(t.ENTITY_UPSERT, scope, [ent("b")])  # type: ignore[misc]
        assert ids(get_entities(graph_store, scope, ["a", "b"])) == ["a"]

    @requires(UPSERT, GET)
    def test_run_without_scope_raises_scope_error(self, graph_store: GraphStore, scope: Scope) -> None:
        """A scope that is not a Scope (a dict, a tuple, a string) is ScopeError."""
        upsert_entities(graph_store, scope, [ent("a")])
        for fake in (
            scope.as_dict(),
            (scope.tenant_id, scope.namespace, scope.graph_id),
            scope.tenant_id,
            None,
        ):
            with pytest.raises(ScopeError):
                graph_store.run(t.ENTITY_GET, fake, t.EntityGetParams(ids=("a",)))  # type: ignore[arg-type]

    @requires(UPSERT, FACTS, FROM_ROOTS, STATS)
    def test_fact_upsert_missing_endpoint_raises_not_found(
        self, graph_store: GraphStore, scope: Scope
    ) -> None:
        """A fact whose subject or object is missing is NotFound, and nothing of the batch is written."""
        load(graph_store, scope, [ent("a"), ent("b")])
        batches = [
            [edge("a", "b"), edge("a", "missing")],
            [edge("a", "b"), edge("missing", "b")],
            [edge("a", "b"), Fact(subject_id="missing", predicate="note", value="v")],
        ]
        for batch in batches:
            with pytest.raises(NotFound):
                upsert_facts(graph_store, scope, batch)
            assert from_roots(graph_store, scope, ["a", "b"], include_invalid=True).facts == ()
        assert stats(graph_store, scope).facts == 0

    @requires(UPSERT, FACTS, FROM_ROOTS)
    def test_fact_upsert_endpoint_in_other_scope_raises_not_found(
        self, graph_store: GraphStore, scope: Scope, other_scope: Scope, graph_scope: Scope
    ) -> None:
        """An endpoint that exists only in another scope (tenant or shared graph) is NotFound."""
        upsert_entities(graph_store, scope, [ent("a")])
        upsert_entities(graph_store, other_scope, [ent("b")])
        upsert_entities(graph_store, graph_scope, [ent("c")])
        for obj in ("b", "c"):
            with pytest.raises(NotFound):
                upsert_facts(graph_store, scope, [edge("a", obj)])
        assert from_roots(graph_store, scope, ["a"], include_invalid=True).facts == ()
        assert from_roots(graph_store, other_scope, ["b"], include_invalid=True).facts == ()
