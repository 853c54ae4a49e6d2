"""A small code graph in the indexer's shape (helpers/code-graph.md, its edge ids too), written through
remember, so the code operations can be tested without the indexer."""

from __future__ import annotations

from typing import Any

from graphctx.model import code_edge_id
from graphctx.scope import Scope
from graphctx.service import ContextService


def module(rel: str, lines: int, summary: str = "") -> dict[str, Any]:
    dotted = rel.removesuffix(".py").replace("/", ".")
    return {
        "id": f"py:shop:{rel}", "name": dotted.rsplit(".", 1)[-1], "type": "module", "qualified_name": dotted,
        "path": rel, "line_start": 1, "line_end": lines, "summary": summary, "source": "sha256:" + "0" * 64,
    }  # fmt: skip


def symbol(
    rel: str, qual: str, kind: str, start: int, end: int, signature: str, summary: str = ""
) -> dict[str, Any]:
    dotted = rel.removesuffix(".py").replace("/", ".")
    return {
        "id": f"py:shop:{rel}::{qual}", "name": qual.rsplit(".", 1)[-1], "type": kind,
        "qualified_name": f"{dotted}.{qual}", "path": rel, "line_start": start, "line_end": end,
        "signature": signature, "summary": summary, "aliases": [f"{rel}::{qual}"],
        "source": "sha256:" + "1" * 64,
    }  # fmt: skip


def edge(subject: str, predicate: str, obj: str, value: str | None = None) -> dict[str, Any]:
    fact: dict[str, Any] = {
        "id": code_edge_id(subject, predicate, obj), "subject_id": subject, "predicate": predicate,
        "object_id": obj, "source": "code-index",
    }  # fmt: skip
    if value is not None:
        fact["value"] = value
    return fact


def calls(caller: str, callee: str, lines: str) -> dict[str, Any]:
    return edge(caller, "calls", callee, lines)


RUN = "py:shop:shop/cart.py::Cart.total"
HELPER_A = "py:shop:shop/cart.py::helper"
HELPER_B = "py:shop:shop/tax.py::helper"
FANOUT = 30
"""Callers of shop.tax.rate: more than any per-direction limit a test asks for."""

REPOSITORY = {
    "id": "repo:shop", "name": "shop", "type": "repository", "summary": "The shop.", "signature": ".(shop)",
    "source": "/nonexistent/shop", "search_text": "packages: shop",
}  # fmt: skip

ENTITIES = [
    REPOSITORY,
    module("shop/cart.py", 60, "Shopping carts."),
    module("shop/tax.py", 40, "Tax rules."),
    module("shop/many.py", 200),
    module("tests/test_cart.py", 20),
    symbol("shop/cart.py", "helper", "function", 3, 8, "def helper(items)", "Sum the item prices."),
    symbol("shop/cart.py", "Cart", "class", 10, 60, "class Cart", "A cart of items."),
    symbol("shop/cart.py", "Cart.total", "method", 20, 35, "def total(self)", "The total with tax."),
    symbol("shop/cart.py", "Cart.add", "method", 37, 45, "def add(self, item)", "Add one item."),
    symbol("shop/tax.py", "helper", "function", 2, 6, "def helper()", "Round a tax amount."),
    symbol("shop/tax.py", "rate", "function", 10, 20, "def rate(region)", "The tax rate of a region."),
    symbol("tests/test_cart.py", "test_total", "function", 5, 12, "def test_total()"),
    *(symbol("shop/many.py", f"user_{i:02d}", "function", 5 * i + 1, 5 * i + 4, f"def user_{i:02d}()")
      for i in range(FANOUT)),
]  # fmt: skip

FACTS = [
    edge("py:shop:shop/cart.py", "contains", HELPER_A),
    edge("py:shop:shop/cart.py", "contains", "py:shop:shop/cart.py::Cart"),
    edge("py:shop:shop/cart.py::Cart", "contains", RUN),
    edge("py:shop:shop/cart.py::Cart", "contains", "py:shop:shop/cart.py::Cart.add"),
    edge("py:shop:shop/cart.py", "imports", "py:shop:shop/tax.py"),
    calls(RUN, HELPER_A, "22,30"),
    calls(RUN, "py:shop:shop/tax.py::rate", "25"),
    calls("py:shop:shop/cart.py::Cart.add", RUN, "44"),
    calls("py:shop:tests/test_cart.py::test_total", RUN, "9"),
    calls("py:shop:shop/tax.py::rate", HELPER_B, "15"),
    edge(RUN, "tested_by", "py:shop:tests/test_cart.py::test_total", "9"),  # lines in the test's file
    *(
        calls(f"py:shop:shop/many.py::user_{i:02d}", "py:shop:shop/tax.py::rate", str(5 * i + 2))
        for i in range(FANOUT)
    ),
]


def load_code(service: ContextService, scope: Scope) -> None:
    service.remember(scope, ENTITIES, FACTS)
