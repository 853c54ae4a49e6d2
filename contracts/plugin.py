"""pytest plugin (entry point `graphctx_contracts`): markers, the guard out of the adapter's reach, and
the run's verdict.

Rules, all out of reach of anything the adapter's test class can do to its own tests:

1. **The guard always runs.** After collection (and after `-k`/`-m` deselection), every collected
   class that subclasses a contract gets a `ContractGuard` item in place of its
   `test_contract_guard_DO_NOT_OVERRIDE`, even if that test was overridden, removed or deselected (and
   put back if a later collection hook drops it). The item has no fixtures and sits outside the class
   and module, so no fixture, `pytestmark` or conftest mark reaches it; it fails when `_guard.problems`
   finds anything, when a module-level (or wider) skip/xfail mark covers the class, when contract tests
   were removed from the run without being deselected (a collection hook), or when fewer were
   collected than the contract defines.
2. **Only the contract skips a contract test.** A contract test the class inherits unchanged may end
   as skipped or xfailed only when the contract skipped it (an undeclared capability, a reasoned
   `contract_opt_outs` entry, a missing optional hook). Any other skip or xfail is a failure.
3. **A pass is a pass of the contract's own body.** A contract test reported passed whose body did not
   run to completion (a hook that skipped or swallowed the call) is a failure; so is an override of a
   contract test that passes: an override may only be skipped with a reason or fail as
   `@known_broken(reason=...)` (a `skipif` whose condition is false does not make it the contract).
4. **Capabilities do not change during a run.** The first test of a class fixes what the adapter
   declares; a later test that sees other capabilities fails.

At the end the plugin prints a verdict per contract class (`graphctx contract verdict`): PASS only
when the class is a whole bundle (`GraphStoreContract`, not a few of its mixins), every contract
test ran (nothing deselected) and passed or was skipped by the contract with a capability or a
reasoned opt-out, and every test saw the same capabilities. `--graphctx-report PATH` writes every
contract test's outcome as JSON (what `graphctx certify` reads). The verdict is computed from the
test reports alone, so it also works under pytest-xdist.
"""

from __future__ import annotations

import json
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from graphctx.contracts._guard import (
    GUARD,
    SKIP_MARKS,
    contract_tests,
    defined_in_contract,
    expected_cases,
    problems,
)
from graphctx.contracts._markers import BODY, CAPABILITIES, CONTRACT_SKIP, _running

