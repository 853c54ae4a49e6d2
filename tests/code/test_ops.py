"""The code operations on a code graph in the indexer's shape: definition cards, callers and callees
with file:line, impact from a diff, ambiguity, limits and budgets, explain and path on symbols."""

from __future__ import annotations

import pytest

from graphctx import api, bounds
from graphctx.auth import Principal
from graphctx.code.ops import DEFAULT_LIMIT
from graphctx.envelope import dumps, size_bytes
from graphctx.errors import AmbiguousName, BoundExceeded, BudgetError, InputError, NotFound
from graphctx.scope import Scope
from tests.code.ops_graph import FANOUT, RUN, edge, load_code, symbol

CODE = Scope("acme", "default")


@pytest.fixture
def code(service):
    load_code(service, CODE)
    return service


def names(entries):
    return [e["name"] for e in entries]


def test_symbol_card_has_location_callers_callees_and_tests(code):
    env = code.symbol(CODE, "shop.cart.Cart.total")
    assert env["op"] == "symbol"
    assert env["subject"] == {
        "name": "shop.cart.Cart.total", "at": "shop/cart.py:20-35", "type": "method",
        "signature": "def total(self)", "summary": "The total with tax.",
    }  # fmt: skip
    # callers: the caller's definition and the call lines in the caller's file; a test that calls
    # the symbol is listed once, among the callers, marked
    assert env["callers"] == [
        {"name": "shop.cart.Cart.add", "at": "shop/cart.py:37-45", "lines": [44]},
        {"name": "tests.test_cart.test_total", "at": "tests/test_cart.py:5-12", "test": True, "lines": [9]},
    ]
    # callees: the callee's definition, and the call lines in the subject's file
    assert env["callees"] == [
        {"name": "shop.cart.helper", "at": "shop/cart.py:3-8", "lines": [22, 30]},
        {"name": "shop.tax.rate", "at": "shop/tax.py:10-20", "lines": [25]},
    ]
    assert env["tests"] == []  # its only test calls it: not repeated
    assert env["counts"] == {"callers": 2, "callees": 2, "tests": 0}
    assert env["omissions"] == [] and env["truncated"] is False
    assert env["provenance"] == {"graph": "sqlite", "catalog": env["provenance"]["catalog"]}  # graph only
    assert list(env).index("callers") < list(env).index("callees") < list(env).index("tests")
    assert (
        "id" not in env["subject"]
        and "id" in code.symbol(CODE, "shop.cart.Cart.total", include_ids=True)["subject"]
    )


def test_a_test_that_reaches_the_symbol_without_calling_it_is_listed_under_tests(code):
    code.remember(
        CODE,
        [
            symbol(
                "tests/test_cart.py",
                "test_through_a_fixture",
                "function",
                14,
                18,
                "def test_through_a_fixture(cart)",
            )
        ],
        [edge(RUN, "tested_by", "py:shop:tests/test_cart.py::test_through_a_fixture", "14")],
    )
    env = code.symbol(CODE, "shop.cart.Cart.total")
    assert names(env["callers"]) == ["shop.cart.Cart.add", "tests.test_cart.test_total"]
    assert env["tests"] == [
        {"name": "tests.test_cart.test_through_a_fixture", "at": "tests/test_cart.py:14-18", "lines": [14]}
    ]
    assert env["counts"] == {"callers": 2, "callees": 2, "tests": 1}


@pytest.mark.parametrize(
    "name",
    [
        "shop.cart.Cart.total", "shop/cart.py::total", "cart.py::total", "shop/cart.py::Cart.total", "total",
        "Cart.total", "cart.Cart.total",  # a dotted tail of the qualified name, as agents write them
    ],
)  # fmt: skip
def test_every_identity_form_resolves_like_explain(code, name):
    assert code.symbol(CODE, name)["subject"]["name"] == "shop.cart.Cart.total"
    assert code.explain(CODE, name)["subject"]["qualified_name"] == "shop.cart.Cart.total"


def test_two_same_named_functions_are_ambiguous_with_file_identities(code):
    for op in (code.symbol, code.callers, code.callees, code.explain):
        with pytest.raises(AmbiguousName) as raised:
            op(CODE, "helper")
        candidates = raised.value.candidates
        assert sorted((c["identity"], c["path"]) for c in candidates) == [
            ("shop.cart.helper", "shop/cart.py"),
            ("shop.tax.helper", "shop/tax.py"),
        ]
    for identity, summary in [
        ("shop/cart.py::helper", "Sum the item prices."),
        ("shop/tax.py::helper", "Round"),
    ]:
        assert code.symbol(CODE, identity)["subject"]["summary"].startswith(summary)


