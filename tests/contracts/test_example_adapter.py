"""The worked example in docs/examples/dictgraph stays certified.

The repository's test run only collects `tests/`, so the example's own test file is run here in a
pytest subprocess, exactly as its README says (`python -m pytest docs/examples/dictgraph`), and its
JUnit report must show every contract test of both contract classes passing: no failure, no
error, and no skip but the one its capabilities call for (an in-memory store declares
`durable=False`, so the reopen test skips, naming the capability and the hook).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest
from junit_run import run_pytest  # shared subprocess runner (tests/contracts is on sys.path)

from graphctx.contracts._guard import contract_tests
from graphctx.contracts.congruence import GraphCongruenceContract
from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel import templates as t
from graphctx.kernel.ports import GraphStore
from graphctx.model import Entity
from graphctx.scope import Scope
from graphctx.settings import Settings

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "docs" / "examples" / "dictgraph"
TIMEOUT_S = 600


@dataclass(frozen=True)
class Report:
    code: int
    outcomes: dict[str, dict[str, str]]
    """{class: {test name: passed|failed|skipped}}"""
    skips: dict[tuple[str, str], str]
    """{(class, test name): skip message}"""
    console: str
    """The console tail, for failure messages."""


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Report:
    """The example's run, read from its JUnit report."""
    junit = tmp_path_factory.mktemp("example") / "report.xml"
    run = run_pytest(["docs/examples/dictgraph", "-rfEs"], cwd=REPO, junit=junit, timeout_s=TIMEOUT_S)
    outcomes: dict[str, dict[str, str]] = {}
    skips: dict[tuple[str, str], str] = {}
    for case in run.outcomes:
        outcomes.setdefault(case.cls, {})[case.name] = case.status
        if case.status == "skipped":
            skips[case.cls, case.name] = case.message
    return Report(run.code, outcomes, skips, run.console)


NOT_DURABLE = "adapter does not declare capability durable and provides no `reopen_graph_store` hook"
EXPECTED_SKIPS = {
    ("TestDictGraph", "test_close_then_reopen_keeps_data"): NOT_DURABLE,
    ("TestDictGraph", "test_close_then_reopen_keeps_every_kind_of_write"): NOT_DURABLE,
}
"""The only skips the example may have, with their reasons: the store is in memory (durable=False)."""


def test_the_example_passes_with_no_failure_and_only_the_expected_skip(report: Report) -> None:
    statuses = [s for tests in report.outcomes.values() for s in tests.values()]
    assert statuses, f"the example ran no test:\n{report.console}"
    assert statuses.count("failed") == 0, report.console
    assert sorted(report.skips) == sorted(EXPECTED_SKIPS), f"the example skips other tests:\n{report.console}"
    for key, reason in EXPECTED_SKIPS.items():
        assert reason in report.skips[key], (key, report.skips[key])
    assert report.code == 0, report.console


@pytest.mark.parametrize(
    ("cls", "contract"),
    [("TestDictGraph", GraphStoreContract), ("TestDictGraphCongruence", GraphCongruenceContract)],
)
def test_the_example_runs_every_contract_test(report: Report, cls: str, contract: type) -> None:
    """Each contract class ran in full: every test it defines shows up (parametrised ones at least once)."""
    ran = {name.split("[", 1)[0] for name in report.outcomes.get(cls, {})}
    missing = sorted(set(contract_tests(contract)) - ran)
    assert not missing, f"{cls} did not run {missing}:\n{report.console}"


@pytest.fixture
def dictgraph() -> Iterator[ModuleType]:
    """The example module, imported from its file (it is not an installed package here)."""
    spec = importlib.util.spec_from_file_location("dictgraph_example", EXAMPLE / "dictgraph.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules[spec.name]


def test_the_example_entry_point_factory_opens_a_graph_store(dictgraph: ModuleType, tmp_path: Path) -> None:
    """What `graphctx.graph_stores: dictgraph` would load: a GraphStore translating the whole catalogue."""
    store = dictgraph.create_graph_store(Settings(data_dir=tmp_path))
    try:
        assert isinstance(store, GraphStore)
        assert store.name == "dictgraph"
        assert store.capabilities.templates == frozenset(t.CATALOG)
        scope = Scope("example", "default")
        store.run(t.ENTITY_UPSERT, scope, t.EntityUpsertParams(entities=(Entity(id="a", name="A"),)))
        assert [e.id for e in store.run(t.ENTITY_GET, scope, t.EntityGetParams(ids=("a",))).entities] == ["a"]
    finally:
        store.close()


def test_the_example_declares_its_entry_point() -> None:
    text = (EXAMPLE / "pyproject.toml").read_text()
    assert '[project.entry-points."graphctx.graph_stores"]' in text
    assert 'dictgraph = "dictgraph:create_graph_store"' in text