GUIDE = "docs/adapters.md, section 'The guard'"
RECORD = "graphctx_contract"
"""The key of the record each contract test's reports carry in `user_properties`."""
REPORT_VERSION = 1


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("graphctx", "graphctx contract suite")
    group.addoption(
        "--graphctx-report",
        default=None,
        metavar="PATH",
        help="write every graphctx contract test's outcome, skip reason and capabilities as JSON "
        "(what `graphctx certify` reads)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "graphctx_contract: a graphctx contract test")
    state = _State()
    config.stash[_STATE] = state
    config.pluginmanager.register(_Recorder(state), "graphctx-contract-recorder")


# ---- which classes and tests are the contract's ------------------------------------------------


def _contract_class(item: pytest.Item) -> pytest.Class | None:
    from graphctx.contracts._base import ContractBase

    node = item.getparent(pytest.Class)
    if node is not None and isinstance(node.obj, type) and issubclass(node.obj, ContractBase):
        return node
    return None


def _full_bundles() -> tuple[type, ...]:
    from graphctx.contracts.congruence import GraphCongruenceContract
    from graphctx.contracts.graph import GraphStoreContract
    from graphctx.contracts.lexical import LexicalIndexContract
    from graphctx.contracts.retrieval import RetrievalContract
    from graphctx.contracts.vector import VectorIndexContract

    return (
        GraphStoreContract,
        GraphCongruenceContract,
        LexicalIndexContract,
        VectorIndexContract,
        RetrievalContract,
    )


def bundles_of(cls: type) -> tuple[list[str], list[str]]:
    """(the whole bundles `cls` subclasses, the contract classes it subclasses directly)."""
    from graphctx.contracts._guard import _is_contract

    whole = [b.__name__ for b in _full_bundles() if issubclass(cls, b)]
    direct = sorted(
        {
            base.__name__
            for c in cls.__mro__
            if not _is_contract(c)
            for base in c.__bases__
            if _is_contract(base)
        }
    )
    return whole, direct


def _wide_marks(class_node: pytest.Class) -> list[str]:
    """Skip/xfail marks that reach the class from its module, package or directory."""
    return [
        f"a {type(node).__name__.lower()}-level `{mark.name}` mark ({node.nodeid or 'session'}) "
        f"covers every test of {class_node.name}, the guard included"
        for node, mark in class_node.iter_markers_with_node()
        if node is not class_node and mark.name in SKIP_MARKS
    ]


def _base(item: pytest.Item) -> str:
    return getattr(item, "originalname", item.name)


# ---- collection: the guard, and what reached the run ------------------------------------------


@dataclass
class _Collected:
    """One contract class's collection: every case collected, and which of them left the run."""

    class_node: pytest.Class
    items: dict[str, str] = field(default_factory=dict)  # nodeid -> test name
    deselected: set[str] = field(default_factory=set)


@dataclass
class _State:
    collected: dict[str, _Collected] = field(default_factory=dict)
    deselected: set[str] = field(default_factory=set)
    guards: dict[str, ContractGuard] = field(default_factory=dict)
    capabilities: dict[str, tuple[str, str]] = field(default_factory=dict)  # class -> (capabilities, test)
    records: dict[str, dict[str, Any]] = field(default_factory=dict)  # nodeid -> merged record
    classes: dict[str, dict[str, Any]] = field(default_factory=dict)  # class nodeid -> guard record


_STATE = pytest.StashKey[_State]()


class ContractGuard(pytest.Item):
    """The guard of one collected contract class, run by the plugin. Its parent is the session, so
    no mark of the class or module applies, and it requests no fixture."""

    def __init__(self, *, contract_class: type, found: list[str], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.contract_class = contract_class
        self.found = found
        self.class_record: dict[str, Any] = {}

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


def pytest_itemcollected(item: pytest.Item) -> None:
    class_node = _contract_class(item)
    if class_node is None or isinstance(item, ContractGuard):
        return
    state = item.config.stash[_STATE]
    entry = state.collected.setdefault(class_node.nodeid, _Collected(class_node))
    entry.items[item.nodeid] = _base(item)


def pytest_deselected(items: list[pytest.Item]) -> None:
    for item in items:
        item.config.stash[_STATE].deselected.add(item.nodeid)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session: pytest.Session, items: list[pytest.Item]) -> None:
    """Put a `ContractGuard` where each contract class's guard (or first selected test) was."""
    state = session.config.stash[_STATE]
    out: list[pytest.Item] = []
    for item in items:
        class_node = _contract_class(item)
        if class_node is None or isinstance(item, ContractGuard):
            out.append(item)
            continue
        if class_node.nodeid not in state.guards:
            state.guards[class_node.nodeid] = ContractGuard.for_class(class_node)
            out.append(state.guards[class_node.nodeid])
        if _base(item) != GUARD:
            out.append(item)
    items[:] = out


def pytest_collection_finish(session: pytest.Session) -> None:
    """After every collection hook: what each class lost, and a guard for every collected class
    (put back at the end of the run if a later hook removed it)."""
    state = session.config.stash[_STATE]
    present = {item.nodeid for item in session.items}
    for class_id, entry in state.collected.items():
        guard = state.guards.get(class_id) or ContractGuard.for_class(entry.class_node)
        state.guards[class_id] = guard
        if guard.nodeid not in present:
            session.items.append(guard)
        cls = entry.class_node.obj
        cases = {n: c for n, c in expected_cases(cls).items() if n != GUARD}
        got: dict[str, int] = {}
        for name in entry.items.values():
            got[name] = got.get(name, 0) + 1
        missing = {n: c - got.get(n, 0) for n, c in cases.items() if got.get(n, 0) < c}
        in_part = _selected_in_part(session.config, entry.class_node)
        uncollected = {} if in_part else missing
        deselected = sorted(i for i in entry.items if i in state.deselected and i not in present)
        dropped = sorted(i for i in entry.items if i not in state.deselected and i not in present)
        if dropped:
            guard.found.append(
                f"{len(dropped)} contract test(s) were removed from the run without being deselected "
                f"(a collection hook?): {', '.join(d.rsplit('::', 1)[-1] for d in dropped[:5])}"
            )
        if uncollected:
            guard.found.append(
                f"{sum(uncollected.values())} contract test case(s) were never collected: "
                f"{', '.join(sorted(uncollected)[:5])}"
            )
        whole, direct = bundles_of(cls)
        guard.class_record = {
            "class": class_id,
            "name": cls.__name__,
            "bundles": whole,
            "contract_bases": direct,
            "expected": cases,
            "collected": len(entry.items),
            "deselected": deselected,
            "not_selected": missing if in_part else {},
            "dropped": dropped,
            "uncollected": uncollected,
            "guard_problems": list(guard.found),
        }


def _selected_in_part(config: pytest.Config, class_node: pytest.Class) -> bool:
    """The command line names tests inside the class (`file.py::TestX::test_y`): what it does not
    name was never collected, and that is the user's selection, not a collection trick."""
    for arg in config.args:
        path, sep, rest = str(arg).partition("::")
        if not sep or not rest.startswith(f"{class_node.name}::"):
            continue
        candidate = Path(path)
        if not candidate.is_absolute():
            candidate = config.invocation_params.dir / candidate
        if candidate.resolve() == Path(class_node.path).resolve():
            return True
    return False


# ---- running: who may skip, what a pass means -------------------------------------------------


def _overridden(item: pytest.Item) -> bool:
    """A contract test the adapter's class overrides (its marks are the guard's business)."""
    cls = getattr(item, "cls", None)
    name = _base(item)
    return cls is not None and name in contract_tests(cls) and not defined_in_contract(cls, name)


def _inherited(item: pytest.Item) -> bool:
    """A contract test the adapter's class runs as the contract defines it."""
    cls = getattr(item, "cls", None)
    return cls is not None and _contract_class(item) is not None and defined_in_contract(cls, _base(item))


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, None, None]:
    _running.append(item)
    try:
        return (yield)
    finally:
        _running.pop()