def test_two_modules_with_one_dotted_name_fall_back_to_ids(code):
    clash = [
        symbol("a/util.py", "f", "function", 1, 2, "def f()"),
        symbol("b/util.py", "f", "function", 1, 2, "def f()"),
    ]
    clash[1]["qualified_name"] = clash[0]["qualified_name"]  # e.g. two roots indexed together
    code.remember(CODE, clash)
    with pytest.raises(AmbiguousName) as raised:
        code.symbol(CODE, "a.util.f")
    identities = sorted(c["identity"] for c in raised.value.candidates)
    assert identities == ["py:shop:a/util.py::f", "py:shop:b/util.py::f"]
    assert code.symbol(CODE, identities[1])["subject"]["at"] == "b/util.py:1-2"


def test_unknown_symbol_is_not_found(code):
    with pytest.raises(NotFound):
        code.symbol(CODE, "shop.cart.nothing")
    for near_miss in ("art.Cart.total", "Cart.totals", "Basket.total", "pkg.shop.cart.Cart.total"):
        with pytest.raises(NotFound):  # a tail matches whole segments only
            code.symbol(CODE, near_miss)


def test_a_dotted_tail_shared_by_two_symbols_is_ambiguous(code):
    code.remember(CODE, [symbol("shop/basket.py", "Cart.total", "method", 3, 9, "def total(self)")])
    with pytest.raises(AmbiguousName) as raised:
        code.symbol(CODE, "Cart.total")
    assert sorted(c["identity"] for c in raised.value.candidates) == [
        "shop.basket.Cart.total",
        "shop.cart.Cart.total",
    ]
    assert code.symbol(CODE, "cart.Cart.total")["subject"]["name"] == "shop.cart.Cart.total"


def test_a_dotted_tail_is_not_resolved_when_too_many_share_its_last_name(code):
    """Only as many entities as the template's cap are read by last name: past it, a single match
    cannot be shown unique, so the answer asks for the qualified name instead of guessing."""
    crowd = [symbol(f"shop/m{i:03d}.py", "total", "function", 1, 2, "def total()") for i in range(120)]
    code.remember(CODE, crowd)
    with pytest.raises(NotFound, match="give the qualified name"):
        code.symbol(CODE, "Cart.total")
    assert code.symbol(CODE, "shop.cart.Cart.total")["subject"]["at"] == "shop/cart.py:20-35"


def test_a_dotted_tail_never_resolves_to_another_scope(code):
    other = Scope("rival", "default")
    code.remember(other, [symbol("rival/x.py", "Vault.open", "method", 1, 2, "def open(self)")])
    with pytest.raises(NotFound):
        code.symbol(CODE, "Vault.open")
    assert code.symbol(other, "Vault.open")["subject"]["name"] == "rival.x.Vault.open"


def test_a_per_direction_limit_names_exactly_what_it_cut(code):
    env = code.symbol(CODE, "shop.tax.rate", limit=5)
    assert len(env["callers"]) == 5
    assert env["counts"]["callers"] == FANOUT + 1  # the total: the cut is named in omissions
    assert {"what": "callers", "count": FANOUT + 1 - 5, "reason": "limit", "limit": 5} in env["omissions"]
    assert env["truncated"] is True
    assert names(env["callees"]) == ["shop.tax.helper"]  # the other direction is unaffected


def test_limits_are_clamped_to_the_template_cap(code):
    env = code.callers(CODE, "shop.tax.rate", limit=10_000)
    assert len(env["callers"]) == env["counts"]["callers"] == FANOUT + 1
    with pytest.raises(InputError):
        code.callers(CODE, "shop.tax.rate", limit="all")  # type: ignore[arg-type]


def test_a_tiny_budget_cuts_entries_and_names_them(code):
    env = code.callers(CODE, "shop.tax.rate", max_tokens=300)
    assert size_bytes(env) <= 300 * 4
    assert env["budget"]["max_tokens"] == 300
    assert env["truncated"] is True
    cut = [o for o in env["omissions"] if o["what"] == "callers" and o["reason"] == "budget"]
    found = min(DEFAULT_LIMIT, FANOUT + 1)  # what the walk returned; the budget cut some of those
    assert env["counts"]["callers"] == FANOUT + 1
    assert cut and cut[0]["count"] == found - len(env["callers"]) > 0
    if FANOUT + 1 > DEFAULT_LIMIT:
        limit_cut = {
            "what": "callers",
            "count": FANOUT + 1 - found,
            "reason": "limit",
            "limit": DEFAULT_LIMIT,
        }
        assert limit_cut in env["omissions"]


def test_a_subject_that_cannot_fit_is_a_budget_error(code):
    code.remember(CODE, [symbol("big.py", "huge", "function", 1, 2, "def huge()", "word " * 800)])
    with pytest.raises(BudgetError) as raised:
        code.symbol(CODE, "big.huge", max_tokens=256)
    assert raised.value.details["max_tokens"] == 256
    assert code.symbol(CODE, "big.huge", max_tokens=2000)["subject"]["name"] == "big.huge"


