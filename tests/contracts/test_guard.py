"""The guard: an adapter's test class cannot quietly weaken the contract.

Generated test files hold an adapter test class per scenario (each subclassing the real
GraphStoreContract over the SQLite store): one file for the class-level scenarios, and one file per
scenario that puts a mark on its whole module. They run once, together, in a pytest subprocess with
the contract plugin, restricted to the guard and two ordinary contract tests per class, and each test
below reads its class's outcomes from the JUnit report. `problems()` and `known_broken()` are also
checked in-process.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest
from junit_run import Outcome, run_pytest  # shared subprocess runner (tests/contracts on sys.path)

from graphctx.contracts import known_broken
from graphctx.contracts._guard import GUARD, contract_hooks, problems
from graphctx.contracts.graph import GraphStoreContract

TARGET = "test_get_by_ids_omits_missing"
"""The contract test the scenarios remove, override or opt out of."""
OTHER = "test_get_by_ids_follows_given_order"
"""An untouched contract test, run alongside."""
TIMEOUT_S = 300
MAIN_FILE = "test_adapter_contract.py"

HEADER = """
import pytest

from graphctx.adapters.sqlite import SqliteGraphStore
from graphctx.contracts import known_broken
from graphctx.contracts.graph import GraphStoreContract
from graphctx.kernel.ports import Capabilities


class _Sqlite(GraphStoreContract):
    @pytest.fixture
    def graph_store(self):
        store = SqliteGraphStore(":memory:")
        store.ensure_schema()
        yield store
        store.close()
