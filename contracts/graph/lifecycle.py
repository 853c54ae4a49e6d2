"""Writes over time: invalidation applied twice or to an ended fact (validity never lengthens, never
revives), invalidation before a fact starts, delete then re-create of the same id (nothing of the
deleted one comes back), a change of `source` alone, and a store clock that moves between calls.

Troubleshooting: `fact.invalidate` sets `valid_to` only where it shortens validity (a fact already
ending earlier keeps its end, and the count leaves it out), and never before `valid_from` (a fact
invalidated before it starts ends at its start: it is never valid). `entity.delete` removes aliases,
facts and every index row of the entity, so a re-created id starts empty. Equality for `unchanged`
covers every stored field, `source` included. "Now" is read on every call, never once at open.
Since 1.2.0.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

from graphctx.contracts._markers import requires
from graphctx.contracts.graph._common import (
    DELETE,
    FACTS,
    FAR_FUTURE,
    FAR_PAST,
    FIND,
    FROM_ROOTS,
    GET,
    HASHES,
    INVALIDATE,
    NEIGHBOURHOOD,
    STATS,
    UPSERT,
    _GraphSubject,
    all_hashes,
    delete_entities,
    edge,
    ent,
    find_exact,
    from_roots,
    get_entities,
    ids,
    invalidate,
    load,
    neighbourhood,
    node_ids,
    stats,
    upsert_entities,
    upsert_facts,
    utc,
)
from graphctx.kernel import templates as t
from graphctx.kernel.ports import GraphStore
from graphctx.model import Fact
from graphctx.scope import Scope

T1 = datetime(2024, 6, 1, 12, 0, 0, 250_001, tzinfo=UTC)


def _valid_to(store: GraphStore, scope: Scope, root: str, fact_id: str) -> datetime | None:
    (fact,) = [f for f in from_roots(store, scope, [root], include_invalid=True).facts if f.id == fact_id]
    return utc(fact.valid_to)


class LifecycleTests(_GraphSubject):
    """What repeated and late writes do (module docstring). Since 1.2.0."""

    @requires(UPSERT, FACTS, INVALIDATE, FROM_ROOTS)
    def test_invalidate_twice_never_lengthens(self, graph_store: GraphStore, scope: Scope) -> None:
        """A second invalidation with a later instant changes nothing (count 0); one with an earlier
        instant shortens again (count 1)."""
        load(graph_store, scope, [ent("a"), ent("b")], [edge("a", "b", id="f")])
        assert invalidate(graph_store, scope, ["f"], T1) == 1
        assert invalidate(graph_store, scope, ["f"], T1 + timedelta(days=30)) == 0
        assert invalidate(graph_store, scope, ["f"], T1) == 0
        assert _valid_to(graph_store, scope, "a", "f") == T1, "a later invalidation lengthened validity"
        earlier = T1 - timedelta(microseconds=1)
        assert invalidate(graph_store, scope, ["f"], earlier) == 1
        assert _valid_to(graph_store, scope, "a", "f") == earlier

    @requires(UPSERT, FACTS, INVALIDATE, FROM_ROOTS, NEIGHBOURHOOD, STATS)
    def test_invalidate_an_ended_fact_never_revives_it(self, graph_store: GraphStore, scope: Scope) -> None:
        """Invalidating a fact that already ended (now, or later than its end) leaves it ended."""
        load(
            graph_store,
            scope,
            [ent("a"), ent("b")],
            [edge("a", "b", id="ended", valid_from=FAR_PAST, valid_to=T1), edge("b", "a", id="open")],
        )
        assert invalidate(graph_store, scope, ["ended"], datetime.now(UTC)) == 0
        assert invalidate(graph_store, scope, ["ended"], FAR_FUTURE) == 0
        assert _valid_to(graph_store, scope, "a", "ended") == T1
        assert ids(from_roots(graph_store, scope, ["a"], direction="out").facts) == []
        assert node_ids(neighbourhood(graph_store, scope, ["a"], direction="out")) == [(0, "a")]
        assert stats(graph_store, scope).valid_facts == 1

    @requires(UPSERT, FACTS, INVALIDATE, FROM_ROOTS)
    def test_invalidate_before_a_fact_starts_ends_it_at_its_start(
        self, graph_store: GraphStore, scope: Scope
    ) -> None:
        """A fact invalidated at an instant before its valid_from ends at its valid_from: it stays
        readable (valid_to is never before valid_from) and is valid at no instant."""
        start = T1 + timedelta(days=10)
        load(graph_store, scope, [ent("a"), ent("b")], [edge("a", "b", id="planned", valid_from=start)])
        assert invalidate(graph_store, scope, ["planned"], T1) == 1
        (fact,) = from_roots(graph_store, scope, ["a"], include_invalid=True).facts
        assert (utc(fact.valid_from), utc(fact.valid_to)) == (start, start)
        for as_of in (T1, start, start + timedelta(days=1)):
            assert from_roots(graph_store, scope, ["a"], as_of=as_of).facts == (), as_of
        assert invalidate(graph_store, scope, ["planned"], T1) == 0

    @requires(UPSERT, FACTS, DELETE, GET, FIND, FROM_ROOTS, NEIGHBOURHOOD, HASHES, STATS)
    def test_delete_then_recreate_brings_nothing_back(self, graph_store: GraphStore, scope: Scope) -> None:
        """An id deleted and written again starts empty: no alias, name, qualified name or fact of the
        deleted entity finds or reaches it."""
        old = ent("x", "old-name", aliases=("old-alias", "shared"), qualified_name="pkg.old", summary="old")
        load(
            graph_store,
            scope,
            [old, ent("y"), ent("z")],
            [
                edge("x", "y", "uses"),
                edge("z", "x", "owns"),
                Fact(subject_id="x", predicate="note", value="old note"),
                edge("y", "z", "uses"),
            ],
        )
        delete_entities(graph_store, scope, ["x"])
        new = ent("x", "new-name", summary="new")
        assert upsert_entities(graph_store, scope, [new]) == t.UpsertResult(created=1)
        assert find_exact(graph_store, scope, ["old-name", "old-alias", "shared", "pkg.old"]) == []
        assert [(m.entity.id, m.field) for m in find_exact(graph_store, scope, ["new-name", "x"])] == [
            ("x", "id")
        ]
        assert from_roots(graph_store, scope, ["x"], include_invalid=True).facts == ()
        assert node_ids(neighbourhood(graph_store, scope, ["x"], depth=2)) == [(0, "x")]
        (got,) = get_entities(graph_store, scope, ["x"])
        assert (got.name, got.aliases, got.qualified_name, got.summary) == ("new-name", (), None, "new")
        assert dict(all_hashes(graph_store, scope))["x"] == new.content_hash
        assert (stats(graph_store, scope).entities, stats(graph_store, scope).facts) == (3, 1)

    @requires(UPSERT, FACTS, GET, FROM_ROOTS)
    def test_a_change_of_source_alone_is_an_update(self, graph_store: GraphStore, scope: Scope) -> None:
        """Changing only `source` (an entity's or a fact's) is reported updated and stored."""
        load(
            graph_store, scope, [ent("a", source="import-1"), ent("b")], [edge("a", "b", id="f", source="s1")]
        )
        assert upsert_entities(graph_store, scope, [ent("a", source="import-2")]) == t.UpsertResult(updated=1)
        assert get_entities(graph_store, scope, ["a"])[0].source == "import-2"
        assert upsert_facts(graph_store, scope, [edge("a", "b", id="f", source="s2")]) == t.UpsertResult(
            updated=1
        )
        assert [f.source for f in from_roots(graph_store, scope, ["a"]).facts] == ["s2"]

    @requires(UPSERT, FACTS, FROM_ROOTS, NEIGHBOURHOOD, STATS)
    def test_now_moves_between_calls(self, graph_store: GraphStore, scope: Scope) -> None:
        """`as_of=None` is the store's current time at each call, not a time fixed when it opened: a
        fact that ended after the store opened is no longer valid, one that started since is."""
        time.sleep(0.02)  # the store was opened before this instant
        since_open = datetime.now(UTC)
        load(
            graph_store,
            scope,
            [ent("a"), ent("gone"), ent("new")],
            [
                edge("a", "gone", "uses", id="ended", valid_to=since_open),
                edge("a", "new", "uses", id="started", valid_from=since_open),
            ],
        )
        while datetime.now(UTC) <= since_open:  # pragma: no cover - a coarse system clock
            time.sleep(0.001)
        assert ids(from_roots(graph_store, scope, ["a"]).facts) == ["started"]
        assert node_ids(neighbourhood(graph_store, scope, ["a"])) == [(0, "a"), (1, "new")]
        assert stats(graph_store, scope).valid_facts == 1