def test_callers_at_depth_two_say_which_caller_they_reach_through(code):
    env = code.callers(CODE, "shop/cart.py::helper", depth=2)
    by_name = {c["name"]: c for c in env["callers"]}
    assert by_name["shop.cart.Cart.total"]["lines"] == [22, 30]
    assert by_name["shop.cart.Cart.total"]["depth"] == 1
    add = by_name["shop.cart.Cart.add"]
    assert (add["depth"], add["via"], add["lines"]) == (2, ["shop.cart.Cart.total"], [44])
    assert by_name["tests.test_cart.test_total"]["test"] is True  # marked at depth 2 too
    assert env["depth"] == 2
    assert code.callers(CODE, "shop/cart.py::helper", depth=9)["depth"] == 2  # clamped


def test_callees_at_depth_two(code):
    env = code.callees(CODE, "shop.cart.Cart.add", depth=2)
    by_name = {c["name"]: c for c in env["callees"]}
    assert by_name["shop.cart.Cart.total"]["lines"] == [44]
    rate = by_name["shop.tax.rate"]
    assert (rate["depth"], rate["via"], rate["lines"]) == (2, ["shop.cart.Cart.total"], [25])


def test_a_depth_two_cut_is_a_lower_bound(code):
    code.remember(CODE, [], [{"subject_id": "py:shop:shop/tax.py::rate", "predicate": "calls",
                              "object_id": "py:shop:shop/cart.py::helper", "value": "16"}])  # fmt: skip
    env = code.callers(CODE, "shop/cart.py::helper", depth=2, limit=2)
    notes = [o for o in env["omissions"] if o["reason"] == "limit"]
    assert notes and notes[0]["at_least"] is True and notes[0]["unit"] == "edges"
    assert env["counts"]["callers"] == len(env["callers"])  # at depth 2 the total is unknown


DIFF = """diff --git a/shop/cart.py b/shop/cart.py
index 1111111..2222222 100644
--- a/shop/cart.py
+++ b/shop/cart.py
@@ -4,2 +4,2 @@ def helper(items):
     total = 0
-    for item in items:
+    for item in sorted(items):
@@ -1,1 +1,2 @@
 import tax
+import os
diff --git a/README.rst b/README.rst
--- a/README.rst
+++ b/README.rst
@@ -1 +1 @@
-old
+new
"""


def test_impact_of_a_diff_maps_hunks_to_symbols_callers_and_tests(code):
    env = code.impact(CODE, diff=DIFF)
    assert env["op"] == "impact"
    # line 5 is inside helper (3-8); an import added after line 1 is module-level code
    assert names(env["affected"]) == ["shop.cart", "shop.cart.helper"]
    assert env["unknown"] == [{"path": "README.rst"}]
    callers = {c["name"]: c for c in env["callers"]}
    assert callers["shop.cart.Cart.total"]["lines"] == [22, 30]
    assert callers["shop.cart.Cart.total"]["via"] == ["shop.cart.helper"]
    assert names(env["tests"]) == ["tests.test_cart.test_total"]
    assert env["tests"][0]["via"] == ["shop.cart.Cart.total"]
    assert env["tests"][0]["run"] == "tests/test_cart.py::test_total"  # how to run it
    assert env["changed"] == {"files": 2, "ranges": 3, "whole_files": 0}  # a replacement is one range


def test_impact_picks_the_innermost_symbol_and_reaches_depth_two(code):
    diff = "--- a/shop/cart.py\n+++ b/shop/cart.py\n@@ -30 +30 @@\n-x\n+y\n"
    env = code.impact(CODE, diff=diff, depth=2)
    assert names(env["affected"]) == ["shop.cart.Cart.total"]  # not the enclosing class
    callers = {c["name"]: c.get("depth", 1) for c in env["callers"]}
    assert callers == {"shop.cart.Cart.add": 1}
    assert names(env["tests"]) == ["tests.test_cart.test_total"]  # listed once, as a test


def test_impact_of_a_listed_file_covers_every_symbol_in_it(code):
    env = code.impact(CODE, ["shop/tax.py", "./nowhere.py"])
    assert names(env["affected"]) == ["shop.tax", "shop.tax.helper", "shop.tax.rate"]
    assert env["unknown"] == [{"path": "./nowhere.py"}]
    assert "shop.cart" in names(env["callers"])  # shop.cart imports shop.tax
    assert env["changed"]["whole_files"] == 2


def test_impact_of_a_file_the_graph_lacks_says_so(code):
    env = code.impact(CODE, ["docs/intro.md"])
    assert env["affected"] == [] and env["unknown"] == [{"path": "docs/intro.md"}]
    assert "index the repository" in env["follow_up"]


