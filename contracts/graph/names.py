"""entity.names (optional, since 1.3.0): hydration narrowed to what a name needs.

A store that declares it answers, for the ids given, exactly the id, name, qualified name and scope
that `entity.get_by_ids` would hydrate -- in the same order, under the same scope rules. Readers use
it to name the far ends of facts; a store without it is asked for whole entities instead."""

from __future__ import annotations

from graphctx.contracts import datasets
from graphctx.contracts._markers import requires
from graphctx.contracts.graph._common import (
    FACTS,
    GET,
    NAMES,
    UPSERT,
    _GraphSubject,
    ent,
    entity_names,
    get_entities,
    ids,
    in_scope,
    load,
    memory,
    modified,
    name_view,
    upsert_entities,
)
from graphctx.contracts.graph.injection import targeted_payloads
from graphctx.contracts.graph.isolation import tenant_data
from graphctx.kernel.ports import GraphStore
from graphctx.scope import Scope


class EntityNamesTests(_GraphSubject):
    """entity.names: the names get_by_ids would hydrate, in the order given, in the scope only."""

    @requires(UPSERT, GET, NAMES)
    def test_entity_names_match_hydration(self, graph_store: GraphStore, scope: Scope) -> None:
        """For every entity (qualified name or not), the same id, name, qualified name and scope
        as get_by_ids, in the order of the ids given."""
        entities = datasets.memory_entities() + datasets.code_entities()
        upsert_entities(graph_store, scope, entities)
        wanted = ids(entities)[::-1]
        hydrated = get_entities(graph_store, scope, wanted)
        assert entity_names(graph_store, scope, wanted) == [name_view(e) for e in hydrated]
        assert [n.display_name() for n in entity_names(graph_store, scope, wanted)] == [
            e.display_name() for e in hydrated
        ]

    @requires(UPSERT, NAMES)
    def test_entity_names_omit_missing_and_repeats(self, graph_store: GraphStore, scope: Scope) -> None:
        """Missing ids are absent, an id given twice comes once at its first place, no ids is nothing,
        and ids compare exactly (another case or a prefix does not match)."""
        upsert_entities(graph_store, scope, [ent("a"), ent("b"), ent("svc-Pay")])
        got = entity_names(graph_store, scope, ["missing", "b", "a", "b", "svc-pay", "svc-", "svc-Pay"])
        assert [n.id for n in got] == ["b", "a", "svc-Pay"]
        assert entity_names(graph_store, scope, []) == []

    @requires(UPSERT, NAMES)
    def test_entity_names_follow_updates(self, graph_store: GraphStore, scope: Scope) -> None:
        """A renamed entity is named by its new name at the very next call (no stale cache)."""
        entities, _ = memory()
        upsert_entities(graph_store, scope, entities)
        first = entities[0]
        assert entity_names(graph_store, scope, [first.id])[0].name == first.name
        upsert_entities(graph_store, scope, [modified(first, name="renamed", qualified_name="q.renamed")])
        (got,) = entity_names(graph_store, scope, [first.id])
        assert (got.name, got.qualified_name) == ("renamed", "q.renamed")

    @requires(UPSERT, FACTS, NAMES)
    def test_entity_names_see_only_own_scope(
        self,
        graph_store: GraphStore,
        scope: Scope,
        other_scope: Scope,
        sibling_scope: Scope,
        graph_scope: Scope,
    ) -> None:
        """Ids that collide with another tenant, a sibling namespace and a shared code graph are named
        by the scope's own entities; an id only the others hold is absent."""
        for adversary, tag in ((other_scope, "other"), (sibling_scope, "sibling"), (graph_scope, "graph")):
            foreign, facts = tenant_data(tag, adversary=True)
            load(graph_store, adversary, [modified(e, name=f"{e.name} {tag}") for e in foreign], facts)
        own, _ = memory()
        upsert_entities(graph_store, scope, own)
        for adversary in (other_scope, sibling_scope, graph_scope):  # others read first (warm caches)
            assert all(in_scope(n, adversary) for n in entity_names(graph_store, adversary, ids(own)))
        got = entity_names(graph_store, scope, [*ids(own), "ghost"])
        assert [n.id for n in got] == ids(own)
        assert [n.name for n in got] == [e.name for e in own]
        assert all(in_scope(n, scope) for n in got)

    @requires(UPSERT, NAMES)
    def test_entity_names_payload_ids_are_data(
        self,
        graph_store: GraphStore,
        scope: Scope,
        other_scope: Scope,
        sibling_scope: Scope,
        graph_scope: Scope,
    ) -> None:
        """Injection payloads and ids naming the adversary scopes' real ids are looked up literally:
        each names its own entity of the scope, and nothing of the adversaries comes back."""
        adversaries = (other_scope, sibling_scope, graph_scope)
        payloads = [
            p
            for p in [*datasets.INJECTION_PAYLOADS, *targeted_payloads(*adversaries)]
            if len(p.encode()) <= 512
        ]
        payloads = list(dict.fromkeys(payloads))
        for s in adversaries:
            upsert_entities(graph_store, s, [ent(p, "foreign") for p in payloads[::2]])
            upsert_entities(graph_store, s, datasets.memory_entities())
        upsert_entities(graph_store, scope, [ent(p, f"name {i}") for i, p in enumerate(payloads)])
        got = entity_names(graph_store, scope, [*payloads, *ids(datasets.memory_entities())])
        assert [(n.id, n.name) for n in got] == [(p, f"name {i}") for i, p in enumerate(payloads)]
        assert all(in_scope(n, scope) for n in got)
