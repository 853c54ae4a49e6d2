"""The fact templates: fact.upsert, fact.invalidate and fact.from_roots."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from graphctx.contracts import datasets
from graphctx.contracts._markers import requires
from graphctx.contracts.graph._common import (
    AFTER_T0,
    FACTS,
    FAR_FUTURE,
    FAR_PAST,
    FROM_ROOTS,
    INVALIDATE,
    NEIGHBOURHOOD,
    STATS,
    UPSERT,
    _GraphSubject,
    edge,
    ent,
    expected_fact,
    expected_from_roots,
    fact_view,
    from_roots,
    ids,
    invalidate,
    load,
    memory,
    neighbourhood,
    node_ids,
    stats,
    upsert_entities,
    upsert_facts,
    utc,
    valid_at,
)
from graphctx.kernel import templates as t
from graphctx.kernel.ports import GraphStore
from graphctx.model import Fact, code_edge_id, legacy_fact_id
from graphctx.scope import Scope

# ---- fact.upsert ------------------------------------------------------------------------------


class FactUpsertTests(_GraphSubject):
    """fact.upsert: insert or replace facts whose endpoints exist in the scope."""

    @requires(UPSERT, FACTS, FROM_ROOTS)
    def test_fact_upsert_visible_to_next_run(self, graph_store: GraphStore, scope: Scope) -> None:
        """Upserted facts are counted as created and returned with every field, in the caller's scope."""
        entities, facts = memory()
        upsert_entities(graph_store, scope, entities)
        assert upsert_facts(graph_store, scope, facts) == t.UpsertResult(created=len(facts))
        got = from_roots(graph_store, scope, ids(entities), include_invalid=True)
        expected = expected_from_roots(facts, ids(entities))
        assert [fact_view(f) for f in got.facts] == [expected_fact(f, scope) for f in expected]

    @requires(UPSERT, FACTS, FROM_ROOTS)
    def test_fact_upsert_keeps_given_id(self, graph_store: GraphStore, scope: Scope) -> None:
        """A fact keeps the id it was given."""
        load(graph_store, scope, [ent("a"), ent("b")], [edge("a", "b", id="fact-1")])
        assert ids(from_roots(graph_store, scope, ["a"]).facts) == ["fact-1"]

    @requires(UPSERT, FACTS, FROM_ROOTS, STATS)
    def test_fact_upsert_replace_by_id(self, graph_store: GraphStore, scope: Scope) -> None:
        """Upserting an existing fact id replaces the fact (reported updated), never adds a second row."""
        load(graph_store, scope, [ent("a"), ent("b"), ent("c")], [edge("a", "b", id="f1")])
        new = edge("a", "c", "depends_on", id="f1", confidence=0.5, source="agent", valid_to=FAR_FUTURE)
        assert upsert_facts(graph_store, scope, [new]) == t.UpsertResult(updated=1)
        got = from_roots(graph_store, scope, ["a", "b", "c"], include_invalid=True).facts
        assert [fact_view(f) for f in got] == [expected_fact(new, scope)]
        assert stats(graph_store, scope).facts == 1

    @requires(UPSERT, FACTS)
    def test_fact_upsert_identical_reports_unchanged(self, graph_store: GraphStore, scope: Scope) -> None:
        """Re-upserting facts equal in every field but timestamps reports them unchanged."""
        entities, facts = memory()
        load(graph_store, scope, entities, facts)
        again = [f.model_copy(update={"updated_at": datasets.T_NOW}) for f in facts]
        assert upsert_facts(graph_store, scope, again) == t.UpsertResult(unchanged=len(facts))

    @requires(UPSERT, FACTS, FROM_ROOTS)
    def test_fact_upsert_value_only_fact(self, graph_store: GraphStore, scope: Scope) -> None:
        """A fact with a literal value and no object needs only its subject and is returned as given."""
        note = Fact(
            subject_id="a", predicate="note", value="remember the milk", source="cli", confidence=0.25
        )
        load(graph_store, scope, [ent("a")], [note])
        got = from_roots(graph_store, scope, ["a"], direction="out").facts
        assert [fact_view(f) for f in got] == [expected_fact(note, scope)]

    @requires(UPSERT, FACTS, FROM_ROOTS)
    def test_fact_upsert_sets_timestamps(self, graph_store: GraphStore, scope: Scope) -> None:
        """A stored fact has created_at and updated_at; a replace keeps created_at."""
        load(graph_store, scope, [ent("a"), ent("b")], [edge("a", "b", id="f1", created_at=datasets.T0)])
        upsert_facts(graph_store, scope, [edge("a", "b", id="f1", confidence=0.5)])
        (got,) = from_roots(graph_store, scope, ["a"]).facts
        assert got.confidence == 0.5
        assert utc(got.created_at) == datasets.T0
        assert got.updated_at is not None

    @requires(UPSERT, FACTS, FROM_ROOTS)
    def test_fact_upsert_timestamps_follow_the_rules(self, graph_store: GraphStore, scope: Scope) -> None:
        """A new fact keeps the created_at and updated_at it is given; a replace keeps the stored
        created_at and takes the updated_at it is given (or the current time); an unchanged fact keeps
        both. Since 1.5.0."""
        load(graph_store, scope, [ent("a"), ent("b")])

        def stamps() -> tuple[datetime | None, datetime | None]:
            (got,) = from_roots(graph_store, scope, ["a"], include_invalid=True).facts
            return utc(got.created_at), utc(got.updated_at)

        first = edge("a", "b", id="f", created_at=datasets.T0, updated_at=datasets.T0)
        assert upsert_facts(graph_store, scope, [first]) == t.UpsertResult(created=1)
        assert stamps() == (datasets.T0, datasets.T0)
        changed = first.model_copy(
            update={"confidence": 0.5, "created_at": datasets.T_NOW, "updated_at": datasets.T_CHANGE}
        )
        assert upsert_facts(graph_store, scope, [changed]) == t.UpsertResult(updated=1)
        assert stamps() == (datasets.T0, datasets.T_CHANGE), "a replace takes the updated_at it is given"
        same = changed.model_copy(update={"created_at": datasets.T_NOW, "updated_at": datasets.T_NOW})
        assert upsert_facts(graph_store, scope, [same]) == t.UpsertResult(unchanged=1)
        assert stamps() == (datasets.T0, datasets.T_CHANGE), "an unchanged fact keeps its timestamps"
        before = datetime.now(UTC) - timedelta(minutes=5)
        again = changed.model_copy(update={"confidence": 0.25, "created_at": None, "updated_at": None})
        assert upsert_facts(graph_store, scope, [again]) == t.UpsertResult(updated=1)
        created, updated = stamps()
        assert created == datasets.T0
        assert updated is not None and updated >= before, "a replace without updated_at is stamped now"

    @requires(UPSERT, FACTS, FROM_ROOTS)
    def test_fact_upsert_a_change_of_any_one_field_is_an_update(
        self, graph_store: GraphStore, scope: Scope
    ) -> None:
        """Changing any one stored field of a fact -- value, confidence, valid_from, valid_to (set,
        moved by a microsecond, cleared), predicate, object -- is reported updated and read back;
        writing it again is unchanged. Since 1.5.0."""
        tick = timedelta(microseconds=1)
        fact = edge(
            "a", "b", "depends_on", id="f", value="v1", confidence=0.5, source="s",
            valid_from=datasets.T0, valid_to=FAR_FUTURE,
        )  # fmt: skip
        load(graph_store, scope, [ent("a"), ent("b"), ent("c")], [fact])
        changes = [
            {"value": "v2"},
            {"value": None},
            {"confidence": 0.75},
            {"valid_from": datasets.T0 + tick},
            {"valid_from": None},
            {"valid_to": FAR_FUTURE - tick},
            {"valid_to": None},
            {"valid_from": datasets.T0, "valid_to": datasets.T_CHANGE},
            {"predicate": "uses"},
            {"object_id": "c"},
        ]
        for change in changes:
            fact = Fact.model_validate({**fact.model_dump(), **change})
            assert upsert_facts(graph_store, scope, [fact]) == t.UpsertResult(updated=1), change
            got = from_roots(graph_store, scope, ["a", "b", "c"], include_invalid=True).facts
            assert [fact_view(f) for f in got] == [expected_fact(fact, scope)], change
            assert upsert_facts(graph_store, scope, [fact]) == t.UpsertResult(unchanged=1), change

    @requires(UPSERT, FACTS, FROM_ROOTS, STATS)
    def test_fact_upsert_batch_repeating_an_id_applies_in_order(
        self, graph_store: GraphStore, scope: Scope
    ) -> None:
        """A batch that names one fact id several times applies its versions in order: each is counted
        against what the one before it left (created, then updated or unchanged), the last one is
        stored, and it stays one fact. Since 1.5.0."""
        load(graph_store, scope, [ent("a"), ent("b")])
        v1, v2 = edge("a", "b", id="f", confidence=0.5), edge("a", "b", id="f", confidence=0.75)
        assert upsert_facts(graph_store, scope, [v1, v2, v2]) == t.UpsertResult(
            created=1, updated=1, unchanged=1
        )
        assert [fact_view(f) for f in from_roots(graph_store, scope, ["a"]).facts] == [
            expected_fact(v2, scope)
        ]
        assert upsert_facts(graph_store, scope, [v2, v1]) == t.UpsertResult(updated=1, unchanged=1)
        assert [fact_view(f) for f in from_roots(graph_store, scope, ["a"]).facts] == [
            expected_fact(v1, scope)
        ]
        assert stats(graph_store, scope).facts == 1

    @requires(UPSERT, FACTS, FROM_ROOTS)
    def test_fact_upsert_empty_batch_changes_nothing(self, graph_store: GraphStore, scope: Scope) -> None:
        """An empty batch reports zero counts and leaves the facts as they were."""
        load(graph_store, scope, [ent("a"), ent("b")], [edge("a", "b")])
        assert upsert_facts(graph_store, scope, []) == t.UpsertResult()
        assert len(from_roots(graph_store, scope, ["a"]).facts) == 1


