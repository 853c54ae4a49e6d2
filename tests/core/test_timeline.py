"""Supersession rules of single-valued predicates (graphctx.timeline), without a store."""

from __future__ import annotations

from datetime import UTC, datetime

from graphctx.model import SINGLE_VALUED, Fact
from graphctx.timeline import resolve, successors

NOW = datetime(2025, 11, 1, tzinfo=UTC)
T1, T2, T3 = (datetime(2025, m, 1, tzinfo=UTC) for m in (2, 5, 8))


def owner(team: str, start: datetime | None = None, end: datetime | None = None) -> Fact:
    dates = {k: v for k, v in (("valid_from", start), ("valid_to", end)) if v is not None}
    return Fact(subject_id="svc", predicate="owned_by", object_id=team, **dates)  # as a record omits them


def given(*facts: Fact) -> list[frozenset[str]]:
    return [frozenset(f.model_fields_set) for f in facts]


def test_a_new_current_value_ends_the_stored_one_at_its_start():
    old, new = owner("a", T1), owner("b", T2)
    tl = resolve([new], given(new), [old], SINGLE_VALUED, NOW)
    assert tl.ends == {old.id: T2}
    assert [(s.fact_id, s.by) for s in tl.superseded] == [(old.id, new.id)]
    assert tl.facts[0].valid_to is None


def test_an_undated_new_value_starts_now_when_another_is_current():
    old, new = owner("a"), owner("b")
    tl = resolve([new], given(new), [old], SINGLE_VALUED, NOW)
    assert tl.facts[0].valid_from == NOW and tl.ends == {old.id: NOW}
    assert tl.facts[0].id == new.id  # the id stays the record's own, so a re-run finds it


def test_backfilled_history_ends_where_the_stored_value_starts():
    current, past = owner("b", T2), owner("a", T1)
    tl = resolve([past], given(past), [current], SINGLE_VALUED, NOW)
    assert tl.facts[0].valid_to == T2 and tl.ends == {}


def test_ends_only_shorten_and_closed_periods_are_left_alone():
    closed, new = owner("a", T1, T2), owner("b", T3)
    tl = resolve([new], given(new), [closed], SINGLE_VALUED, NOW)
    assert tl.ends == {} and tl.superseded == []
    longer = owner("a", T1, datetime(2026, 1, 1, tzinfo=UTC))
    tl = resolve([new], given(new), [longer], SINGLE_VALUED, NOW)
    assert tl.ends == {longer.id: T3}


def test_a_record_that_omits_validity_keeps_the_stored_one():
    stored = owner("a").model_copy(update={"valid_from": T1, "valid_to": T2})
    again = owner("a")  # the same record as first remembered: no dates
    tl = resolve([again], given(again), [stored], SINGLE_VALUED, NOW)
    assert (tl.facts[0].valid_from, tl.facts[0].valid_to) == (T1, T2)


def test_multi_valued_predicates_never_supersede():
    a = Fact(subject_id="svc", predicate="depends_on", object_id="db")
    b = Fact(subject_id="svc", predicate="depends_on", object_id="cache")
    tl = resolve([b], given(b), [a], SINGLE_VALUED, NOW)
    assert tl.ends == {} and tl.facts == [b]


def test_on_call_is_single_valued_per_service():
    alice = Fact(subject_id="alice", predicate="on_call_for", object_id="checkout", valid_from=T1)
    bob = Fact(subject_id="bob", predicate="on_call_for", object_id="checkout", valid_from=T2)
    tl = resolve([bob], given(bob), [alice], SINGLE_VALUED, NOW)
    assert tl.ends == {alice.id: T2}
    ended = alice.model_copy(update={"valid_to": T2})
    assert successors([ended, bob], SINGLE_VALUED) == {alice.id: bob}