def _fail(report: pytest.TestReport, message: str) -> None:
    report.outcome = "failed"
    report.longrepr = f"{message} See {GUIDE}."


def _check_capabilities(item: pytest.Item, report: pytest.TestReport) -> None:
    """The first test of a class fixes the capabilities; a later one that sees others fails."""
    seen = item.stash.get(CAPABILITIES, None)
    class_node = _contract_class(item)
    if seen is None or class_node is None:
        return
    state = item.config.stash[_STATE]
    first = state.capabilities.setdefault(class_node.nodeid, (seen, item.nodeid))
    if first[0] != seen and report.outcome != "failed":
        _fail(
            report,
            f"contract guard: the adapter's capabilities changed during the run: {first[1]} saw "
            f"{first[0]}, {item.name} sees {seen}. Capabilities are declared once, on the adapter; "
            "a fixture that changes them per test decides which tests run.",
        )


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    report: pytest.TestReport = yield
    contract_skip = item.stash.get(CONTRACT_SKIP, None)
    if isinstance(item, ContractGuard):
        if report.skipped:
            _fail(report, f"contract guard: the guard of {item.contract_class.__name__} was skipped.")
        if report.when == "call":
            record = {"guard": True, "test": GUARD, "inherited": True, **item.class_record}
            report.user_properties.append((RECORD, record))
        return report
    if _contract_class(item) is None:
        return report
    if report.skipped and _inherited(item) and contract_skip is None:
        xfailed = getattr(report, "wasxfail", None)
        if xfailed is not None:
            how, why = "xfailed", xfailed
            del report.wasxfail
        else:
            how = "skipped"
            why = _skip_reason(report)
        _fail(
            report,
            f"contract guard: {item.name} is a contract test and was {how} by something other than the "
            f"contract ({why or 'no reason given'}). Only a capability the adapter does not declare, "
            "a reasoned contract_opt_outs entry, or an override marked @known_broken(reason=...) or "
            "skipped with a reason may keep a contract test from passing.",
        )
    elif report.when == "call" and report.passed and _inherited(item):
        if item.stash.get(BODY, None) != "completed":
            _fail(
                report,
                f"contract guard: {item.name} was reported passed, but the contract's test body did not "
                "run to completion (a hook that skipped or swallowed the call?).",
            )
    elif report.when == "call" and report.passed and _overridden(item):
        _fail(
            report,
            f"contract guard: {item.name} overrides a contract test and passed: an override replaces "
            "the contract's test, so it may only be skipped (with a reason) or fail as "
            "@known_broken(reason=...).",
        )
    if report.when == "call" or report.skipped:
        _check_capabilities(item, report)
    record = {
        "test": _base(item),
        "class": item.nodeid.rsplit("::", 1)[0],
        "inherited": _inherited(item),
        "skip": None if contract_skip is None else vars(contract_skip) | {"flags": list(contract_skip.flags)},
        "xfail": getattr(report, "wasxfail", None),
        "capabilities": item.stash.get(CAPABILITIES, None),
        "body": item.stash.get(BODY, None),
    }
    report.user_properties.append((RECORD, record))
    return report