def test_impact_input_bounds_are_typed_and_named(code):
    with pytest.raises(BoundExceeded) as raised:
        code.impact(CODE, [f"f{i}.py" for i in range(bounds.FILE_LIST_ENTRIES + 1)])
    assert raised.value.details["bound"] == "files"
    with pytest.raises(BoundExceeded) as raised:
        code.impact(CODE, diff="+" * (bounds.DIFF_BYTES + 1))
    assert raised.value.details["bound"] == "diff"
    with pytest.raises(BoundExceeded) as raised:
        code.impact(CODE, ["x" * (bounds.SELECTOR_BYTES + 1)])
    assert raised.value.details["bound"] == "file path"
    for bad in (
        {},
        {"diff": "@@ -x +y @@\n"},
        {"diff": "just text\n"},
        {"diff": "--- a/x.py\n+++ b/x.py\n@@ -1,3 +1,3 @@\n a\n-b\n"},  # ends inside a hunk
    ):
        with pytest.raises(InputError):
            code.impact(CODE, **bad)
    with pytest.raises(InputError):
        code.impact(CODE, "shop/tax.py")  # type: ignore[arg-type]  # a string is not a list of files


def test_impact_under_a_tiny_budget_names_every_cut(code):
    env = code.impact(CODE, ["shop/tax.py", "shop/many.py"], max_tokens=256)
    assert size_bytes(env) <= 256 * 4
    assert env["truncated"] is True
    assert {o["what"] for o in env["omissions"]} >= {"affected"}


def test_search_finds_code_exact_first_and_leaves_memory_out(code):
    code.remember(CODE, [{"id": "svc", "name": "Cart.total", "type": "service", "summary": "a service"}])
    env = code.search(CODE, "shop.cart.Cart.total")
    first = env["items"][0]
    assert (first["qualified_name"], first["match"]["exact"]) == (
        "shop.cart.Cart.total",
        "qualified_name",
    )  # search items keep recall's shape
    assert first["location"] == {"path": "shop/cart.py", "lines": [20, 35]}
    assert first["signature"] == "def total(self)"
    assert all(i["type"] != "service" for i in env["items"])
    assert env["coverage"]["not_code"] >= 1
    assert env["budget"]["max_tokens"] == bounds.DEFAULT_RECALL_TOKENS
    assert "aliases" not in first and "source" not in first  # identity is the qualified name / location
    assert size_bytes(env) <= bounds.DEFAULT_RECALL_TOKENS * 4


def test_search_with_nothing_to_find_says_what_to_try(code):
    env = code.search(CODE, "zzqx-no-such-thing")
    assert env["items"] == [] and "exact qualified name" in env["follow_up"]


def test_explain_and_path_work_on_symbols(code):
    env = code.explain(CODE, "shop/cart.py::Cart.total")
    called = [f for f in env["facts"] if f["predicate"] == "calls" and f.get("object") == "shop.cart.helper"]
    assert called and called[0]["value"] == "22,30"
    path = code.path(CODE, "shop/cart.py::Cart.add", "shop/tax.py::helper", edge_types=["calls"])
    assert path["found"] is True
    assert [n["qualified_name"] for n in path["nodes"]] == [
        "shop.cart.Cart.add", "shop.cart.Cart.total", "shop.tax.rate", "shop.tax.helper",
    ]  # fmt: skip


def test_the_catalogue_validates_and_answers_like_the_python_api(code):
    principal = Principal("agent", "acme")
    via_api = api.execute(code, principal, "symbol", {"name": "shop.cart.Cart.total"})
    direct = code.symbol(CODE, "shop.cart.Cart.total")
    assert dumps({**via_api, "timings_ms": {}}) == dumps({**direct, "timings_ms": {}})
    impact = api.execute(code, principal, "impact", {"diff": DIFF, "depth": 2})
    assert impact["affected"][1]["name"] == "shop.cart.helper"
    with pytest.raises(BoundExceeded) as raised:
        api.execute(code, principal, "impact", {"files": ["a.py"] * 101})
    assert raised.value.details["bound"] == "files"
    with pytest.raises(InputError):
        api.execute(code, principal, "callers", {"name": "shop.tax.rate", "depth": 3})


def test_many_unknown_files_under_a_tiny_budget_are_counted_not_crashed(code):
    files = [f"vendor/{'x' * 200}{i}.py" for i in range(bounds.FILE_LIST_ENTRIES)]
    env = code.impact(CODE, files, max_tokens=256)
    assert size_bytes(env) <= 256 * 4
    cut = [o for o in env["omissions"] if o["what"] == "unknown"]
    assert cut and cut[0]["count"] == len(files) - len(env["unknown"])
    assert "index the repository" in env["follow_up"]
