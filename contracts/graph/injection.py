"""Parameter binding: injection payloads are data, never code."""

from __future__ import annotations

from graphctx.contracts import datasets
from graphctx.contracts._markers import requires
from graphctx.contracts.graph._common import (
    DELETE,
    FACTS,
    FIND,
    FROM_ROOTS,
    GET,
    HASHES,
    NEIGHBOURHOOD,
    PATH,
    STATS,
    UPSERT,
    _GraphSubject,
    all_hashes,
    delete_entities,
    ent,
    entity_view,
    expected_entity,
    expected_fact,
    fact_order,
    fact_view,
    find_exact,
    from_roots,
    get_entities,
    hash_page,
    ids,
    in_scope,
    load,
    memory,
    modified,
    neighbourhood,
    shortest_path,
    stats,
    upsert_entities,
    upsert_facts,
)
from graphctx.kernel import templates as t
from graphctx.kernel.ports import GraphStore
from graphctx.model import Fact
from graphctx.scope import Scope

# ---- injection --------------------------------------------------------------------------------


def _payload_ids() -> list[str]:
    """Payloads short enough to be entity ids."""
    return [p for p in datasets.INJECTION_PAYLOADS if len(p.encode()) <= 512]


def targeted_payloads(other: Scope, sibling: Scope, graph: Scope) -> list[str]:
    """Payloads that name the adversary scopes' real tenant id, namespace and graph id: as plain text
    and as SQL, Cypher, Gremlin, query-string and document-filter fragments that would widen (or wipe)
    a lookup if the store spliced them into its query."""
    tenant, namespace, graph_id = other.tenant_id, sibling.namespace, graph.graph_id
    return [
        tenant,
        f"{tenant}/{other.namespace}",
        namespace,
        graph_id,
        f"x') OR tenant_id = '{tenant}' --",
        f"x') OR (tenant_id = '{tenant}' AND namespace = '{other.namespace}') --",
        f"x') OR namespace = '{namespace}' --",
        f"x') OR graph_id = '{graph_id}' --",
        f"x' OR tenant_id='{tenant}",
        f'x") OR tenant_id = "{tenant}" --',
        f"x'); DELETE FROM entities WHERE tenant_id = '{tenant}'; --",  # noqa: S608 - a payload, not a query
        f"x' OR n.tenant_id = '{tenant}' RETURN n //",
        f"x').or().has('tenant_id', '{tenant}').as('",
        f"g.V().has('tenant_id', '{tenant}').drop().iterate()",
        f"tenant_id:{tenant} OR name:*",
        f"namespace:{namespace} OR namespace:*",
        f'{{"$or": [{{"tenant_id": "{tenant}"}}, {{"graph_id": "{graph_id}"}}]}}',
    ]


KEYWORD_IDS: tuple[str, ...] = (
    # Gremlin step labels, side-effect and map keys a store may build its traversal with
    "a", "b", "x", "v", "e", "it", "row", "rows", "ends", "key", "keys", "value", "values", "label", "id",
    "T.id", "~id", "_", "select", "by", "as", "V", "E", "g", "__",
    # SQL, Cypher and JSON words, and object keys a client library may treat as special
    "select", "from", "where", "null", "NULL", "true", "false", "0", "-1", "n", "r", "MATCH",
    "{}", "[]", "__proto__", "constructor", "toString",
)  # fmt: skip


