"""pytest plugin (entry point `graphctx_contracts`): markers, and the guard out of the adapter's reach.

Two rules, both out of reach of anything the adapter's test class can do to its own tests:

1. **The guard always runs.** After collection (and after `-k`/`-m` deselection), every collected
   class that subclasses a contract gets a `ContractGuard` item in place of its
   `test_contract_guard_DO_NOT_OVERRIDE`, even if that test was overridden, removed or deselected. The
   item has no fixtures and sits outside the class and module, so no fixture, `pytestmark` or
   conftest mark reaches it; it fails when `_guard.problems` finds anything, or when a module-level
   (or wider) skip/xfail mark covers the class.
2. **Only the contract skips a contract test.** A contract test the class inherits unchanged may end
   as skipped or xfailed only when the contract skipped it (an undeclared capability, a reasoned
   `contract_opt_outs` entry, a missing optional hook). Any other skip or xfail -- a fixture, a
   class- or module-level mark, a conftest hook -- is reported as a failure of that test.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from graphctx.contracts._guard import GUARD, SKIP_MARKS, defined_in_contract, problems
from graphctx.contracts._markers import CONTRACT_SKIP

GUIDE = "docs/adapters.md, section 'The guard'"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "graphctx_contract: a graphctx contract test")


def _contract_class(item: pytest.Item) -> pytest.Class | None:
    from graphctx.contracts._base import ContractBase

    node = item.getparent(pytest.Class)
    if node is not None and isinstance(node.obj, type) and issubclass(node.obj, ContractBase):
        return node
    return None


def _wide_marks(class_node: pytest.Class) -> list[str]:
    """Skip/xfail marks that reach the class from its module, package or directory."""
    return [
        f"a {type(node).__name__.lower()}-level `{mark.name}` mark ({node.nodeid or 'session'}) "
        f"covers every test of {class_node.name}, the guard included"
        for node, mark in class_node.iter_markers_with_node()
        if node is not class_node and mark.name in SKIP_MARKS
    ]


class ContractGuard(pytest.Item):
    """The guard of one collected contract class, run by the plugin. Its parent is the session, so
    no mark of the class or module applies, and it requests no fixture."""

    def __init__(self, *, contract_class: type, found: list[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.contract_class = contract_class
        self.found = found

    @classmethod
    def for_class(cls, class_node: pytest.Class) -> ContractGuard:
        found = [*problems(class_node.obj), *_wide_marks(class_node)]
        guard: ContractGuard = cls.from_parent(
            class_node.session,
            name=GUARD,
            nodeid=f"{class_node.nodeid}::{GUARD}",
            path=class_node.path,
            contract_class=class_node.obj,
            found=found,
        )
        return guard

    def runtest(self) -> None:
        if self.found:
            listed = "\n".join(f"  - {p}" for p in self.found)
            pytest.fail(
                f"contract guard: {self.contract_class.__name__} weakens the contract it certifies "
                f"({len(self.found)} problem(s)):\n{listed}\nSee {GUIDE}.",
                pytrace=False,
            )

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, None, f"{self.contract_class.__name__}::{GUARD}"


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session: pytest.Session, items: list[pytest.Item]) -> None:
    """Put a `ContractGuard` where each contract class's guard (or first selected test) was."""
    guards: dict[str, ContractGuard] = {}
    out: list[pytest.Item] = []
    for item in items:
        class_node = _contract_class(item)
        if class_node is None or isinstance(item, ContractGuard):
            out.append(item)
            continue
        if class_node.nodeid not in guards:
            guards[class_node.nodeid] = ContractGuard.for_class(class_node)
            out.append(guards[class_node.nodeid])
        if getattr(item, "originalname", item.name) != GUARD:
            out.append(item)
    items[:] = out


def _skipped_by_someone_else(item: pytest.Item) -> bool:
    if isinstance(item, ContractGuard):
        return True
    cls = getattr(item, "cls", None)
    name = getattr(item, "originalname", item.name)
    if cls is None or _contract_class(item) is None or not defined_in_contract(cls, name):
        return False  # not a contract test, or an override (whose marks the guard checks)
    return item.stash.get(CONTRACT_SKIP, None) is None


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    report = yield
    if report.skipped and _skipped_by_someone_else(item):
        xfailed = getattr(report, "wasxfail", None)
        if xfailed is not None:
            how, why = "xfailed", xfailed
            del report.wasxfail
        else:
            how = "skipped"
            why = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        what = "the contract guard" if isinstance(item, ContractGuard) else "a contract test"
        report.outcome = "failed"
        report.longrepr = (
            f"contract guard: {item.name} is {what} and was {how} by something other than the "
            f"contract ({why or 'no reason given'}). Only a capability the adapter does not declare, "
            "a reasoned contract_opt_outs entry, or an override marked @known_broken(reason=...) or "
            f"skipped with a reason may keep a contract test from passing. See {GUIDE}."
        )
    return report
