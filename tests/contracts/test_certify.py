"""`graphctx certify` fails broken adapters with a verdict that names why, and the ways around the
suite that could reach a certify run are refused: options and plugins in the environment, the
caller's conftest, capabilities that change between instances, a factory that skips, a known-broken
test that passes, a contract test patched at import, and mistakes on the command line."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from certify_run import REPO, certify

BROKEN = REPO / "tests" / "contracts" / "broken"


def test_a_second_hop_blind_store_fails_whatever_the_caller_sets(tmp_path: Path) -> None:
    """The caller's PYTEST_ADDOPTS (-k, -p no:...), PYTEST_PLUGINS and a conftest in the working
    directory all try to hide the depth tests; certify runs them anyway and fails the store."""
    cwd = tmp_path / "project"
    cwd.mkdir()
    (cwd / "conftest.py").write_text(
        textwrap.dedent(
            """
            import pytest

            def pytest_collection_modifyitems(items):
                items[:] = [i for i in items if "depth" not in i.name]

            @pytest.hookimpl(tryfirst=True)
            def pytest_pyfunc_call(pyfuncitem):
                return True
            """
        )
    )
    (cwd / "hide_failures.py").write_text("def pytest_collection_modifyitems(items):\n    items.clear()\n")
    env = {
        "PYTEST_ADDOPTS": "-k 'not depth' -p no:graphctx_contracts --deselect x",
        "PYTEST_PLUGINS": "hide_failures",
        "PYTHONPATH": f"{BROKEN}:{cwd}",
    }
    run = certify(
        ["broken_graph_second_hop_blind:create_graph_store", "--port", "graph"],
        tmp_path / "cert",
        cwd=cwd,
        env=env,
    )
    assert run.code == 1, run.why
    cert = run.certificate
    assert cert is not None and cert["verdict"] == "FAIL"
    assert run.output.startswith("graphctx certify: FAIL"), run.output
    failed = run.tests("failed")
    assert any("test_isolation_depth_neighbourhood_at_each_hop" in t for t in failed), failed
    assert all("TestCertifyGraphStoreContract::" in t for t in failed if "depth" in t)
    assert run.check("every contract test ran")["ok"], run.why  # nothing was deselected or dropped
    assert not run.check("no failure")["ok"]
    assert (run.out / "certificate.md").read_text().startswith("# graphctx certificate: FAIL")


CHEAT = '''
"""A factory that cheats: capabilities shrink after the first instances, the 40th call skips, and a
contract test is patched when this module is imported."""

import itertools

import pytest

from graphctx.adapters.sqlite import SqliteGraphStore
from graphctx.contracts.graph import GetByIdsTests
from graphctx.kernel import templates as t
from graphctx.kernel.ports import Capabilities

GetByIdsTests.test_get_by_ids_lists_duplicates_once = lambda self, graph_store, scope: None
_calls = itertools.count()


class Shifty(SqliteGraphStore):
    def __init__(self, path, n):
        super().__init__(path)
        self.n = n

    @property
    def capabilities(self):
        templates = self.supported_templates()
        if self.n > 5:
            templates = templates - {t.SCOPE_STATS.name}
        return Capabilities(templates=templates)


def create(settings):
    n = next(_calls)
    if n == 40:
        pytest.skip("not on this test")
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    store = Shifty(settings.data_dir / "graph.db", n)
    store.ensure_schema()
    return store
'''


def test_a_cheating_factory_fails_and_every_cheat_is_named(tmp_path: Path) -> None:
    cwd = tmp_path / "project"
    cwd.mkdir()
    (cwd / "cheat.py").write_text(CHEAT)
    run = certify(
        [
            "cheat:create",
            "--port",
            "graph",
            "--known-broken",
            "test_get_by_ids_omits_missing=was broken in 1.0",
        ],
        tmp_path / "cert",
        cwd=cwd,
        cli=False,
    )
    assert run.code == 1, run.why
    assert not run.check("capabilities never changed")["ok"], run.why
    assert not run.check("known-broken tests fail as declared")["ok"], run.why
    assert not run.check("no failure")["ok"]
    failures = {t["test"]: t.get("message", "") for t in run.certificate["tests"] if t["outcome"] == "failed"}  # type: ignore[index]
    assert any("by something other than the contract" in m for m in failures.values()), failures
    patched = [
        t for t in run.certificate["tests"] if t["test"].endswith("test_get_by_ids_lists_duplicates_once")
    ]  # type: ignore[index]
    assert patched and all(
        t["outcome"] != "passed" or run.check("every pass ran the contract's body")["ok"] for t in patched
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["no-such-adapter"], "no graph, lexical or vector entry point named"),
        (["sqlite", "--port", "lexical"], "is not registered as a lexical adapter"),
        (["nomodule:create", "--port", "graph"], "cannot find the factory"),
        (["graphctx.settings:Settings"], "needs --port"),
        (["sqlite", "--opt-out", "test_find_exact_by_each_field"], "needs TEST=REASON with a reason"),
        (["sqlite", "--opt-out", "test_find_exact_by_each_field=  "], "needs TEST=REASON with a reason"),
        (["sqlite", "--opt-out", "test_gone_long_ago=renamed"], "names no contract test"),
        (["sqlite", "--opt-out", "test_contract_guard_DO_NOT_OVERRIDE=trust me"], "names no contract test"),
        (["sqlite", "--known-broken", "test_x=y"], "names no contract test"),
        (
            [
                "sqlite",
                "--opt-out",
                "test_find_exact_by_each_field=a",
                "--known-broken",
                "test_find_exact_by_each_field=b",
            ],
            "not both",
        ),
    ],
)
def test_a_wrong_command_is_refused_before_anything_runs(
    tmp_path: Path, args: list[str], message: str
) -> None:
    run = certify(args, tmp_path / "cert")
    assert run.code == 2, run.output
    assert message in run.output
    assert run.certificate is None


def test_the_cli_refuses_an_unknown_port(tmp_path: Path) -> None:
    run = certify(["sqlite", "--port", "everything"], tmp_path / "cert")
    assert run.code == 2 and "unknown port" in run.output


@pytest.mark.parametrize(
    ("factory", "port", "failing"),
    [
        (
            "broken_lexical_post_filter:create_lexical_index",
            "lexical",
            "test_search_filters_by_scope_before_the_cut",
        ),
        (
            "broken_vector_collection_per_dimension:create_vector_index",
            "vector",
            "test_two_models_of_the_same_dimension_never_share_points",
        ),
    ],
)
def test_broken_indexes_fail_certification(tmp_path: Path, factory: str, port: str, failing: str) -> None:
    run = certify([factory, "--port", port], tmp_path / "cert", env={"PYTHONPATH": str(BROKEN)})
    assert run.code == 1, run.why
    assert any(t.endswith(failing) for t in run.tests("failed")), run.tests("failed")
    assert run.check("every contract test ran")["ok"], run.why


STALLS = textwrap.dedent(
    """
    import time

    from graphctx.adapters.sqlite import SqliteGraphStore
    from graphctx.kernel import templates as t


    class Stalls(SqliteGraphStore):
        name = "sqlite-that-stalls"

        def run(self, template, scope, params):
            if template.name == t.NEIGHBOURHOOD.name:
                time.sleep(3600)  # a backend call that never answers
            return super().run(template, scope, params)


    def create(settings):
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        store = Stalls(settings.data_dir / "graph.db")
        store.ensure_schema()
        return store
    """
)


@pytest.mark.parametrize("started", ["in the foreground", "as a background job (Ctrl-C ignored)"])
def test_a_run_that_stalls_is_interrupted_and_still_reports_what_ran(tmp_path: Path, started: str) -> None:
    """A backend call that never answers: the run is stopped at --timeout as Ctrl-C would stop it, so
    the certificate still lists the tests that ran and the console (written as the run goes) shows
    where it stopped, instead of a bare 'timed out'. Also when certify itself was started with
    SIGINT ignored, as `certify ... &` in a script starts it."""
    cwd = tmp_path / "project"
    cwd.mkdir()
    (cwd / "stalls.py").write_text(STALLS)
    out = tmp_path / "cert"
    run = certify(
        ["stalls:create", "--port", "graph", "--timeout", "60"],
        out,
        cwd=cwd,
        cli=False,
        timeout_s=300,
        sigint_ignored=started != "in the foreground",
    )
    assert run.code == 1, run.why
    assert run.certificate is not None
    assert run.certificate["verdict"] == "FAIL"
    assert "timed out" in run.check("the suite ran")["detail"], run.why
    assert run.tests("passed"), run.why  # the report was written: what ran before the stall is kept
    stalled = [c for c in run.certificate["classes"] if c["missing"]]
    assert stalled, run.why  # the stall stopped the run: the tests after it never ran
    log = (out / "pytest.log").read_text()
    assert "KeyboardInterrupt" in log, log[-2000:]
    assert "certify: the run timed out after 60 s" in log