class InjectionTests(_GraphSubject):
    """Parameter binding: injection payloads are data, stored and returned byte for byte, never code."""

    @requires(UPSERT, GET)
    def test_injection_payloads_round_trip(self, graph_store: GraphStore, scope: Scope) -> None:
        """Payloads as names, aliases and summaries come back byte-identical."""
        entities = datasets.injection_entities()
        assert upsert_entities(graph_store, scope, entities) == t.UpsertResult(created=len(entities))
        got = get_entities(graph_store, scope, ids(entities))
        assert [entity_view(e) for e in got] == [expected_entity(e, scope) for e in entities]

    @requires(UPSERT, FIND)
    def test_injection_payloads_found_literally(self, graph_store: GraphStore, scope: Scope) -> None:
        """find_exact finds each payload's own entity by name and by alias, and nothing else."""
        entities = datasets.injection_entities()
        upsert_entities(graph_store, scope, entities)
        for e in entities:
            by_name = find_exact(graph_store, scope, [e.name], fields=("name",))
            assert [(m.entity.id, m.value) for m in by_name] == [(e.id, e.name)], e.name
            assert by_name[0].entity.name == e.name
            by_alias = find_exact(graph_store, scope, [e.aliases[0]], fields=("alias",))
            assert [(m.entity.id, m.value) for m in by_alias] == [(e.id, e.aliases[0])], e.aliases[0]

    @requires(UPSERT, FIND, STATS)
    def test_injection_payloads_never_widen_scope(
        self, graph_store: GraphStore, scope: Scope, other_scope: Scope, sibling_scope: Scope
    ) -> None:
        """Payload lookups match only the scope's own entities and change nothing anywhere."""
        entities = datasets.injection_entities()
        upsert_entities(graph_store, scope, entities)
        upsert_entities(graph_store, other_scope, [modified(e, summary="other") for e in entities])
        upsert_entities(graph_store, other_scope, [ent("other-only", "other only")])
        payloads = list(datasets.INJECTION_PAYLOADS)
        got = find_exact(graph_store, scope, payloads, limit=100)
        assert sorted(m.entity.id for m in got) == sorted(ids(entities))
        assert all(in_scope(m.entity, scope) and m.entity.summary != "other" for m in got)
        assert find_exact(graph_store, sibling_scope, payloads, limit=100) == []
        assert (stats(graph_store, scope).entities, stats(graph_store, other_scope).entities) == (
            len(entities),
            len(entities) + 1,
        )

    @requires(UPSERT, GET, FIND, HASHES)
    def test_injection_payloads_as_ids(self, graph_store: GraphStore, scope: Scope) -> None:
        """Payloads as entity ids are stored, fetched, found and paged literally, in code-point order."""
        payload_ids = _payload_ids()
        entities = [ent(p, f"name {i}") for i, p in enumerate(payload_ids)]
        upsert_entities(graph_store, scope, entities)
        assert ids(get_entities(graph_store, scope, payload_ids)) == payload_ids
        for p in payload_ids:
            assert [m.entity.id for m in find_exact(graph_store, scope, [p], fields=("id",))] == [p], p
        assert [i for i, _ in all_hashes(graph_store, scope)] == sorted(payload_ids)
        for p in payload_ids:
            assert [i for i, _ in hash_page(graph_store, scope, after=p)] == sorted(
                i for i in payload_ids if i > p
            ), p

    @requires(UPSERT, FACTS, GET, FIND, FROM_ROOTS, HASHES)
    def test_ids_named_like_query_keywords_are_plain_ids(self, graph_store: GraphStore, scope: Scope) -> None:
        """Ids that are words of the store's own language (a step label, a side-effect or map key, a
        SQL or JSON word) are written, updated, linked and read like any other: a store that uses an
        id where a label or key goes resolves `row` or `ends` to its own variables instead. Since 1.5.0."""
        words = list(dict.fromkeys(KEYWORD_IDS))
        entities = [ent(w, f"kw {i}") for i, w in enumerate(words)]
        assert upsert_entities(graph_store, scope, entities) == t.UpsertResult(created=len(entities))
        changed = [modified(e, summary=f"changed {e.id}") for e in entities]
        assert upsert_entities(graph_store, scope, changed) == t.UpsertResult(updated=len(entities))
        facts = [
            Fact(subject_id=a, predicate="relates_to", object_id=b, value=f"{a}->{b}")
            for a, b in zip(words, [*words[1:], words[0]], strict=True)
        ]
        assert upsert_facts(graph_store, scope, facts) == t.UpsertResult(created=len(facts))
        assert [(e.id, e.summary) for e in get_entities(graph_store, scope, words)] == [
            (w, f"changed {w}") for w in words
        ]
        for w in words:
            assert [m.entity.id for m in find_exact(graph_store, scope, [w], fields=("id",))] == [w], w
        got = from_roots(graph_store, scope, words, direction="out", limit=200)
        assert [fact_view(f) for f in got.facts] == [
            expected_fact(f, scope) for f in sorted(facts, key=fact_order)
        ]
        assert [i for i, _ in all_hashes(graph_store, scope)] == sorted(words)

    @requires(UPSERT, FACTS, FROM_ROOTS)
    def test_injection_payloads_as_fact_values(self, graph_store: GraphStore, scope: Scope) -> None:
        """Payloads as fact values and sources come back byte-identical."""
        entities = datasets.injection_entities()
        facts = [
            Fact(subject_id=e.id, predicate="note", value=p, source=p[:100])
            for e, p in zip(entities, datasets.INJECTION_PAYLOADS, strict=True)
        ]
        load(graph_store, scope, entities, facts)
        got = from_roots(graph_store, scope, ids(entities), direction="out")
        assert [fact_view(f) for f in got.facts] == [
            expected_fact(f, scope) for f in sorted(facts, key=fact_order)
        ]

    @requires(UPSERT, FACTS, GET, FROM_ROOTS, NEIGHBOURHOOD, PATH, STATS)
    def test_injection_payloads_in_traversal_params(self, graph_store: GraphStore, scope: Scope) -> None:
        """Payloads as roots and path ends match nothing and leave the data intact."""
        entities, facts = memory()
        load(graph_store, scope, entities, facts)
        before = stats(graph_store, scope)
        payloads = _payload_ids()
        assert from_roots(graph_store, scope, payloads, include_invalid=True).facts == ()
        assert neighbourhood(graph_store, scope, payloads, depth=2) == t.Subgraph()
        for p in payloads:
            assert shortest_path(graph_store, scope, p, "svc-pay") == t.PathResult()
            assert shortest_path(graph_store, scope, "svc-pay", p) == t.PathResult()
        assert get_entities(graph_store, scope, payloads) == []
        assert stats(graph_store, scope) == before

    @requires(UPSERT, FIND, STATS)
    def test_injection_targeted_values_stay_in_scope(
        self,
        graph_store: GraphStore,
        scope: Scope,
        other_scope: Scope,
        sibling_scope: Scope,
        graph_scope: Scope,
    ) -> None:
        """find_exact values naming the adversary scopes' real tenant id, namespace and graph id match
        nothing of those scopes (nor of the scope), and change nothing anywhere."""
        adversaries = (other_scope, sibling_scope, graph_scope)
        payloads = targeted_payloads(*adversaries)
        entities = datasets.memory_entities()
        upsert_entities(graph_store, scope, entities)
        for s in adversaries:  # the same entities, plus one named by every payload
            foreign = [modified(e, summary="foreign") for e in entities]
            foreign += [ent(f"foreign-{i:02d}", p, aliases=(p,)) for i, p in enumerate(payloads)]
            upsert_entities(graph_store, s, foreign)
        counts = {s: stats(graph_store, s).entities for s in (scope, *adversaries)}
        for payload in payloads:
            for field in ("id", "qualified_name", "name", "alias"):
                got = find_exact(graph_store, scope, [payload], fields=(field,), limit=100)
                found = [
                    (m.entity.id, m.entity.tenant_id, m.entity.namespace, m.entity.graph_id) for m in got
                ]
                assert found == [], (field, payload)
        got = find_exact(graph_store, scope, [*payloads, entities[0].name], limit=100)
        assert [(m.entity.id, m.value) for m in got] == [(entities[0].id, entities[0].name)]
        assert in_scope(got[0].entity, scope) and got[0].entity.summary != "foreign"
        assert {s: stats(graph_store, s).entities for s in counts} == counts

    @requires(UPSERT, GET, FIND, HASHES, DELETE)
    def test_injection_targeted_ids_stay_in_scope(
        self,
        graph_store: GraphStore,
        scope: Scope,
        other_scope: Scope,
        sibling_scope: Scope,
        graph_scope: Scope,
    ) -> None:
        """Entity ids naming the adversary scopes' real tenant id, namespace and graph id are stored,
        fetched, found, paged and deleted in the scope only; the adversaries' data is untouched."""
        adversaries = (other_scope, sibling_scope, graph_scope)
        payloads = [p for p in targeted_payloads(*adversaries) if len(p.encode()) <= 512]
        foreign = datasets.memory_entities()
        for s in adversaries:
            upsert_entities(graph_store, s, [modified(e, summary="foreign") for e in foreign])
        before = {s: all_hashes(graph_store, s) for s in adversaries}
        upsert_entities(graph_store, scope, [ent(p, f"targeted {i}") for i, p in enumerate(payloads)])
        got = get_entities(graph_store, scope, [*payloads, *ids(foreign)])
        assert ids(got) == payloads
        assert all(in_scope(e, scope) for e in got)
        for p in payloads:
            found = find_exact(graph_store, scope, [p], fields=("id",))
            assert [(m.entity.id, m.entity.tenant_id) for m in found] == [(p, scope.tenant_id)], p
        assert [i for i, _ in all_hashes(graph_store, scope)] == sorted(payloads)
        assert delete_entities(graph_store, scope, payloads).deleted == len(payloads)
        assert all_hashes(graph_store, scope) == []
        assert {s: all_hashes(graph_store, s) for s in adversaries} == before
