"""fact.upsert's id rule: an explicit id of the derived form (f_/e_ + 32 lowercase hex) must be one of
the fact's own derived ids, for every store alike (the template's parameters and the service's write
plan refuse it), so a store may look such a fact up at its subject."""

from datetime import UTC, datetime

import pytest

from graphctx.errors import InputError
from graphctx.kernel.templates import FactUpsertParams
from graphctx.model import Fact, code_edge_id, default_fact_id, derived_fact_ids, legacy_fact_id
from graphctx.writes import WritePlan

START = datetime(2024, 5, 1, tzinfo=UTC)
OWNS = Fact(subject_id="a", predicate="owns", object_id="b", valid_from=START)


def test_a_fact_has_three_derived_ids_each_starting_from_its_subject_and_predicate() -> None:
    assert derived_fact_ids(OWNS) == {
        default_fact_id(OWNS),
        legacy_fact_id(OWNS),
        code_edge_id("a", "owns", "b"),
    }
    assert default_fact_id(OWNS) != legacy_fact_id(OWNS)  # the start is part of the current id
    value_only = Fact(subject_id="a", predicate="note", value="x")
    assert derived_fact_ids(value_only) == {value_only.id}  # no object: no code-edge id, no start


@pytest.mark.parametrize(
    "fact_id",
    [default_fact_id(OWNS), legacy_fact_id(OWNS), code_edge_id("a", "owns", "b")],
    ids=["current", "legacy", "code-edge"],
)
def test_each_own_derived_id_is_accepted(fact_id: str) -> None:
    fact = OWNS.model_copy(update={"id": fact_id})
    assert FactUpsertParams(facts=(fact,)).facts == (fact,)
    assert WritePlan(facts=(fact,)).facts == (fact,)


OTHER = Fact(subject_id="c", predicate="owns", object_id="b")


def _flip_last(fact_id: str) -> str:
    return fact_id[:-1] + ("1" if fact_id[-1] == "0" else "0")


@pytest.mark.parametrize(
    "forged",
    [
        OTHER.model_copy(update={"id": OWNS.id}),  # another relation's id: two edges of one fact id
        OWNS.model_copy(update={"id": _flip_last(OWNS.id)}),  # one digit off its own id
        OWNS.model_copy(update={"valid_from": datetime(2024, 6, 1, tzinfo=UTC)}),  # the start moved
        OWNS.model_copy(update={"id": code_edge_id("a", "owns", "c")}),  # a code edge of another object
        OWNS.model_copy(update={"id": "e_" + "0" * 32}),
    ],
    ids=["other-relation", "near-miss", "moved-start", "other-code-edge", "made-up"],
)
def test_a_derived_form_id_of_other_content_is_refused(forged: Fact) -> None:
    assert forged.id not in derived_fact_ids(forged)
    with pytest.raises(InputError, match="derived id names its content") as info:
        FactUpsertParams(facts=(Fact(subject_id="a", predicate="note", value="ok"), forged))
    assert info.value.details["fact_id"] == forged.id
    assert "invalidate it and add a new one" in info.value.message
    with pytest.raises(InputError):
        WritePlan(facts=(forged,))


@pytest.mark.parametrize(
    "fact_id",
    [
        "f1",
        "f_" + "A" * 32,
        "f_" + "0" * 31,
        "f_" + "0" * 33,
        "e_" + "g" * 32,
        "F_" + "0" * 32,
        " f_" + "0" * 32,
    ],
)
def test_an_id_not_of_the_derived_form_may_name_any_content(fact_id: str) -> None:
    fact = OTHER.model_copy(update={"id": fact_id})
    assert FactUpsertParams(facts=(fact,)).facts == (fact,)