"""


@dataclass(frozen=True)
class Scenario:
    body: str
    """The class body (the class is `Test<Name>(_Sqlite)`)."""
    tests: tuple[str, ...] = (GUARD, TARGET, OTHER)
    """Contract tests to select; a removed test cannot be selected. The plugin runs the guard anyway."""
    module_mark: str = ""
    """A module-level `pytestmark`: the scenario then gets a file of its own."""

    def file(self, name: str) -> str:
        return f"test_{name.lower()}_contract.py" if self.module_mark else MAIN_FILE


SKIPPED_BY_SOMEONE_ELSE = "by something other than the contract"
"""What the plugin says when a contract test the class inherits is skipped or xfailed by the class."""

SCENARIOS: dict[str, Scenario] = {
    "Untouched": Scenario("pass"),
    # (i) a contract test removed
    "RemovedByNone": Scenario(f"{TARGET} = None", (GUARD, OTHER)),
    "RemovedByValue": Scenario(f"{TARGET} = 'not today'", (GUARD, OTHER)),
    # (ii) a contract test overridden without a reasoned marker
    "OverriddenBare": Scenario(f"def {TARGET}(self):\n    pass"),
    "OverriddenLooseXfail": Scenario(f"@pytest.mark.xfail(reason='flaky')\ndef {TARGET}(self):\n    pass"),
    "OverriddenStrictXfailNoReason": Scenario(
        f"@pytest.mark.xfail(strict=True)\ndef {TARGET}(self):\n    pass"
    ),
    "OverriddenSkipNoReason": Scenario(f"@pytest.mark.skip\ndef {TARGET}(self):\n    pass"),
    "OverriddenSkipBlankReason": Scenario(f"@pytest.mark.skip(reason='  ')\ndef {TARGET}(self):\n    pass"),
    # ... and the two ways that are allowed
    "OverriddenKnownBroken": Scenario(
        f"@known_broken('backend X cannot do it (issue #1)')\ndef {TARGET}(self):\n"
        "    raise AssertionError('still broken')"
    ),
    "OverriddenSkipWithReason": Scenario(
        f"@pytest.mark.skip(reason='backend X has no such lookup')\ndef {TARGET}(self):\n    pass"
    ),
    # (iii) contract_opt_outs naming a test that does not exist, or without a reason
    "OptOutUnknownName": Scenario("contract_opt_outs = {'test_get_by_ids_renamed_long_ago': 'old reason'}"),
    "OptOutEmptyReason": Scenario(f"contract_opt_outs = {{{TARGET!r}: ''}}"),
    "OptOutBlankReason": Scenario(f"contract_opt_outs = {{{TARGET!r}: '   '}}"),
    "OptOutWithReason": Scenario(f"contract_opt_outs = {{{TARGET!r}: 'backend X cannot hydrate by id'}}"),
    # (iv) the guard itself overridden (even with a reason) or removed
    "GuardOverridden": Scenario(f"def {GUARD}(self):\n    pass"),
    "GuardOverriddenKnownBroken": Scenario(f"@known_broken('we know')\ndef {GUARD}(self):\n    pass"),
    "GuardRemoved": Scenario(f"{GUARD} = None", (TARGET, OTHER)),
    "GuardOverriddenUnderClassXfail": Scenario(
        f"pytestmark = pytest.mark.xfail(strict=True, reason='wip')\ndef {GUARD}(self):\n    pass"
    ),
    # the guard runs even when it is not selected
    "GuardNotSelected": Scenario("contract_opt_outs = {'test_gone': 'old reason'}", (TARGET, OTHER)),
    # known_broken is strict: an override marked known-broken that passes fails the run
    "KnownBrokenButPasses": Scenario(
        f"@known_broken('was broken on backend X 1.0')\ndef {TARGET}(self, graph_store, scope):\n"
        f"    super().{TARGET}(graph_store, scope)"
    ),
    # (v) contract members that are not hooks, overridden
    "GateOverridden": Scenario(
        "@pytest.fixture(autouse=True)\ndef _contract_gate(self):\n    pytest.skip('not today')"
    ),
    "CapabilitiesDenied": Scenario("def subject_capabilities(self, request):\n    return Capabilities()"),
    "ScopeFixtureOverridden": Scenario("@pytest.fixture\ndef other_scope(self, scope):\n    return scope"),
    "HelperOverridden": Scenario("def _snapshot(self, store, tenancy):\n    return {}"),
    "HooksWidened": Scenario(
        "contract_hooks = frozenset({'graph_store', 'subject_capabilities'})\n"
        "def subject_capabilities(self, request):\n    return Capabilities()"
    ),
    # ... while the hooks may be overridden
    "HookOverridden": Scenario(
        "@pytest.fixture\ndef reopen_graph_store(self):\n    return lambda store: store"
    ),
    # (vi) class-level and module-level skip / skipif / xfail marks
    "ClassXfail": Scenario("pytestmark = pytest.mark.xfail(reason='work in progress')"),
    "ClassSkip": Scenario("pytestmark = pytest.mark.skip(reason='later')"),
    "ClassSkipifList": Scenario("pytestmark = [pytest.mark.skipif(True, reason='no server here')]"),
    "ModuleSkip": Scenario("pass", module_mark="pytest.mark.skip(reason='later')"),
    "ModuleXfail": Scenario("pass", module_mark="pytest.mark.xfail(reason='work in progress')"),
    # skips and xfails the static checks cannot see: an extra autouse fixture
    "AutouseSkipFixture": Scenario(
        "@pytest.fixture(autouse=True)\ndef _not_today(self):\n    pytest.skip('not today')"
    ),
    "AutouseXfailFixture": Scenario(
        "@pytest.fixture(autouse=True)\ndef _known_flaky(self):\n    pytest.xfail('flaky backend')"
    ),
}

ALLOWED = (
    "Untouched",
    "HookOverridden",
    "OverriddenKnownBroken",
    "OverriddenSkipWithReason",
    "OptOutWithReason",
)
"""The untouched class and the allowed escapes; every other scenario weakens the contract."""
WEAKENING = [n for n in SCENARIOS if n not in ALLOWED]


# ---- running the generated files once -----------------------------------------------------------


@dataclass(frozen=True)
class Run:
    code: int
    outcomes: Mapping[str, Mapping[str, Outcome]]  # class -> test name -> outcome
    console: str

    def of(self, scenario: str) -> Mapping[str, Outcome]:
        found = self.outcomes.get(f"Test{scenario}")
        assert found, f"no outcome for Test{scenario}:\n{self.console}"
        return found


def render() -> dict[str, str]:
    """{file name: source} of the generated test files."""
    files: dict[str, str] = {}
    for name, s in SCENARIOS.items():
        file = s.file(name)
        if file not in files:
            files[file] = HEADER + (f"\npytestmark = {s.module_mark}\n" if s.module_mark else "")
        files[file] += f"\n\nclass Test{name}(_Sqlite):\n{textwrap.indent(s.body, '    ')}\n"
    return files


def run_files(directory: Path, node_ids: list[str]) -> Run:
    run = run_pytest(node_ids, cwd=directory, junit=directory / "report.xml", timeout_s=TIMEOUT_S)
    outcomes: dict[str, dict[str, Outcome]] = {}
    for case in run.outcomes:
        outcomes.setdefault(case.cls, {})[case.name] = case
    return Run(run.code, outcomes, run.console)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    directory = tmp_path_factory.mktemp("guard")
    for file, source in render().items():
        (directory / file).write_text(source)
    node_ids = [f"{s.file(name)}::Test{name}::{test}" for name, s in SCENARIOS.items() for test in s.tests]
    return run_files(directory, node_ids)


def generated_classes() -> dict[str, type]:
    """{scenario: its class}, by executing the generated sources."""
    classes: dict[str, type] = {}
    for file, source in render().items():
        namespace: dict[str, object] = {}
        exec(compile(source, file, "exec"), namespace)
        classes.update({n.removeprefix("Test"): c for n, c in namespace.items() if n.startswith("Test")})  # type: ignore[misc]
    return classes


def guard_failure(run: Run, scenario: str) -> str:
    guard = run.of(scenario)[GUARD]
    assert guard.status == "failed", f"the guard of Test{scenario} did not fail: {guard}"
    assert f"contract guard: Test{scenario} weakens the contract" in guard.message
    return guard.message


# ---- the baseline -----------------------------------------------------------------------------


def test_the_generated_scenarios_are_valid_python_and_real_contract_classes() -> None:
    classes = generated_classes()
    assert set(classes) == set(SCENARIOS)
    for cls in classes.values():
        assert isinstance(cls, type) and issubclass(cls, GraphStoreContract)
    assert problems(classes["Untouched"]) == []
    assert problems(classes["HookOverridden"]) == []


def test_an_untouched_class_passes_the_guard(run: Run) -> None:
    assert {name: o.status for name, o in run.of("Untouched").items()} == dict.fromkeys(
        (GUARD, TARGET, OTHER), "passed"
    )


def test_the_run_fails_as_a_whole(run: Run) -> None:
    """The scenarios that weaken the contract turn the whole pytest run red."""
    assert run.code == 1, run.console


@pytest.mark.parametrize("scenario", WEAKENING)
def test_no_weakened_class_runs_green(run: Run, scenario: str) -> None:
    """Every way to weaken the contract leaves at least one failed test in the class."""
    outcomes = run.of(scenario)
    assert any(o.status == "failed" for o in outcomes.values()), outcomes


def test_the_guard_runs_even_when_not_selected(run: Run) -> None:
    """Selecting only some tests of a class (node ids, -k, -m) still runs its guard."""
    assert "'test_gone', which is not a contract test" in guard_failure(run, "GuardNotSelected")
    assert run.of("GuardNotSelected")[OTHER].status == "passed"


# ---- (i) removed ------------------------------------------------------------------------------


@pytest.mark.parametrize("scenario", ["RemovedByNone", "RemovedByValue"])
def test_guard_fails_when_a_contract_test_is_removed(run: Run, scenario: str) -> None:
    message = guard_failure(run, scenario)
    assert f"{TARGET} (from GetByIdsTests) was removed by Test{scenario}" in message
    assert TARGET not in run.of(scenario)  # not collected: nothing ran under its name
    assert run.of(scenario)[OTHER].status == "passed"


# ---- (ii) overridden without a reasoned marker ------------------------------------------------


@pytest.mark.parametrize(
    "scenario",
    [
        "OverriddenBare",
        "OverriddenLooseXfail",
        "OverriddenStrictXfailNoReason",
        "OverriddenSkipNoReason",
        "OverriddenSkipBlankReason",
    ],
)
def test_guard_fails_when_a_contract_test_is_overridden_without_a_reason(run: Run, scenario: str) -> None:
    message = guard_failure(run, scenario)
    assert f"{TARGET} (from GetByIdsTests) is overridden in Test{scenario} without" in message
    assert "known_broken" in message


def test_an_override_marked_known_broken_is_allowed_and_expected_to_fail(run: Run) -> None:
    outcomes = run.of("OverriddenKnownBroken")
    assert outcomes[GUARD].status == "passed"
    assert outcomes[TARGET].status == "skipped"  # JUnit reports an xfail as skipped
    assert "backend X cannot do it (issue #1)" in outcomes[TARGET].message


def test_an_override_skipped_with_a_reason_is_allowed(run: Run) -> None:
    outcomes = run.of("OverriddenSkipWithReason")
    assert outcomes[GUARD].status == "passed"
    assert outcomes[TARGET].status == "skipped"
    assert "backend X has no such lookup" in outcomes[TARGET].message


# ---- (iii) contract_opt_outs ------------------------------------------------------------------


def test_guard_fails_on_an_opt_out_naming_no_contract_test(run: Run) -> None:
    message = guard_failure(run, "OptOutUnknownName")
    assert "'test_get_by_ids_renamed_long_ago', which is not a contract test" in message


@pytest.mark.parametrize("scenario", ["OptOutEmptyReason", "OptOutBlankReason"])
def test_guard_fails_on_an_opt_out_without_a_reason(run: Run, scenario: str) -> None:
    message = guard_failure(run, scenario)
    assert f"contract_opt_outs[{TARGET!r}] has no reason" in message


@pytest.mark.parametrize("scenario", ["OptOutEmptyReason", "OptOutBlankReason"])
def test_an_opt_out_without_a_reason_does_not_skip(run: Run, scenario: str) -> None:
    """A reasonless opt-out is not honoured: the test still runs (and the guard fails)."""
    assert run.of(scenario)[TARGET].status == "passed"


def test_an_opt_out_with_a_reason_skips_with_that_reason(run: Run) -> None:
    outcomes = run.of("OptOutWithReason")
    assert outcomes[GUARD].status == "passed"
    assert outcomes[TARGET].status == "skipped"
    assert "opted out: backend X cannot hydrate by id" in outcomes[TARGET].message
    assert outcomes[OTHER].status == "passed"


# ---- (iv) the guard overridden or removed ------------------------------------------------------


@pytest.mark.parametrize("scenario", ["GuardOverridden", "GuardOverriddenKnownBroken"])
def test_an_overridden_guard_is_replaced_by_the_real_one(run: Run, scenario: str) -> None:
    """The plugin runs the real guard in the override's place; it reports the override."""
    outcomes = run.of(scenario)
    assert set(outcomes) == {GUARD, TARGET, OTHER}
    assert f"Test{scenario} overrides the guard {GUARD}" in guard_failure(run, scenario)
    assert (outcomes[TARGET].status, outcomes[OTHER].status) == ("passed", "passed")


