"""Exact first, without domination: the query's identity ranks first; words named inside a question
are one fused, capped leg (graphctx.retrieval.exact)."""

from __future__ import annotations

import pytest

from graphctx.model import Entity
from graphctx.retrieval.exact import NAMED_FIRST, PER_MENTION, probes
from tests.conftest import TENANT_A


def test_probes_separate_identity_from_mentions():
    p = probes("why does `os.path.join` call 'y' in checkout-api for PAY-502?")
    assert "os.path.join" in p.named and "PAY-502" in p.named
    assert "y" in p.mentions and "checkout-api" in p.mentions
    assert not set(p.named) & set(p.mentions)
    whole = probes("  `shop.cart.Cart.total`  ")
    assert "shop.cart.Cart.total" in whole.whole and not whole.named


@pytest.fixture
def flooded(service):
    """Ten entities all named `y` (a common one-letter name), and the one the question is about."""
    ys = [
        Entity(id=f"y-{i}", name="y", type="function", summary=f"coordinate helper number {i}")
        for i in range(10)
    ]
    target = Entity(
        id="plot",
        name="scatter_plot",
        type="function",
        summary="Draws a scatter plot of the points, with the 'y' axis scaled logarithmically.",
    )
    service.remember(TENANT_A, [*ys, target])
    return service


def test_a_word_quoted_inside_a_question_never_floods_the_answer(flooded):
    env = flooded.recall(TENANT_A, "which function draws a scatter plot with the 'y' axis logarithmic?")
    names = [i["name"] for i in env["items"]]
    assert "scatter_plot" in names[: PER_MENTION + 1]
    mentioned = [i for i in env["items"] if "mention" in i["match"]]
    assert len(mentioned) == PER_MENTION  # two of the ten `y`s, never a flood
    assert all("exact" not in i["match"] for i in env["items"])
    assert env["legs"]["exact"] == {"status": "ok", "hits": 0, "mentions": PER_MENTION}


@pytest.mark.parametrize("query", ["y", "`y`", " y "])
def test_the_whole_query_as_a_name_still_returns_every_exact_match_first(flooded, query):
    env = flooded.recall(TENANT_A, query)
    top = env["items"][:8]
    assert [i["name"] for i in top] == ["y"] * 8
    assert all(i["match"]["exact"] == "name" for i in top)


def test_identifiers_named_in_a_question_rank_first_and_are_capped(service):
    entities = [
        Entity(id=f"m{i}", name=f"fn{i}", qualified_name=f"pkg.mod.fn{i}", type="function") for i in range(6)
    ]
    decoy = Entity(id="decoy", name="compare", summary="compare compare pkg mod fn0 fn1 fn2 fn3 fn4 fn5")
    service.remember(TENANT_A, [*entities, decoy])
    query = "compare " + " and ".join(f"pkg.mod.fn{i}" for i in range(6))
    env = service.recall(TENANT_A, query)
    exact = [i for i in env["items"] if "exact" in i["match"]]
    assert len(exact) == NAMED_FIRST
    assert env["items"][:NAMED_FIRST] == exact
    assert {i["match"]["exact"] for i in exact} == {"qualified_name"}