class FactPlacementTests(_GraphSubject):
    """Where a fact's stored version is found when it is written again. graphctx refuses (before any
    store sees it) an id of the derived form (`f_`/`e_` and 32 lowercase hex digits) that is not one of
    the fact's own derived ids, so a store may look a fact of a derived id up at its subject, under its
    predicate; an explicit id may hang anywhere and must still be found wherever it hangs: moved to
    another subject or predicate, it is one fact, reported updated, never two edges. Since 1.4.0."""

    @pytest.mark.parametrize("fact_id", ["moving", "f_" + "0123456789ABCDEF" * 2, "e_" + "0" * 31])
    @requires(UPSERT, FACTS, FROM_ROOTS, STATS)
    def test_fact_upsert_moves_explicit_id_between_subjects(
        self, graph_store: GraphStore, scope: Scope, fact_id: str
    ) -> None:
        """An explicit id (ids of nearly the derived form included) moved to another subject and
        predicate is found there, replaced once, and found again on its way back."""
        load(graph_store, scope, [ent("a"), ent("b"), ent("c")], [edge("a", "b", "depends_on", id=fact_id)])
        roots = ["a", "b", "c"]
        for moved in (edge("c", "b", "uses", id=fact_id, source="s2"), edge("a", "c", "owns", id=fact_id)):
            assert upsert_facts(graph_store, scope, [moved]) == t.UpsertResult(updated=1)
            assert upsert_facts(graph_store, scope, [moved]) == t.UpsertResult(unchanged=1)
            got = from_roots(graph_store, scope, roots, include_invalid=True).facts
            assert [fact_view(f) for f in got] == [expected_fact(moved, scope)]
            assert stats(graph_store, scope).facts == 1

    @requires(UPSERT, FACTS, FROM_ROOTS, STATS)
    def test_fact_upsert_finds_every_derived_id(self, graph_store: GraphStore, scope: Scope) -> None:
        """A fact under each of its derived ids -- the current one, the legacy one without its start
        (written before validity was part of identity) and the code indexer's edge id -- is found again:
        unchanged when equal, updated once when changed."""
        start = datetime(2024, 5, 1, tzinfo=UTC)
        current = edge("a", "b", "depends_on", valid_from=start)
        legacy = edge("a", "b", "uses", valid_from=start)
        legacy = legacy.model_copy(update={"id": legacy_fact_id(legacy)})
        code = edge("a", "b", "calls", value="3,9")
        code = code.model_copy(update={"id": code_edge_id("a", "calls", "b")})
        facts = [current, legacy, code]
        assert sorted(f.id for f in facts) == sorted({f.id for f in facts})  # three ids, three forms
        load(graph_store, scope, [ent("a"), ent("b")], facts)
        assert upsert_facts(graph_store, scope, facts) == t.UpsertResult(unchanged=3)
        changed = [f.model_copy(update={"confidence": 0.5}) for f in facts]
        assert upsert_facts(graph_store, scope, changed) == t.UpsertResult(updated=3)
        got = from_roots(graph_store, scope, ["a"], include_invalid=True).facts
        assert [fact_view(f) for f in got] == [
            expected_fact(f, scope) for f in expected_from_roots(changed, ["a"])
        ]
        assert stats(graph_store, scope).facts == 3

    @requires(UPSERT, FACTS, FROM_ROOTS, STATS)
    def test_fact_upsert_at_hub_subject(self, graph_store: GraphStore, scope: Scope) -> None:
        """At a subject with many facts of one predicate, a mixed batch -- unchanged, changed, new, and
        an explicit id moved onto the hub -- counts each right and leaves one edge per fact."""
        entities, facts = datasets.hub()
        moving = edge("leaf-in-000", "leaf-out-000", "depends_on", id="hub-moving")
        load(graph_store, scope, entities, [*facts, moving])
        out = [f for f in facts if f.subject_id == "hub"]
        batch = [
            out[7],
            out[11].model_copy(update={"confidence": 0.25}),
            edge("hub", "leaf-in-005", "depends_on"),
            moving.model_copy(update={"subject_id": "hub", "object_id": "leaf-out-003"}),
        ]
        assert upsert_facts(graph_store, scope, batch) == t.UpsertResult(created=1, updated=2, unchanged=1)
        assert stats(graph_store, scope).facts == len(facts) + 2
        got = from_roots(graph_store, scope, ["hub"], direction="out", include_invalid=True).facts
        want = {f.id: f for f in [*out, *batch]}  # the batch's versions replace the loaded ones
        assert [fact_view(f) for f in got] == [
            expected_fact(f, scope) for f in expected_from_roots(want.values(), ["hub"], direction="out")
        ]
        left = from_roots(graph_store, scope, ["leaf-in-000"], direction="out", include_invalid=True).facts
        assert "hub-moving" not in ids(left)