def test_a_removed_guard_still_runs(run: Run) -> None:
    assert f"{GUARD} (from ContractBase) was removed by TestGuardRemoved" in guard_failure(
        run, "GuardRemoved"
    )


def test_an_overridden_guard_under_a_class_xfail_still_fails(run: Run) -> None:
    """The plugin's guard carries none of the class's marks: a class-level strict xfail cannot absorb it."""
    message = guard_failure(run, "GuardOverriddenUnderClassXfail")
    assert f"overrides the guard {GUARD}" in message
    assert "class-level `xfail` mark" in message
    outcomes = run.of("GuardOverriddenUnderClassXfail")
    assert outcomes[TARGET].status == outcomes[OTHER].status == "failed"  # XPASS(strict)


def test_the_guard_reports_its_own_override() -> None:
    found = problems(generated_classes()["GuardOverridden"])
    assert found == [f"TestGuardOverridden overrides the guard {GUARD}"]


# ---- (v) contract members that are not hooks ---------------------------------------------------


@pytest.mark.parametrize(
    ("scenario", "member", "origin"),
    [
        ("GateOverridden", "_contract_gate", "ContractBase"),
        ("CapabilitiesDenied", "subject_capabilities", "_GraphSubject"),
        ("ScopeFixtureOverridden", "other_scope", "ContractBase"),
        ("HelperOverridden", "_snapshot", "IsolationTests"),
        ("HooksWidened", "contract_hooks", "_GraphSubject"),
        ("HooksWidened", "subject_capabilities", "_GraphSubject"),
    ],
)
def test_guard_fails_when_a_contract_member_is_overridden(
    run: Run, scenario: str, member: str, origin: str
) -> None:
    message = guard_failure(run, scenario)
    assert f"Test{scenario} overrides {member!r} (from {origin}), which is part of the contract" in message
    assert "the hooks are graph_store, reopen_graph_store" in message


