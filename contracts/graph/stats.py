"""The scope-wide templates: scope.stats and scope.clear."""

from __future__ import annotations

from typing import Any

from graphctx.contracts import datasets
from graphctx.contracts._markers import requires
from graphctx.contracts.graph._common import (
    CLEAR,
    DELETE,
    FACTS,
    FAR_FUTURE,
    FAR_PAST,
    FIND,
    FROM_ROOTS,
    GET,
    HASHES,
    NEIGHBOURHOOD,
    STATS,
    UPSERT,
    _GraphSubject,
    all_hashes,
    clear,
    delete_entities,
    edge,
    ent,
    find_exact,
    from_roots,
    get_entities,
    ids,
    load,
    memory,
    modified,
    neighbourhood,
    node_ids,
    stats,
    upsert_entities,
    upsert_facts,
)
from graphctx.kernel import templates as t
from graphctx.kernel.ports import GraphStore
from graphctx.model import Fact
from graphctx.scope import Scope

# ---- scope.stats ------------------------------------------------------------------------------


class ScopeStatsTests(_GraphSubject):
    """scope.stats: counts of what the scope holds."""

    @requires(UPSERT, FACTS, STATS)
    def test_scope_stats_counts(self, graph_store: GraphStore, scope: Scope) -> None:
        """Entities, facts and entities by type are counted exactly."""
        entities = datasets.memory_entities() + datasets.code_entities()
        facts = datasets.memory_facts() + datasets.code_facts()
        load(graph_store, scope, entities, facts)
        got = stats(graph_store, scope)
        by_type: dict[str, int] = {}
        for e in entities:
            by_type[e.type] = by_type.get(e.type, 0) + 1
        assert (got.entities, got.facts, got.by_type) == (len(entities), len(facts), by_type)

    @requires(UPSERT, FACTS, STATS)
    def test_scope_stats_valid_facts_now(self, graph_store: GraphStore, scope: Scope) -> None:
        """valid_facts counts the facts valid at the store's current time."""
        load(
            graph_store,
            scope,
            [ent("a"), ent("b")],
            [
                edge("a", "b", "owns", valid_to=FAR_PAST),
                edge("a", "b", "uses", valid_from=FAR_FUTURE),
                edge("a", "b", "leads", valid_from=FAR_PAST, valid_to=FAR_FUTURE),
                edge("b", "a", "leads"),
            ],
        )
        assert (stats(graph_store, scope).facts, stats(graph_store, scope).valid_facts) == (4, 2)

    @requires(UPSERT, FACTS, DELETE, STATS)
    def test_scope_stats_follow_writes(self, graph_store: GraphStore, scope: Scope) -> None:
        """Counts follow deletes and replaces at once."""
        entities, facts = memory()
        load(graph_store, scope, entities, facts)
        delete_entities(graph_store, scope, ["db-redis"])
        upsert_entities(graph_store, scope, [modified(entities[0], type="team")])
        got = stats(graph_store, scope)
        assert (got.entities, got.facts) == (7, 7)
        assert got.by_type == {"service": 2, "team": 3, "incident": 1, "decision": 1}

    @requires(UPSERT, FACTS, STATS)
    def test_scope_stats_count_value_only_facts(self, graph_store: GraphStore, scope: Scope) -> None:
        """Facts with a literal value and no object entity count as facts, and as valid facts while
        they hold, like facts between entities. Since 1.5.0."""
        load(
            graph_store,
            scope,
            [ent("a"), ent("b")],
            [
                Fact(subject_id="a", predicate="note", value="current"),
                Fact(subject_id="a", predicate="note", value="ended", valid_to=FAR_PAST),
                Fact(subject_id="b", predicate="note", value="later", valid_from=FAR_FUTURE),
                Fact(
                    subject_id="b",
                    predicate="note",
                    value="bounded",
                    valid_from=FAR_PAST,
                    valid_to=FAR_FUTURE,
                ),
                edge("a", "b", "uses"),
            ],
        )
        got = stats(graph_store, scope)
        assert (got.entities, got.facts, got.valid_facts) == (2, 5, 3)

    @requires(STATS)
    def test_scope_stats_empty_scope(self, graph_store: GraphStore, scope: Scope) -> None:
        """An empty scope counts zero everywhere."""
        assert stats(graph_store, scope) == t.ScopeStats()


# ---- scope.clear ------------------------------------------------------------------------------