# ---- fact.invalidate --------------------------------------------------------------------------


class FactInvalidateTests(_GraphSubject):
    """fact.invalidate: sets valid_to; the rows are kept."""

    @requires(UPSERT, FACTS, INVALIDATE, FROM_ROOTS)
    def test_fact_invalidate_sets_valid_to_and_keeps_row(self, graph_store: GraphStore, scope: Scope) -> None:
        """An invalidated fact keeps its row, with valid_to set and every other field unchanged."""
        end = datetime(2025, 1, 1, tzinfo=UTC)
        fact = edge("a", "b", id="f1", valid_from=datasets.T0, source="s", confidence=0.75)
        load(graph_store, scope, [ent("a"), ent("b")], [fact])
        assert invalidate(graph_store, scope, ["f1"], end) == 1
        (got,) = from_roots(graph_store, scope, ["a"], include_invalid=True).facts
        want = fact.model_copy(update={"valid_to": end})
        assert fact_view(got) == expected_fact(want, scope)

    @requires(UPSERT, FACTS, INVALIDATE, FROM_ROOTS)
    def test_fact_invalidate_of_no_ids_ends_nothing(self, graph_store: GraphStore, scope: Scope) -> None:
        """`invalidate([], t)` counts zero and every fact stays as it was (an update whose id filter
        is left out for an empty list ends every fact of the scope). Since 1.6.0."""
        entities, facts = memory()
        load(graph_store, scope, entities, facts)
        before = from_roots(graph_store, scope, ids(entities), include_invalid=True).facts
        assert invalidate(graph_store, scope, [], FAR_PAST) == 0
        assert from_roots(graph_store, scope, ids(entities), include_invalid=True).facts == before

    @requires(UPSERT, FACTS, INVALIDATE, FROM_ROOTS)
    def test_fact_invalidate_ends_validity(self, graph_store: GraphStore, scope: Scope) -> None:
        """After invalidation the fact is valid before valid_to and not from valid_to on."""
        end = FAR_PAST + timedelta(days=365)
        load(graph_store, scope, [ent("a"), ent("b")], [edge("a", "b", id="f1")])
        invalidate(graph_store, scope, ["f1"], end)
        assert ids(from_roots(graph_store, scope, ["a"], as_of=end - timedelta(seconds=1)).facts) == ["f1"]
        assert from_roots(graph_store, scope, ["a"], as_of=end).facts == ()
        assert from_roots(graph_store, scope, ["a"]).facts == ()  # now is after 2002

    @requires(UPSERT, FACTS, INVALIDATE, FROM_ROOTS, NEIGHBOURHOOD)
    def test_fact_invalidate_visible_to_reads_made_before(
        self, graph_store: GraphStore, scope: Scope
    ) -> None:
        """A fact read before its invalidation is no longer valid in the next read."""
        load(graph_store, scope, [ent("a"), ent("b")], [edge("a", "b", id="f1")])
        assert ids(from_roots(graph_store, scope, ["a"]).facts) == ["f1"]
        assert node_ids(neighbourhood(graph_store, scope, ["a"])) == [(0, "a"), (1, "b")]
        invalidate(graph_store, scope, ["f1"], FAR_PAST)
        assert from_roots(graph_store, scope, ["a"]).facts == ()
        assert node_ids(neighbourhood(graph_store, scope, ["a"])) == [(0, "a")]
        (kept,) = from_roots(graph_store, scope, ["a"], include_invalid=True).facts
        assert utc(kept.valid_to) == FAR_PAST

    @requires(UPSERT, FACTS, INVALIDATE, FROM_ROOTS)
    def test_fact_invalidate_counts_only_known_ids(self, graph_store: GraphStore, scope: Scope) -> None:
        """The count is the number of facts invalidated; unknown ids are ignored."""
        load(graph_store, scope, [ent("a"), ent("b")], [edge("a", "b", id="f1"), edge("b", "a", id="f2")])
        assert invalidate(graph_store, scope, ["f1", "missing"], FAR_PAST) == 1
        assert invalidate(graph_store, scope, ["missing"], FAR_PAST) == 0
        assert ids(from_roots(graph_store, scope, ["a"]).facts) == ["f2"]

    @requires(UPSERT, FACTS, INVALIDATE, STATS)
    def test_fact_invalidate_updates_stats(self, graph_store: GraphStore, scope: Scope) -> None:
        """Invalidation lowers valid_facts and keeps the fact count."""
        load(graph_store, scope, [ent("a"), ent("b")], [edge("a", "b", id="f1"), edge("b", "a", id="f2")])
        invalidate(graph_store, scope, ["f1"], FAR_PAST)
        got = stats(graph_store, scope)
        assert (got.facts, got.valid_facts) == (2, 1)


