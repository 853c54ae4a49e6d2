import pytest

from graphctx.envelope import Budget, Option, canonical, dumps, size_bytes, tokens_for
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


class _Words:
    name = "words"

    def count(self, text: str) -> int:
        return len(text.split(","))


@pytest.mark.parametrize("counter", [None, _Words()])
@pytest.mark.parametrize(
    ("n", "size", "max_tokens"), [(0, 1, 256), (3, 10, 256), (40, 150, 512), (5, 5, 20000)]
)
def test_the_finished_answer_carries_its_own_canonical_json(counter, n, size, max_tokens):
    """Serialised once when finished: the JSON a transport sends is exactly `dumps` of the answer, and
    used_tokens is the measure with placeholders, as before."""
    env = _envelope()
    env["isolation"] = {"rejected": 3}
    env["scope"] = {"tenant_id": "t", "namespace": "ü"}  # non-ASCII counts in bytes
    budget = Budget(env, max_tokens=max_tokens, counter=counter)
    budget.place("items", _entries(n, size))
    expected_used = tokens_for(budget.measure())
    final = budget.finish({"total": 1.5, "legs": 0.25})
    assert canonical(final) == dumps(final) == dumps(dict(final))
    assert final["budget"]["used_tokens"] == expected_used
    if counter is not None:  # counted on the answer as sent, with fixed-width room for the count
        room = {**final["budget"], "counted": {"tokenizer": "words", "used_tokens": 99999}}
        assert final["budget"]["counted"]["used_tokens"] == counter.count(dumps(dict(final, budget=room)))


def test_a_changed_answer_is_serialised_afresh():
    env = _envelope()
    final = Budget(env, max_tokens=256).finish({"total": 1.0})
    changes = [
        lambda e: e.__setitem__("extra", 1),
        lambda e: e.pop("op"),
        lambda e: e.update(op="u"),
        lambda e: e.setdefault("other", [1]),
        lambda e: e.__delitem__("items"),
        lambda e: e.__ior__({"more": True}),
        lambda e: e.popitem(),
    ]
    for change in changes:
        copy = Budget(_envelope(), max_tokens=256).finish({"total": 1.0})
        change(copy)
        assert canonical(copy) == dumps(copy)
    final.clear()
    assert canonical(final) == "{}"