class ScopeClearTests(_GraphSubject):
    """scope.clear: delete everything in the scope (admin and tests)."""

    @requires(UPSERT, FACTS, CLEAR, STATS, HASHES, GET)
    def test_scope_clear_removes_everything(self, graph_store: GraphStore, scope: Scope) -> None:
        """After a clear the scope is empty for every read."""
        entities, facts = memory()
        load(graph_store, scope, entities, facts)
        clear(graph_store, scope)
        assert stats(graph_store, scope) == t.ScopeStats()
        assert all_hashes(graph_store, scope) == []
        assert get_entities(graph_store, scope, ids(entities)) == []

    @requires(UPSERT, FACTS, CLEAR, GET, FIND, HASHES, FROM_ROOTS, NEIGHBOURHOOD, STATS)
    def test_scope_clear_visible_to_reads_made_before(self, graph_store: GraphStore, scope: Scope) -> None:
        """Everything read before a clear is gone from the next read of every template."""
        entities, facts = memory()
        load(graph_store, scope, entities, facts)

        def reads() -> list[Any]:
            return [
                get_entities(graph_store, scope, ids(entities)),
                find_exact(graph_store, scope, [e.name for e in entities], limit=100),
                all_hashes(graph_store, scope),
                from_roots(graph_store, scope, ids(entities), include_invalid=True).facts,
                neighbourhood(graph_store, scope, ids(entities), as_of=datasets.T_NOW).nodes,
                stats(graph_store, scope).entities,
            ]

        assert all(reads())
        clear(graph_store, scope)
        assert not any(reads())

    @requires(UPSERT, FACTS, CLEAR)
    def test_scope_clear_counts_entities_and_facts(self, graph_store: GraphStore, scope: Scope) -> None:
        """The count is the entities plus the facts removed; an empty scope counts zero."""
        entities, facts = memory()
        load(graph_store, scope, entities, facts)
        assert clear(graph_store, scope) == len(entities) + len(facts)
        assert clear(graph_store, scope) == 0

    @requires(UPSERT, FACTS, CLEAR, GET)
    def test_scope_clear_then_reload(self, graph_store: GraphStore, scope: Scope) -> None:
        """A cleared scope takes the same ids again as new entities."""
        entities, facts = memory()
        load(graph_store, scope, entities, facts)
        clear(graph_store, scope)
        assert upsert_entities(graph_store, scope, entities) == t.UpsertResult(created=len(entities))
        assert upsert_facts(graph_store, scope, facts) == t.UpsertResult(created=len(facts))
        assert ids(get_entities(graph_store, scope, ids(entities))) == ids(entities)

    @requires(UPSERT, FACTS, CLEAR, GET, FIND, FROM_ROOTS, NEIGHBOURHOOD, STATS)
    def test_scope_clear_then_recreate_brings_nothing_back(
        self, graph_store: GraphStore, scope: Scope
    ) -> None:
        """An id cleared and written again starts empty: no alias, name, qualified name or fact of the
        cleared scope finds or reaches it. Since 1.5.0."""
        old = ent("x", "old-name", aliases=("old-alias",), qualified_name="pkg.old", summary="old")
        load(
            graph_store,
            scope,
            [old, ent("y", aliases=("y-alias",))],
            [
                edge("x", "y", "uses"),
                edge("y", "x", "owns"),
                Fact(subject_id="x", predicate="note", value="old"),
            ],
        )
        clear(graph_store, scope)
        new = ent("x", "new-name", summary="new")
        assert upsert_entities(graph_store, scope, [new, ent("y")]) == t.UpsertResult(created=2)
        assert find_exact(graph_store, scope, ["old-name", "old-alias", "pkg.old", "y-alias"]) == []
        assert [(m.entity.id, m.field) for m in find_exact(graph_store, scope, ["new-name", "y"])] == [
            ("y", "id"),
            ("x", "name"),
        ]
        assert from_roots(graph_store, scope, ["x", "y"], include_invalid=True).facts == ()
        assert node_ids(neighbourhood(graph_store, scope, ["x"], depth=2)) == [(0, "x")]
        (got,) = get_entities(graph_store, scope, ["x"])
        assert (got.name, got.aliases, got.qualified_name, got.summary) == ("new-name", (), None, "new")
        assert (stats(graph_store, scope).entities, stats(graph_store, scope).facts) == (2, 0)