# ---- fact.from_roots --------------------------------------------------------------------------


class FactsFromRootsTests(_GraphSubject):
    """fact.from_roots: facts touching the roots, valid at as_of unless include_invalid."""

    @requires(UPSERT, FACTS, INVALIDATE, FROM_ROOTS)
    def test_facts_from_roots_compares_instants_not_wall_clocks(
        self, graph_store: GraphStore, scope: Scope
    ) -> None:
        """Instants given with any UTC offset mean that instant: a fact from 10:00Z is not valid at
        11:30+02:00 (09:30Z) and is at 12:30+02:00; a start given at -05:00 reads back as the same
        instant; an end given at +02:00 ends it then. Since 1.6.0."""
        plus2, minus5 = timezone(timedelta(hours=2)), timezone(timedelta(hours=-5))
        start = datetime(2025, 3, 1, 10, 0, tzinfo=UTC)
        facts = [
            edge("a", "b", id="f1", valid_from=start),
            edge("a", "c", id="f2", valid_from=datetime(2025, 3, 1, 7, 0, tzinfo=minus5)),  # 12:00Z
        ]
        load(graph_store, scope, [ent("a"), ent("b"), ent("c")], facts)
        at = datetime(2025, 3, 1, 11, 30, tzinfo=plus2)
        assert from_roots(graph_store, scope, ["a"], as_of=at).facts == ()
        assert ids(from_roots(graph_store, scope, ["a"], as_of=at + timedelta(hours=1)).facts) == ["f1"]
        got = {f.id: f.valid_from for f in from_roots(graph_store, scope, ["a"], include_invalid=True).facts}
        assert got["f2"] == datetime(2025, 3, 1, 12, 0, tzinfo=UTC)
        assert invalidate(graph_store, scope, ["f1"], datetime(2025, 3, 1, 14, 0, tzinfo=plus2)) == 1
        assert ids(
            from_roots(graph_store, scope, ["a"], as_of=datetime(2025, 3, 1, 11, 59, tzinfo=UTC)).facts
        ) == ["f1"]
        noon = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)  # f1 has ended, f2 has begun
        assert ids(from_roots(graph_store, scope, ["a"], as_of=noon).facts) == ["f2"]

    @pytest.mark.parametrize("direction", ["out", "in", "both"])
    @requires(UPSERT, FACTS, FROM_ROOTS)
    def test_facts_from_roots_follows_direction(
        self, graph_store: GraphStore, scope: Scope, direction: str
    ) -> None:
        """out: facts whose subject is a root; in: whose object is a root; both: either, each once."""
        entities, facts = memory()
        load(graph_store, scope, entities, facts)
        for roots in (["svc-checkout"], ["db-redis"], ["svc-checkout", "svc-pay"], ["adr-12", "inc-1"]):
            got = from_roots(graph_store, scope, roots, direction=direction, include_invalid=True)
            assert ids(got.facts) == ids(expected_from_roots(facts, roots, direction=direction)), roots
            assert got.truncated is False

    @requires(UPSERT, FACTS, FROM_ROOTS)
    def test_facts_from_roots_valid_at_as_of(self, graph_store: GraphStore, scope: Scope) -> None:
        """Only facts valid at as_of come back: ownership moves and the Redis dependency ends on T_CHANGE."""
        entities, facts = memory()
        load(graph_store, scope, entities, facts)
        for as_of in (datasets.T0, AFTER_T0, datasets.T_CHANGE, datasets.T_NOW):
            got = from_roots(graph_store, scope, ["svc-checkout"], as_of=as_of)
            assert ids(got.facts) == ids(expected_from_roots(facts, ["svc-checkout"], as_of=as_of)), as_of
        owners = from_roots(graph_store, scope, ["svc-checkout"], predicates=("owned_by",), as_of=AFTER_T0)
        assert [f.object_id for f in owners.facts] == ["team-pay"]
        owners = from_roots(
            graph_store, scope, ["svc-checkout"], predicates=("owned_by",), as_of=datasets.T_NOW
        )
        assert [f.object_id for f in owners.facts] == ["team-com"]

    @requires(UPSERT, FACTS, FROM_ROOTS)
    def test_facts_from_roots_validity_half_open(self, graph_store: GraphStore, scope: Scope) -> None:
        """A fact is valid from valid_from inclusive to valid_to exclusive."""
        start, end = datetime(2024, 1, 1, tzinfo=UTC), datetime(2024, 2, 1, tzinfo=UTC)
        load(
            graph_store,
            scope,
            [ent("a"), ent("b")],
            [edge("a", "b", id="f1", valid_from=start, valid_to=end)],
        )
        tick = timedelta(seconds=1)
        for as_of, valid in ((start - tick, False), (start, True), (end - tick, True), (end, False)):
            assert ids(from_roots(graph_store, scope, ["a"], as_of=as_of).facts) == (
                ["f1"] if valid else []
            ), as_of

    @requires(UPSERT, FACTS, FROM_ROOTS)
    def test_facts_from_roots_default_as_of_is_now(self, graph_store: GraphStore, scope: Scope) -> None:
        """Without as_of, facts ended in the past and facts starting in the future are left out."""
        load(
            graph_store,
            scope,
            [ent("a"), ent("b")],
            [
                edge("a", "b", "owns", id="ended", valid_to=FAR_PAST),
                edge("a", "b", "uses", id="future", valid_from=FAR_FUTURE),
                edge("a", "b", "leads", id="open", valid_from=FAR_PAST),
            ],
        )
        assert ids(from_roots(graph_store, scope, ["a"]).facts) == ["open"]

    @pytest.mark.parametrize("direction", ["out", "in", "both"])
    @requires(UPSERT, FACTS, FROM_ROOTS)
    def test_facts_from_roots_validity_in_every_direction(
        self, graph_store: GraphStore, scope: Scope, direction: str
    ) -> None:
        """Validity applies to the facts entering the roots as to those leaving them: ended and future
        facts are left out either way, now and at a given instant, and a bounded fact is valid from its
        valid_from (inclusive) to its valid_to (exclusive) in either direction. Since 1.5.0."""
        start = datetime(2024, 1, 1, 8, 0, 0, 1, tzinfo=UTC)
        end = datetime(2024, 2, 1, 8, 0, 0, 1, tzinfo=UTC)
        window = {
            "ended": {"valid_to": FAR_PAST},
            "open": {},
            "future": {"valid_from": FAR_FUTURE},
            "bounded": {"valid_from": start, "valid_to": end},
        }
        facts = [
            *(edge("r", f"out-{w}", "uses", id=f"out-{w}", **v) for w, v in window.items()),
            *(edge(f"in-{w}", "r", "uses", id=f"in-{w}", **v) for w, v in window.items()),
        ]
        others = [ent(f"{d}-{w}") for d in ("in", "out") for w in window]
        load(graph_store, scope, [ent("r"), *others], facts)
        tick = timedelta(microseconds=1)
        for as_of in (None, AFTER_T0, FAR_FUTURE, FAR_PAST - tick, start - tick, start, end - tick, end):
            got = from_roots(graph_store, scope, ["r"], direction=direction, as_of=as_of)
            when = datetime.now(UTC) if as_of is None else as_of
            want = [f for f in expected_from_roots(facts, ["r"], direction=direction) if valid_at(f, when)]
            assert ids(got.facts) == ids(want), as_of

    @pytest.mark.parametrize("direction", ["out", "in", "both"])
    @requires(UPSERT, FACTS, FROM_ROOTS)
    def test_facts_from_roots_limit_keeps_catalogue_order_across_roots(
        self, graph_store: GraphStore, scope: Scope, direction: str
    ) -> None:
        """With several roots, `limit` keeps the first facts of the whole answer in catalogue order
        (subject, predicate, object, id) -- not the first of each root, nor of an order missing one of
        its keys, whichever end the roots are -- at every cut position. Since 1.5.0."""
        facts = [
            # out of r1: predicate order is not object order, object order is not id order, and one
            # relation three times
            edge("r1", "a1", "uses", id="o1"),
            edge("r1", "a2", "uses", id="o2"),
            edge("r1", "z1", "calls", id="o6c"),
            edge("r1", "z2", "calls", id="o6b"),
            edge("r1", "z3", "calls", id="o6a"),
            edge("r1", "m", "owns", id="o9"),
            edge("r1", "m", "owns", id="o7"),
            edge("r1", "m", "owns", id="o8"),
            # out of r2 and r3, to objects that sort before r1's
            edge("r2", "0a", "calls", id="o5"),
            edge("r2", "0b", "calls", id="o4"),
            edge("r3", "0a", "calls", id="o0"),
            # into the roots: the same kinds of disagreement between the keys
            edge("x0", "r1", "uses", id="i1"),
            edge("x0", "r2", "uses", id="i2"),
            edge("x0", "r3", "calls", id="i4"),
            edge("x0", "r3", "calls", id="i3"),
            edge("y", "r1", "calls", id="k3"),
            edge("y", "r2", "calls", id="k2"),
            edge("y", "r3", "calls", id="k1"),
            edge("zz", "r1", "affected", id="j1"),
            edge("zz", "r2", "affected", id="j2"),
            # between two roots
            edge("r1", "r2", "uses", id="b1"),
        ]
        names = ("r1", "r2", "r3", "a1", "a2", "z1", "z2", "z3", "m", "0a", "0b", "x0", "y", "zz")
        load(graph_store, scope, [ent(i) for i in names], facts)
        roots = ["r3", "r1", "r2"]
        want = ids(expected_from_roots(facts, roots, direction=direction))
        for limit in range(1, len(want) + 1):
            got = from_roots(graph_store, scope, roots, direction=direction, limit=limit)
            assert (ids(got.facts), got.truncated) == (want[:limit], limit < len(want)), limit

    @requires(UPSERT, FACTS, FROM_ROOTS)
    def test_facts_from_roots_include_invalid(self, graph_store: GraphStore, scope: Scope) -> None:
        """include_invalid returns every fact touching the roots, ended and future ones too."""
        load(
            graph_store,
            scope,
            [ent("a"), ent("b")],
            [
                edge("a", "b", "owns", id="ended", valid_to=FAR_PAST),
                edge("a", "b", "uses", id="future", valid_from=FAR_FUTURE),
            ],
        )
        got = from_roots(graph_store, scope, ["a"], include_invalid=True)
        assert ids(got.facts) == ["ended", "future"]
        got = from_roots(graph_store, scope, ["a"], include_invalid=True, as_of=datasets.T0)
        assert ids(got.facts) == ["ended", "future"]

    @requires(UPSERT, FACTS, FROM_ROOTS)
    def test_facts_from_roots_filters_predicates(self, graph_store: GraphStore, scope: Scope) -> None:
        """A predicate list keeps only facts with those predicates."""
        entities, facts = memory()
        load(graph_store, scope, entities, facts)
        for predicates in (("depends_on",), ("owned_by", "affected"), ("leads",)):
            got = from_roots(
                graph_store, scope, ["svc-checkout"], predicates=predicates, include_invalid=True
            )
            want = expected_from_roots(facts, ["svc-checkout"], predicates=predicates)
            assert ids(got.facts) == ids(want), predicates

    @requires(UPSERT, FACTS, FROM_ROOTS)
    def test_facts_from_roots_ordered_by_subject_predicate_object_id(
        self, graph_store: GraphStore, scope: Scope
    ) -> None:
        """Facts are ordered by (subject_id, predicate, object_id, id), whatever the insertion order."""
        entities = [ent(i) for i in ("r", "a", "b", "c")]
        facts = [
            edge("r", "c", "uses", id="f9"),
            edge("b", "r", "calls", id="f1"),
            edge("r", "a", "uses", id="f2"),
            edge("r", "a", "calls", id="f8"),
            edge("a", "r", "uses", id="f3"),
            edge("r", "a", "uses", id="f0"),
        ]
        load(graph_store, scope, entities, facts)
        got = from_roots(graph_store, scope, ["r"])
        assert ids(got.facts) == ["f3", "f1", "f8", "f0", "f2", "f9"]

    @requires(UPSERT, FACTS, FROM_ROOTS)
    def test_facts_from_roots_unknown_roots_return_nothing(
        self, graph_store: GraphStore, scope: Scope
    ) -> None:
        """Roots that do not exist in the scope match nothing, not an error."""
        load(graph_store, scope, *memory())
        got = from_roots(graph_store, scope, ["missing", "svc-"], include_invalid=True)
        assert (got.facts, got.truncated) == ((), False)