# ---- the verdict ------------------------------------------------------------------------------


class _Recorder:
    """Merges each contract test's phases into one record. It reads only the test reports, which
    reach the controller under pytest-xdist too."""

    def __init__(self, state: _State) -> None:
        self.state = state

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        ours = [value for key, value in report.user_properties if key == RECORD]
        if not ours:
            return
        record = ours[-1]
        if record.get("guard"):
            self.state.classes[record["class"]] = record
        merged = self.state.records.setdefault(report.nodeid, {"nodeid": report.nodeid, "outcome": "passed"})
        merged.update({k: v for k, v in record.items() if v is not None or k not in merged})
        merged["duration_s"] = round(merged.get("duration_s", 0.0) + report.duration, 4)
        if report.failed:
            merged["outcome"] = "failed"
            merged.setdefault("message", _message(report))
        elif report.skipped and merged["outcome"] != "failed":
            xfailed = getattr(report, "wasxfail", None)
            merged["outcome"] = "xfailed" if xfailed is not None else "skipped"
            merged["reason"] = xfailed if xfailed is not None else _skip_reason(report)


def _skip_reason(report: pytest.TestReport) -> str:
    return report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)


def _message(report: pytest.TestReport) -> str:
    text = getattr(report, "longreprtext", "") or str(report.longrepr or "")
    return text[-3000:]


