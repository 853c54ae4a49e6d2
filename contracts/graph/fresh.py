"""The fixture's store is fresh, and scopes never share data."""

from __future__ import annotations

from graphctx.contracts import datasets
from graphctx.contracts._markers import requires
from graphctx.contracts.graph._common import (
    FACTS,
    FIND,
    FROM_ROOTS,
    GET,
    HASHES,
    STATS,
    UPSERT,
    _GraphSubject,
    all_hashes,
    find_exact,
    from_roots,
    get_entities,
    ids,
    load,
    memory,
    stats,
)
from graphctx.kernel import templates as t
from graphctx.kernel.ports import GraphStore
from graphctx.scope import Scope

# ---- fresh store ------------------------------------------------------------------------------


class FreshStoreTests(_GraphSubject):
    """The fixture's store is empty for the test's scopes, and scopes never share data."""

    @requires(STATS)
    def test_fresh_store_stats_are_zero(
        self,
        graph_store: GraphStore,
        scope: Scope,
        other_scope: Scope,
        sibling_scope: Scope,
        graph_scope: Scope,
    ) -> None:
        """A fresh store counts nothing in any of the test's scopes."""
        for s in (scope, other_scope, sibling_scope, graph_scope):
            assert stats(graph_store, s) == t.ScopeStats(), s

    @requires(HASHES, GET, FIND)
    def test_fresh_store_lookups_find_nothing(self, graph_store: GraphStore, scope: Scope) -> None:
        """A fresh store pages no hashes and finds none of the datasets' ids, names or aliases."""
        entities = datasets.memory_entities() + datasets.code_entities()
        assert all_hashes(graph_store, scope) == []
        assert get_entities(graph_store, scope, ids(entities)) == []
        assert find_exact(graph_store, scope, [e.name for e in entities] + ids(entities), limit=100) == []

    @requires(UPSERT, FACTS, HASHES, GET, FROM_ROOTS)
    def test_fresh_store_scopes_do_not_share_data(
        self,
        graph_store: GraphStore,
        scope: Scope,
        other_scope: Scope,
        sibling_scope: Scope,
        graph_scope: Scope,
    ) -> None:
        """Data in one scope is invisible in the other tenant, the sibling namespace and the shared graph."""
        entities, facts = memory()
        load(graph_store, scope, entities, facts)
        assert len(all_hashes(graph_store, scope)) == len(entities)
        for s in (other_scope, sibling_scope, graph_scope):
            assert all_hashes(graph_store, s) == [], s
            assert get_entities(graph_store, s, ids(entities)) == [], s
            assert from_roots(graph_store, s, ids(entities), include_invalid=True).facts == (), s
