"""Which tests exercise a symbol: pytest and unittest styles, fixtures (and the fixtures they
request), conftest.py files up the tree, set-up methods, parametrised callables, helpers; and
`impact` naming the tests to run. Kept right through incremental re-indexes."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphctx.scope import Scope
from tests.code.index_helpers import assert_indexes_match_graph, write_repo

SCOPE = Scope("tests-map", "default")

FILES = {
    "shop/__init__.py": "",
    "shop/cart.py": (
        "class Cart:\n    def add(self, item):\n        return item\n\n    def total(self):\n"
        "        return 0\n\n\n"
        "def price(item):\n    return 1\n\n\ndef discount(item):\n    return 0\n"
    ),
    "shop/tests/__init__.py": "",
    "shop/tests/test_inside.py": "from shop.cart import price\n\n\ndef test_price():\n    assert price(1)\n",
    "tests/conftest.py": (
        "import pytest\n\nfrom shop.cart import Cart\n\n\n@pytest.fixture\ndef cart():\n    return Cart()\n"
        "\n\n"
        '@pytest.fixture(name="full_cart")\ndef _full(cart):\n    cart.add(1)\n    return cart\n'
    ),
    "tests/unit/conftest.py": (
        "import pytest\n\nfrom shop.cart import discount\n\n\n@pytest.fixture\ndef cart():\n"
        "    return discount(1)\n"
    ),
    "tests/test_cart.py": (
        "import unittest\n\nimport pytest\n\nfrom shop.cart import Cart, discount, price\n\n\n"
        "def test_full(full_cart):\n    assert full_cart\n\n\n"
        "@pytest.mark.parametrize('fn', [price, discount])\ndef test_each(fn):\n"
        "    assert fn(1) is not None\n\n\n"
        "class TestCart(unittest.TestCase):\n    def setUp(self):\n        self.cart = Cart()\n\n"
        "    def test_total(self):\n        self.assertEqual(self.cart.total(), Cart().total())\n\n"
        "    def helper(self):\n        return price(2)\n"
    ),
    "tests/unit/test_override.py": "def test_nearest_conftest_wins(cart):\n    assert cart is not None\n",
    "tests/check_test.py": "from shop.cart import price\n\n\ndef test_suffix_style():\n    assert price(3)\n",
}


def exercising(service, name: str) -> set[str]:
    env = service.symbol(SCOPE, name)
    return {c["name"] for c in env["callers"] if c.get("test")} | {t["name"] for t in env["tests"]}


@pytest.fixture
def repo(service, tmp_path: Path):
    root = write_repo(tmp_path / "shop", FILES)
    service.index_repository(SCOPE, root)
    return service, root


def test_fixtures_renamed_and_requested_by_fixtures_reach_what_they_call(repo):
    service, _ = repo
    # test_full requests full_cart (renamed _full), which requests cart (tests/conftest.py) -> Cart()
    assert "tests.test_cart.test_full" in exercising(service, "shop.cart.Cart")
    # what a fixture's value is is not followed (`cart.add` on a fixture parameter stays unresolved)
    assert "tests.test_cart.test_full" not in exercising(service, "shop.cart.Cart.add")


def test_the_nearest_conftest_wins(repo):
    service, _ = repo
    assert "tests.unit.test_override.test_nearest_conftest_wins" in exercising(service, "shop.cart.discount")
    assert "tests.unit.test_override.test_nearest_conftest_wins" not in exercising(service, "shop.cart.Cart")


def test_parametrised_callables_and_set_up_methods(repo):
    service, _ = repo
    assert "tests.test_cart.test_each" in exercising(service, "shop.cart.price")
    assert "tests.test_cart.test_each" in exercising(service, "shop.cart.discount")
    # unittest: setUp builds the cart every test method uses
    assert "tests.test_cart.TestCart.test_total" in exercising(service, "shop.cart.Cart")
    assert "tests.test_cart.TestCart.test_total" in exercising(service, "shop.cart.Cart.total")
    # a helper method nobody calls is no test, and `setUp` itself is not one
    assert not {t for t in exercising(service, "shop.cart.price") if t.endswith(("helper", "setUp"))}


def test_in_package_tests_and_suffix_named_test_files(repo):
    service, _ = repo
    found = exercising(service, "shop.cart.price")
    assert {"shop.tests.test_inside.test_price", "tests.check_test.test_suffix_style"} <= found


def test_impact_names_the_tests_to_run(repo):
    service, _ = repo
    env = service.impact(SCOPE, ["shop/cart.py"])
    runs = {t["run"] for t in env["tests"]}
    assert {
        "tests/test_cart.py::TestCart::test_total",
        "tests/test_cart.py::test_full",
        "tests/test_cart.py::test_each",
        "tests/unit/test_override.py::test_nearest_conftest_wins",
        "shop/tests/test_inside.py::test_price",
    } <= runs
    assert not [c for c in env["callers"] if c["name"] in {t["name"] for t in env["tests"]}]  # listed once
    changed_test = service.impact(SCOPE, ["tests/check_test.py"])
    assert {t["run"] for t in changed_test["tests"]} == {"tests/check_test.py::test_suffix_style"}


def test_an_edited_conftest_moves_the_tests_it_serves(repo):
    service, root = repo
    write_repo(
        root,
        {
            "tests/unit/conftest.py": (
                "import pytest\n\nfrom shop.cart import price\n\n\n@pytest.fixture\ndef cart():\n"
                "    return price(1)\n"
            )
        },
    )
    report = service.index_repository(SCOPE, root)
    assert report.files_reresolved >= 1
    override = "tests.unit.test_override.test_nearest_conftest_wins"
    assert override in exercising(service, "shop.cart.price")
    assert override not in exercising(service, "shop.cart.discount")
    write_repo(root, {"tests/unit/conftest.py": None})  # now the one above serves it
    service.index_repository(SCOPE, root)
    assert override in exercising(service, "shop.cart.Cart")
    assert override not in exercising(service, "shop.cart.price")
    assert_indexes_match_graph(service, SCOPE)