def test_an_overridden_gate_cannot_skip_contract_tests(run: Run) -> None:
    """The override skips every test; the plugin reports each skip as a failure."""
    outcomes = run.of("GateOverridden")
    for name in (TARGET, OTHER):
        assert outcomes[name].status == "failed", outcomes[name]
        assert f"was skipped {SKIPPED_BY_SOMEONE_ELSE} (Skipped: not today)" in outcomes[name].message


def test_capabilities_denied_in_the_test_class_fail_the_guard(run: Run) -> None:
    outcomes = run.of("CapabilitiesDenied")
    assert outcomes[GUARD].status == "failed"
    assert outcomes[TARGET].status == "skipped"  # the real gate skipped it, on the overridden answer
    assert "adapter does not declare capability template:" in outcomes[TARGET].message


def test_an_overridden_hook_is_allowed(run: Run) -> None:
    assert {name: o.status for name, o in run.of("HookOverridden").items()} == dict.fromkeys(
        (GUARD, TARGET, OTHER), "passed"
    )


def test_each_harness_declares_its_hooks() -> None:
    from graphctx.contracts import (
        GraphCongruenceContract,
        LexicalIndexContract,
        RetrievalContract,
        VectorIndexContract,
    )

    assert contract_hooks(GraphStoreContract) == {"graph_store", "reopen_graph_store"}
    assert contract_hooks(GraphCongruenceContract) == {"graph_store", "reopen_graph_store"}
    assert contract_hooks(LexicalIndexContract) == {
        "lexical_index",
        "assert_same_hits",
        "reopen_lexical_index",
    }
    assert contract_hooks(VectorIndexContract) == {
        "vector_index",
        "assert_same_hits",
        "vector_index_for_model",
    }
    assert contract_hooks(RetrievalContract) == {"stores", "make_service"}


