"""The packing rules of graphctx.envelope.Budget.place, checked over many budgets and entry shapes:
never over budget, more budget never places fewer entries, entries are shortened before any is
dropped, naming the cut is bounded and never evicts an entry that fits."""

from __future__ import annotations

import random

import pytest

from graphctx.envelope import NAME_CHARS, OMITTED_NAMES, Budget, Option, size_bytes
from graphctx.retrieval.render import item_options


def _envelope(tokens=0):
    return {
        "op": "t",
        "items": [],
        "omissions": [],
        "budget": {"max_tokens": tokens},
        "timings_ms": {"total": 0.0},
    }


def _entries(rng: random.Random, n: int):
    out = []
    for i in range(n):
        label = f"entity-{i}-" + "n" * rng.randrange(0, 120)
        base = {"rank": i + 1, "name": label, "summary": "s" * rng.randrange(0, 900)}
        facts = [
            {"predicate": "note", "value": "v" * rng.randrange(5, 200)} for _ in range(rng.randrange(0, 12))
        ]
        out.append((label, item_options(base, label, facts)))
    return out


def _place(entries, tokens):
    env = _envelope(tokens)
    budget = Budget(env, tokens)
    budget.place("items", entries)
    return budget.finish({"total": 1.0})


@pytest.mark.parametrize("seed", range(12))
def test_packing_rules_hold_at_every_budget(seed):
    rng = random.Random(seed)
    entries = _entries(rng, rng.randrange(1, 14))
    previous = 0
    for tokens in range(256, 6000, 97):
        env = _place(entries, tokens)
        placed = len(env["items"])
        assert size_bytes(env) <= tokens * 4  # never over budget
        assert env["budget"]["used_tokens"] + env["budget"]["unused_tokens"] == tokens
        assert placed >= previous  # more budget never yields fewer items
        previous = placed
        cut = [o for o in env["omissions"] if o["what"] == "items"]
        if placed < len(entries):
            assert len(cut) == 1 and cut[0]["count"] == len(entries) - placed  # the cut is named
            names = cut[0].get("names", [])
            assert len(names) <= OMITTED_NAMES and all(len(n) <= NAME_CHARS for n in names)
            assert names == [label[:NAME_CHARS] for label, _ in entries[placed : placed + len(names)]]
            # shortened before dropped, and naming the cut evicted nothing that fits: the next entry,
            # in its shortest form beside the record that would then name the rest, is over budget
            probe = _place_probe(env, entries, placed, tokens)
            assert probe > tokens * 4
        else:
            assert not cut


def _place_probe(env, entries, placed, tokens):
    """Size of `env` with entry `placed` added in its shortest form and the omission record updated."""
    probe = {**env, "items": [*env["items"], entries[placed][1][-1].rendering]}
    rest = [label for label, _ in entries[placed + 1 :]]
    others = [o for o in env["omissions"] if o["what"] != "items"]
    others += entries[placed][1][-1].omissions
    if rest:
        record = {"what": "items", "count": len(rest), "reason": "budget"}
        if any(o.get("names") for o in env["omissions"] if o["what"] == "items"):
            record["names"] = [label[:NAME_CHARS] for label in rest[:OMITTED_NAMES]]
        others.append(record)
    probe["omissions"] = others
    probe["budget"] = {"max_tokens": tokens, "used_tokens": 99999, "unused_tokens": 99999}
    probe["timings_ms"] = {"total": 99999.999}
    return size_bytes(probe)


def test_naming_the_cut_never_evicts_an_entry_that_fits():
    entries = [(f"e{i}", [Option({"name": f"e{i}", "text": "x" * 300})]) for i in range(10)]
    for tokens in range(256, 1400, 8):
        env = _place(entries, tokens)
        placed = len(env["items"])
        if placed < len(entries):
            assert _place_probe(env, entries, placed, tokens) > tokens * 4


def test_entries_are_shortened_before_any_is_dropped():
    rich = [Option({"name": f"e{i}", "facts": ["f" * 400]}) for i in range(6)]
    entries = [
        (f"e{i}", [rich[i], Option({"name": f"e{i}"}, [{"what": "facts", "of": f"e{i}"}])]) for i in range(6)
    ]
    env = _place(entries, 300)
    assert len(env["items"]) == 6  # every entry fits in its short form, so none is dropped
    assert any("facts" in item for item in env["items"])  # and the spare room enriches the top ones
    assert env["items"][0].get("facts")  # richer options go to the best-ranked first
