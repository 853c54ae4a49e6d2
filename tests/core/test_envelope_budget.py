import pytest

from graphctx.envelope import Budget, Option, dumps, size_bytes, tokens_for
from graphctx.errors import BudgetError


def _envelope():
    return {
        "op": "t",
        "items": [],
        "omissions": [],
        "budget": {"max_tokens": 0},
        "timings_ms": {"total": 0.0},
    }


def _entries(n, size):
    return [(f"e{i}", [Option({"name": f"e{i}", "text": "x" * size})]) for i in range(n)]


def test_token_estimate_is_ceil_of_bytes_over_four():
    assert tokens_for(0) == 0
    assert tokens_for(1) == 1
    assert tokens_for(8) == 2
    assert size_bytes({"a": "é"}) == len(dumps({"a": "é"}).encode())


def test_entries_that_do_not_fit_are_named_and_the_answer_stays_under_budget():
    env = _envelope()
    budget = Budget(env, max_tokens=256)
    budget.place("items", _entries(20, 200))
    final = budget.finish({"total": 12345.678})
    assert size_bytes(final) <= 256 * 4
    assert final["truncated"] is True
    omitted = [o for o in final["omissions"] if o["what"] == "items"]
    assert omitted and omitted[0]["count"] == 20 - len(final["items"])
    assert omitted[0]["names"][0] == f"e{len(final['items'])}"


def test_used_tokens_is_an_upper_bound_independent_of_timings():
    a = Budget(_envelope(), max_tokens=512)
    a.place("items", _entries(3, 20))
    fast = a.finish({"total": 0.1})
    b = Budget(_envelope(), max_tokens=512)
    b.place("items", _entries(3, 20))
    slow = b.finish({"total": 99999.0})
    assert fast["budget"]["used_tokens"] == slow["budget"]["used_tokens"]
    assert tokens_for(size_bytes(slow)) <= slow["budget"]["used_tokens"]


def test_poorer_options_are_used_before_dropping_an_entry():
    env = _envelope()
    budget = Budget(env, max_tokens=256)
    rich = Option({"name": "a", "text": "x" * 2000})
    poor = Option({"name": "a"}, [{"what": "text", "of": "a", "reason": "budget"}])
    budget.place("items", [("a", [rich, poor])])
    assert env["items"] == [{"name": "a"}]
    assert {"what": "text", "of": "a", "reason": "budget"} in env["omissions"]


def test_a_required_subject_that_cannot_fit_is_a_budget_error():
    budget = Budget(_envelope(), max_tokens=256)
    with pytest.raises(BudgetError) as info:
        budget.place("items", [("huge", [Option({"text": "x" * 5000})])], required=1)
    assert "huge" in info.value.message


def test_byte_cap_applies_when_tighter_than_tokens():
    budget = Budget(_envelope(), max_tokens=20_000, byte_cap=2048)
    budget.place("items", _entries(50, 100))
    assert size_bytes(budget.finish({"total": 1.0})) <= 2048