# ---- (vi) class- and module-level skip / skipif / xfail marks ----------------------------------


@pytest.mark.parametrize(
    ("scenario", "mark"), [("ClassXfail", "xfail"), ("ClassSkip", "skip"), ("ClassSkipifList", "skipif")]
)
def test_guard_fails_on_a_class_level_mark(run: Run, scenario: str, mark: str) -> None:
    message = guard_failure(run, scenario)
    assert f"Test{scenario} carries a class-level `{mark}` mark, which covers every contract test" in message


@pytest.mark.parametrize(("scenario", "mark"), [("ModuleSkip", "skip"), ("ModuleXfail", "xfail")])
def test_guard_fails_on_a_module_level_mark(run: Run, scenario: str, mark: str) -> None:
    message = guard_failure(run, scenario)
    assert f"a module-level `{mark}` mark (test_{scenario.lower()}_contract.py)" in message
    assert f"covers every test of Test{scenario}, the guard included" in message


@pytest.mark.parametrize("scenario", ["ClassSkip", "ClassSkipifList", "ModuleSkip"])
def test_contract_tests_skipped_by_a_wide_mark_fail(run: Run, scenario: str) -> None:
    outcomes = run.of(scenario)
    for name in (TARGET, OTHER):
        assert outcomes[name].status == "failed", outcomes[name]
        assert f"was skipped {SKIPPED_BY_SOMEONE_ELSE}" in outcomes[name].message


# ---- skips and xfails from fixtures -------------------------------------------------------------


@pytest.mark.parametrize(
    ("scenario", "how"), [("AutouseSkipFixture", "skipped"), ("AutouseXfailFixture", "xfailed")]
)
def test_contract_tests_skipped_by_a_fixture_fail(run: Run, scenario: str, how: str) -> None:
    """An extra autouse fixture is not a contract member, so the guard passes; but each contract test
    it skips or xfails is reported as a failure."""
    outcomes = run.of(scenario)
    assert outcomes[GUARD].status == "passed"
    for name in (TARGET, OTHER):
        assert outcomes[name].status == "failed", outcomes[name]
        assert f"was {how} {SKIPPED_BY_SOMEONE_ELSE}" in outcomes[name].message


# ---- known_broken -----------------------------------------------------------------------------


@pytest.mark.parametrize("reason", ["", "   ", "\n\t", None, 42])
def test_known_broken_requires_a_reason(reason: object) -> None:
    with pytest.raises(ValueError, match="needs a reason"):
        known_broken(reason)  # type: ignore[arg-type]


def test_known_broken_is_a_strict_xfail_with_the_reason() -> None:
    mark = known_broken("backend X: no unicode casefold (issue #7)").mark
    assert mark.name == "xfail"
    assert mark.kwargs == {"strict": True, "reason": "backend X: no unicode casefold (issue #7)"}


def test_known_broken_that_passes_fails_the_run(run: Run) -> None:
    outcomes = run.of("KnownBrokenButPasses")
    assert outcomes[GUARD].status == "passed"  # the override is reasoned ...
    assert outcomes[TARGET].status == "failed"  # ... but it passes, so strict xfail turns it red
    assert "XPASS(strict)" in outcomes[TARGET].message
    assert "was broken on backend X 1.0" in outcomes[TARGET].message