def class_verdict(record: dict[str, Any], tests: list[dict[str, Any]]) -> list[str]:
    """Why one contract class is not certifiable ([] when it is)."""
    why: list[str] = []
    if not record.get("bundles"):
        bases = ", ".join(record.get("contract_bases", [])) or "?"
        why.append(f"not a whole contract bundle (subclasses {bases}; certify a whole bundle)")
    if record.get("guard_problems"):
        why.append(f"the guard failed ({len(record['guard_problems'])} problem(s))")
    if record.get("deselected"):
        why.append(f"{len(record['deselected'])} contract test(s) deselected (-k, -m, --deselect)")
    if record.get("not_selected"):
        why.append(f"{sum(record['not_selected'].values())} contract test case(s) not selected (node ids)")
    expected = dict(record.get("expected", {}))
    ran: dict[str, int] = {}
    for t in tests:
        ran[t["test"]] = ran.get(t["test"], 0) + 1
    missing = {n: c - ran.get(n, 0) for n, c in expected.items() if ran.get(n, 0) < c}
    if missing and not record.get("deselected") and not record.get("not_selected"):
        why.append(
            f"{sum(missing.values())} contract test case(s) did not run ({', '.join(sorted(missing)[:4])})"
        )
    failed = [t for t in tests if t["outcome"] == "failed"]
    if failed:
        why.append(f"{len(failed)} failed")
    odd = [
        t
        for t in tests
        if t["outcome"] in ("skipped", "xfailed") and not t.get("skip") and t.get("inherited")
    ]
    if odd:
        why.append(f"{len(odd)} skipped without a contract reason")
    seen = {t["capabilities"] for t in tests if t.get("capabilities")}
    if len(seen) > 1:
        why.append(f"capabilities changed during the run ({len(seen)} different declarations)")
    if seen and {"GraphStoreContract", "GraphCongruenceContract"} & set(record.get("bundles", ())):
        from graphctx.contracts.graph import MINIMUM_TEMPLATES

        declared = set().union(*(json.loads(c).get("templates", []) for c in seen))
        lacking = sorted(MINIMUM_TEMPLATES - declared)
        if lacking:
            why.append(f"the store does not declare the minimum templates ({', '.join(lacking)})")
    return why


def verdicts(state: _State) -> list[tuple[str, dict[str, Any], list[dict[str, Any]], list[str]]]:
    out = []
    for class_id, record in sorted(state.classes.items()):
        tests = [r for r in state.records.values() if r.get("class") == class_id and not r.get("guard")]
        out.append((class_id, record, tests, class_verdict(record, tests)))
    return out


def _summary(tests: list[dict[str, Any]]) -> str:
    counts: dict[str, int] = {}
    for t in tests:
        counts[t["outcome"]] = counts.get(t["outcome"], 0) + 1
    flags = sorted({f for t in tests if t.get("skip") for f in t["skip"].get("flags", [])})
    text = ", ".join(f"{n} {o}" for o, n in sorted(counts.items()))
    return text + (f" (skipped by capability: {', '.join(flags)})" if flags else "")


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    state = config.stash[_STATE]
    if not state.classes:
        return
    terminalreporter.write_sep("=", "graphctx contract verdict")
    for _class, record, tests, why in verdicts(state):
        name = f"{record['name']} ({', '.join(record['bundles']) or 'partial'})"
        if why:
            terminalreporter.write_line(f"FAIL {name}: {'; '.join(why)} -- {_summary(tests)}", red=True)
        else:
            terminalreporter.write_line(f"PASS {name}: {_summary(tests)}", green=True)
    terminalreporter.write_line(
        "(checks made in this pytest process; `graphctx certify` runs the suite under its own control "
        "and writes a certificate)"
    )


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    path = session.config.getoption("--graphctx-report")
    if not path or hasattr(session.config, "workerinput"):
        return
    from graphctx.contracts import CONTRACT_VERSION, DATASET_VERSION

    state = session.config.stash[_STATE]
    report = {
        "report_version": REPORT_VERSION,
        "contract_version": CONTRACT_VERSION,
        "dataset_version": DATASET_VERSION,
        "exitstatus": int(exitstatus),
        "classes": [
            {**record, "verdict": "FAIL" if why else "PASS", "why": why}
            for _, record, _, why in verdicts(state)
        ],
        "tests": sorted(state.records.values(), key=lambda r: r["nodeid"]),
    }
    Path(path).write_text(json.dumps(report, indent=1, sort_keys=True, default=str))
