"""Ways to make a contract run look green without the contract passing, tried against the plugin
(plain pytest) -- each is refused: the run fails, or the verdict printed at the end names why.

Every scenario is a directory of its own (test file, conftest, options, environment) run in a pytest
subprocess over the reference SQLite store, with a broken store where the bypass would otherwise hide
a failure. Under `graphctx certify` none of them is possible at all (its own rootdir and ini, no
caller's conftest or options, generated classes); tests/contracts/test_certify.py tries the ones that
could reach it. docs/results.md counts them.
"""

from __future__ import annotations

import os
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from junit_run import PytestRun, run_pytest

TIMEOUT_S = 300

HEADER = '''
import pytest

from graphctx.adapters.sqlite import SqliteGraphStore
from graphctx.contracts.graph import FindExactTests, GetByIdsTests, GraphStoreContract
from graphctx.kernel import templates as t
from graphctx.kernel.ports import Capabilities


class Sqlite:
    @pytest.fixture
    def graph_store(self):
        store = SqliteGraphStore(":memory:")
        store.ensure_schema()
        yield store
        store.close()


class BrokenFind(SqliteGraphStore):
    """find_exact that finds nothing: every find_exact test fails."""

    def handlers(self):
        return {**super().handlers(), t.ENTITY_FIND_EXACT.name: lambda scope, p: t.ExactMatches()}


class Broken:
    @pytest.fixture
    def graph_store(self):
        store = BrokenFind(":memory:")
        store.ensure_schema()
        yield store
        store.close()
'''

FIND = "test_find_exact_by_each_field"
OTHER = "test_get_by_ids_follows_given_order"


@dataclass(frozen=True)
class Bypass:
    """One attempt: the class body and module extras, a conftest, pytest arguments, environment."""

    classes: str
    conftest: str = ""
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)


def _run(tmp_path: Path, bypass: Bypass) -> PytestRun:
    (tmp_path / "test_adapter_contract.py").write_text(HEADER + textwrap.dedent(bypass.classes))
    if bypass.conftest:
        (tmp_path / "conftest.py").write_text(textwrap.dedent(bypass.conftest))
    saved = {k: os.environ.get(k) for k in bypass.env}
    os.environ.update(bypass.env)
    try:
        return run_pytest(
            [*bypass.args, "-rN"], cwd=tmp_path, junit=tmp_path / "report.xml", timeout_s=TIMEOUT_S
        )
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def verdict_lines(run: PytestRun) -> list[str]:
    return [line for line in run.console.splitlines() if line.startswith(("PASS ", "FAIL "))]


BROKEN_CLASS = "class TestAcme(Broken, GraphStoreContract):\n    pass\n"


def test_deselecting_with_k_is_named_in_the_verdict(tmp_path: Path) -> None:
    """`-k "not find_exact"` hides the broken lookups: the tests pass, the verdict says why it is no
    certification."""
    run = _run(tmp_path, Bypass(BROKEN_CLASS, args=("-k", "get_by_ids")))
    assert run.code == 0, run.console  # green: the broken lookups never ran
    (line,) = verdict_lines(run)
    assert line.startswith("FAIL TestAcme") and "deselected (-k, -m, --deselect)" in line, line


def test_deselecting_node_ids_is_named_in_the_verdict(tmp_path: Path) -> None:
    run = _run(
        tmp_path, Bypass(BROKEN_CLASS, args=(f"--deselect=test_adapter_contract.py::TestAcme::{FIND}",))
    )
    (line,) = verdict_lines(run)
    assert line.startswith("FAIL TestAcme") and "deselected" in line, line


def test_a_collection_hook_that_drops_tests_fails_the_guard(tmp_path: Path) -> None:
    """A conftest removing the failing tests without deselecting them: the guard fails the run."""
    conftest = """
    def pytest_collection_modifyitems(items):
        items[:] = [i for i in items if "find_exact" not in i.name and "injection" not in i.name]
    """
    run = _run(tmp_path, Bypass(BROKEN_CLASS, conftest=conftest))
    guard = next(o for o in run.outcomes if o.name == "test_contract_guard_DO_NOT_OVERRIDE")
    assert guard.status == "failed", run.console
    assert "removed from the run without being deselected" in guard.message
    assert run.code == 1


def test_a_collection_hook_that_deselects_is_named_in_the_verdict(tmp_path: Path) -> None:
    conftest = """
    def pytest_collection_modifyitems(config, items):
        gone = [i for i in items if "find_exact" in i.name]
        items[:] = [i for i in items if i not in gone]
        config.hook.pytest_deselected(items=gone)
    """
    run = _run(tmp_path, Bypass(BROKEN_CLASS, conftest=conftest, args=("-k", "find_exact or get_by_ids")))
    (line,) = verdict_lines(run)
    assert line.startswith("FAIL TestAcme") and "deselected" in line, line


@pytest.mark.parametrize(
    ("how", "args", "env"),
    [
        ("autoload off", (), {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}),
        ("plugin disabled", ("-p", "no:graphctx_contracts"), {}),
    ],
)
def test_running_without_the_plugin_fails_every_contract_test(
    tmp_path: Path, how: str, args: tuple[str, ...], env: dict[str, str]
) -> None:
    node_ids = [f"test_adapter_contract.py::TestAcme::{n}" for n in (FIND, OTHER)]
    run = _run(tmp_path, Bypass(BROKEN_CLASS, args=(*args, *node_ids), env=env))
    outcomes = {o.name: o for o in run.outcomes}
    for name in (FIND, OTHER):
        assert outcomes[name].status == "failed", (how, outcomes[name])
        assert "contract plugin is not loaded" in outcomes[name].message, how
    assert run.code == 1


