"""An incremental Go re-index resolves only the changed packages and the packages that import them,
and gives exactly the graph a fresh index of the edited tree gives (ids, hashes, facts)."""

from __future__ import annotations

from pathlib import Path

from graphctx.scope import Scope
from graphctx.service import ContextService
from tests.code.go_fixture import copy_goshop
from tests.code.index_helpers import graph_snapshot, write_repo


def _fresh(service: ContextService, root: Path, n: int) -> tuple[dict[str, str], set[tuple]]:
    scope = Scope("go-incremental", f"fresh-{n}")
    service.index_repository(scope, root, repo="shop")
    return graph_snapshot(service, scope)


APP = """package main

import (
	"fmt"

	"example.com/shop/cart"
)

func main() {
	c := cart.NewCart()
	c.Add("tea", 3)
	fmt.Println(cart.Describe(c), cart.Twice(c))
}
"""

LEAF = """// Package report prints carts; nothing imports it.
package report

import "example.com/shop/cart"

// Line says one cart.
func Line(c *cart.Cart) string { return cart.Describe(c) }
"""


def test_edits_re_resolve_only_what_they_reach_and_equal_a_fresh_index(
    service: ContextService, tmp_path: Path
):
    root = copy_goshop(tmp_path)
    scope = Scope("go-incremental", "edited")
    write_repo(root, {"report/report.go": LEAF})
    service.index_repository(scope, root, repo="shop")
    assert graph_snapshot(service, scope) == _fresh(service, root, 0)

    cart = (root / "cart" / "cart.go").read_text()
    describe = cart[cart.index("// Describe says") :]
    steps = [
        # a leaf package nobody imports: only it is resolved
        ({"report/report.go": LEAF.replace("cart.Describe(c)", "cart.Describe(c) + cart.Describe(c)")}, 1),
        # a package others import, with a new function called from its importer: the package, its
        # tests and every importer (cmd/shop, report) are resolved
        (
            {
                "cart/cart.go": cart
                + "\n// Twice sums twice.\nfunc Twice(c *Cart) int { return c.Sum() + c.Sum() }\n",
                "cmd/shop/main.go": APP,
            },
            5,
        ),
        # a function moves to another file (its id changes): the unchanged importers' calls follow
        (
            {
                "cart/cart.go": cart.replace(describe, "")
                + "\n// Twice sums twice.\nfunc Twice(c *Cart) int { return c.Sum() + c.Sum() }\n",
                "cart/describe.go": 'package cart\n\nimport "fmt"\n\n' + describe,
            },
            6,
        ),
        # a call removed (an edge goes), then a package deleted
        (
            {
                "cart/describe.go": 'package cart\n\nimport "fmt"\n\n'
                + describe.replace("\tf := c.Sum\n\tf()\n", "")
            },
            6,
        ),
        ({"report/report.go": None}, 0),
        # the package that declares an interface: everything is re-resolved
        ({"store/store.go": (root / "store" / "store.go").read_text() + "\nfunc Extra() {}\n"}, 10),
    ]
    for n, (edit, resolved) in enumerate(steps, start=1):
        write_repo(root, edit)
        report = service.index_repository(scope, root, repo="shop")
        assert report.parse_errors == []
        assert report.languages["go"]["files_resolved"] == resolved, f"step {n}"
        assert graph_snapshot(service, scope) == _fresh(service, root, n), f"step {n}: {sorted(edit)}"
    noop = service.index_repository(scope, root, repo="shop")
    assert (noop.entities_written, noop.facts_written, noop.entities_deleted) == (0, 0, 0)