def test_capabilities_changed_per_test_in_the_fixture_fail(tmp_path: Path) -> None:
    """A fixture that declares no find_exact for the find_exact tests (so they skip by capability)."""
    classes = """
    class Shrinking(BrokenFind):
        def __init__(self, path, hide):
            super().__init__(path)
            self.hide = hide

        @property
        def capabilities(self):
            templates = self.supported_templates()
            if self.hide:
                templates = templates - {t.ENTITY_FIND_EXACT.name}
            return Capabilities(templates=templates, durable=False, concurrent_readers=False)


    class TestAcme(GraphStoreContract):
        @pytest.fixture
        def graph_store(self, request):
            store = Shrinking(":memory:", "find_exact" in request.node.name)
            store.ensure_schema()
            yield store
            store.close()
    """
    run = _run(tmp_path, Bypass(classes, args=("-k", "get_by_ids or find_exact")))
    changed = [o for o in run.outcomes if "capabilities changed during the run" in o.message]
    assert changed and all(o.status == "failed" for o in changed), run.console
    assert run.code == 1


def test_a_partial_bundle_is_not_certifiable(tmp_path: Path) -> None:
    """Subclassing two mixins of the bundle: every test passes, the verdict says it is not a bundle."""
    run = _run(tmp_path, Bypass("class TestAcme(Sqlite, FindExactTests, GetByIdsTests):\n    pass\n"))
    assert run.code == 0
    (line,) = verdict_lines(run)
    assert line.startswith("FAIL TestAcme") and "not a whole contract bundle" in line, line
    assert "FindExactTests, GetByIdsTests" in line


def test_a_noop_override_under_a_false_skipif_fails(tmp_path: Path) -> None:
    """`skipif(False, reason=...)` looks reasoned to a static check, but the override runs and passes."""
    classes = f"""
    class TestAcme(Broken, GraphStoreContract):
        @pytest.mark.skipif(False, reason="backend X has no exact lookup")
        def {FIND}(self, graph_store, scope):
            pass
    """
    run = _run(tmp_path, Bypass(classes, args=(f"test_adapter_contract.py::TestAcme::{FIND}",)))
    (outcome,) = [o for o in run.outcomes if o.name == FIND]
    assert outcome.status == "failed" and "overrides a contract test and passed" in outcome.message


def test_a_store_that_declares_no_templates_is_not_certifiable(tmp_path: Path) -> None:
    classes = """
    class Silent(SqliteGraphStore):
        @property
        def capabilities(self):
            return Capabilities(durable=False, concurrent_readers=False)


    class TestAcme(GraphStoreContract):
        @pytest.fixture
        def graph_store(self):
            store = Silent(":memory:")
            store.ensure_schema()
            yield store
            store.close()
    """
    run = _run(tmp_path, Bypass(classes))
    (line,) = verdict_lines(run)
    assert line.startswith("FAIL TestAcme") and "minimum templates" in line, line
    assert run.code == 1  # the store runs templates it does not declare


@pytest.mark.parametrize(
    ("name", "conftest"),
    [
        (
            "a pyfunc_call hook that never calls the test",
            """
            import pytest

            @pytest.hookimpl(tryfirst=True)
            def pytest_pyfunc_call(pyfuncitem):
                return True
            """,
        ),
        (
            "a report hook that turns failures into passes",
            """
            import pytest

            @pytest.hookimpl(wrapper=True)
            def pytest_runtest_makereport(item, call):
                report = yield
                if report.failed:
                    report.outcome, report.longrepr = "passed", None
                return report
            """,
        ),
        (
            "a conftest that replaces the contract's test in the contract class",
            f"""
            from graphctx.contracts.graph import FindExactTests

            FindExactTests.{FIND} = lambda self, graph_store, scope: None
            """,
        ),
    ],
)
def test_a_pass_without_the_contracts_body_fails(tmp_path: Path, name: str, conftest: str) -> None:
    node = f"test_adapter_contract.py::TestAcme::{FIND}"
    run = _run(tmp_path, Bypass(BROKEN_CLASS, conftest=conftest, args=(node,)))
    (outcome,) = [o for o in run.outcomes if o.name == FIND]
    assert outcome.status == "failed", (name, run.console)
    assert "body did not run to completion" in outcome.message, name


def test_stopping_at_the_first_failure_is_named_in_the_verdict(tmp_path: Path) -> None:
    run = _run(tmp_path, Bypass(BROKEN_CLASS, args=("-x",)))
    assert run.code == 1
    (line,) = verdict_lines(run)
    assert line.startswith("FAIL TestAcme") and "did not run" in line, line


def test_a_setup_hook_that_xfails_contract_tests_fails(tmp_path: Path) -> None:
    conftest = """
    import pytest

    def pytest_runtest_setup(item):
        if "find_exact" in item.name:
            pytest.xfail("known flaky")
    """
    run = _run(
        tmp_path,
        Bypass(BROKEN_CLASS, conftest=conftest, args=(f"test_adapter_contract.py::TestAcme::{FIND}",)),
    )
    (outcome,) = [o for o in run.outcomes if o.name == FIND]
    assert outcome.status == "failed" and "by something other than the contract" in outcome.message
