"""The guard: an adapter's test class cannot quietly weaken the contract.

One generated test file holds an adapter test class per scenario (each subclassing the real
GraphStoreContract over the SQLite store); it runs once in a pytest subprocess, restricted to the
guard and two ordinary contract tests per class, and each test below reads its class's outcomes
from the JUnit report. `known_broken()` itself is checked in-process.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from graphctx.contracts import known_broken
from graphctx.contracts._guard import GUARD, problems
from graphctx.contracts.graph import GraphStoreContract

TARGET = "test_get_by_ids_omits_missing"
"""The contract test the scenarios remove, override or opt out of."""
OTHER = "test_get_by_ids_follows_given_order"
"""An untouched contract test, run alongside."""
TIMEOUT_S = 300

HEADER = """
import pytest

from graphctx.adapters.sqlite import SqliteGraphStore
from graphctx.contracts import known_broken
from graphctx.contracts.graph import GraphStoreContract
from graphctx.ports import Capabilities


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
    """Contract tests to run; a removed test cannot be selected."""


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
    # (iv) the guard itself overridden (even with a reason)
    "GuardOverridden": Scenario(f"def {GUARD}(self):\n    pass"),
    "GuardOverriddenKnownBroken": Scenario(f"@known_broken('we know')\ndef {GUARD}(self):\n    pass"),
    # known_broken is strict: an override marked known-broken that passes fails the run
    "KnownBrokenButPasses": Scenario(
        f"@known_broken('was broken on backend X 1.0')\ndef {TARGET}(self, graph_store, scope):\n"
        f"    super().{TARGET}(graph_store, scope)"
    ),
    # gaps of contract 1.0.0 (see the strict xfails at the end)
    "GapGateOverridden": Scenario(
        "@pytest.fixture(autouse=True)\ndef _contract_gate(self):\n    pytest.skip('not today')"
    ),
    "GapClassXfail": Scenario("pytestmark = pytest.mark.xfail(reason='work in progress')"),
    "GapClassSkip": Scenario("pytestmark = pytest.mark.skip(reason='later')"),
    "GapGuardOverriddenUnderClassXfail": Scenario(
        f"pytestmark = pytest.mark.xfail(strict=True, reason='wip')\ndef {GUARD}(self):\n    pass"
    ),
    "GapCapabilitiesDenied": Scenario("def subject_capabilities(self, request):\n    return Capabilities()"),
}


# ---- running the generated file once ------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    status: str  # passed | failed | skipped (skipped includes xfailed)
    message: str


@dataclass(frozen=True)
class Run:
    code: int
    outcomes: Mapping[str, Mapping[str, Outcome]]  # class -> test name -> outcome
    console: str

    def of(self, scenario: str) -> Mapping[str, Outcome]:
        found = self.outcomes.get(f"Test{scenario}")
        assert found, f"no outcome for Test{scenario}:\n{self.console}"
        return found


def render() -> str:
    classes = [
        f"\n\nclass Test{name}(_Sqlite):\n{textwrap.indent(s.body, '    ')}\n"
        for name, s in SCENARIOS.items()
    ]
    return HEADER + "".join(classes)


def run_file(path: Path, node_ids: list[str]) -> Run:
    junit = path.parent / "report.xml"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_ADDOPTS", "PYTEST_XDIST"))}
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", f"--junitxml={junit}"]
    proc = subprocess.run(
        [*command, *node_ids],
        cwd=path.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        check=False,
    )
    console = proc.stdout[-6000:] + proc.stderr[-2000:]
    assert junit.is_file(), f"pytest wrote no report (exit {proc.returncode}):\n{console}"
    outcomes: dict[str, dict[str, Outcome]] = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        status, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error"):
                status, message = "failed", child.get("message", "")
            elif child.tag == "skipped":
                status, message = "skipped", child.get("message", "")
        cls = case.get("classname", "").rsplit(".", 1)[-1]
        outcomes.setdefault(cls, {})[case.get("name", "")] = Outcome(status, message)
    return Run(proc.returncode, outcomes, console)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    path = tmp_path_factory.mktemp("guard") / "test_adapter_contract.py"
    path.write_text(render())
    node_ids = [f"{path.name}::Test{name}::{test}" for name, s in SCENARIOS.items() for test in s.tests]
    return run_file(path, node_ids)


def guard_failure(run: Run, scenario: str) -> str:
    guard = run.of(scenario)[GUARD]
    assert guard.status == "failed", f"the guard of Test{scenario} did not fail: {guard}"
    return guard.message


# ---- the baseline -----------------------------------------------------------------------------


def test_the_generated_scenarios_are_valid_python_and_real_contract_classes() -> None:
    namespace: dict[str, object] = {}
    exec(compile(render(), "test_adapter_contract.py", "exec"), namespace)
    for name in SCENARIOS:
        cls = namespace[f"Test{name}"]
        assert isinstance(cls, type) and issubclass(cls, GraphStoreContract)
    assert problems(namespace["TestUntouched"]) == []  # type: ignore[arg-type]


def test_an_untouched_class_passes_the_guard(run: Run) -> None:
    assert {name: o.status for name, o in run.of("Untouched").items()} == dict.fromkeys(
        (GUARD, TARGET, OTHER), "passed"
    )


def test_the_run_fails_as_a_whole(run: Run) -> None:
    """The scenarios that weaken the contract turn the whole pytest run red."""
    assert run.code == 1, run.console


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


def test_an_opt_out_with_an_empty_reason_does_not_skip(run: Run) -> None:
    """A reasonless opt-out is not honoured: the test still runs (and the guard fails)."""
    assert run.of("OptOutEmptyReason")[TARGET].status == "passed"


def test_an_opt_out_with_a_reason_skips_with_that_reason(run: Run) -> None:
    outcomes = run.of("OptOutWithReason")
    assert outcomes[GUARD].status == "passed"
    assert outcomes[TARGET].status == "skipped"
    assert "opted out: backend X cannot hydrate by id" in outcomes[TARGET].message
    assert outcomes[OTHER].status == "passed"


# ---- (iv) the guard overridden ----------------------------------------------------------------


@pytest.mark.parametrize("scenario", ["GuardOverridden", "GuardOverriddenKnownBroken"])
def test_overriding_the_guard_fails_every_test_of_the_class(run: Run, scenario: str) -> None:
    outcomes = run.of(scenario)
    assert set(outcomes) == {GUARD, TARGET, OTHER}
    for name in (TARGET, OTHER):
        assert outcomes[name].status == "failed", (name, outcomes[name])
        assert f"overrides {GUARD}" in outcomes[name].message
    if scenario == "GuardOverridden":
        assert outcomes[GUARD].status == "failed"


def test_the_guard_reports_its_own_override() -> None:
    namespace: dict[str, object] = {}
    exec(compile(render(), "test_adapter_contract.py", "exec"), namespace)
    found = problems(namespace["TestGuardOverridden"])  # type: ignore[arg-type]
    assert found == [f"TestGuardOverridden overrides the guard {GUARD}"]


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


# ---- gaps of contract 1.0.0 -------------------------------------------------------------------
# Each is a way to get a green run without the contract having run. They are strict xfails: when
# the guard (contracts/_guard.py, contracts/plugin.py) learns to catch one, its test passes, the
# xfail turns red, and the marker must go.


def _weakened_run_is_green(run: Run, scenario: str) -> bool:
    outcomes = run.of(scenario)
    return not any(o.status == "failed" for o in outcomes.values())


GAP = "contract 1.0.0 guard gap: "


@pytest.mark.xfail(
    strict=True, reason=GAP + "overriding the autouse `_contract_gate` fixture skips the guard too"
)
def test_gap_overriding_the_contract_gate_is_caught(run: Run) -> None:
    assert not _weakened_run_is_green(run, "GapGateOverridden")


@pytest.mark.xfail(
    strict=True, reason=GAP + "a class-level (non-strict) xfail turns every failure into an xfail"
)
def test_gap_a_class_level_xfail_is_caught(run: Run) -> None:
    assert not _weakened_run_is_green(run, "GapClassXfail")


@pytest.mark.xfail(strict=True, reason=GAP + "a class-level skip skips the guard with everything else")
def test_gap_a_class_level_skip_is_caught(run: Run) -> None:
    assert not _weakened_run_is_green(run, "GapClassSkip")


@pytest.mark.xfail(
    strict=True,
    reason=GAP + "the plugin fails an overridden guard at setup, which a class-level xfail absorbs",
)
def test_gap_an_overridden_guard_under_a_class_xfail_is_caught(run: Run) -> None:
    assert not _weakened_run_is_green(run, "GapGuardOverriddenUnderClassXfail")


@pytest.mark.xfail(
    strict=True,
    reason=GAP + "overriding `subject_capabilities` in the test class skips every gated test by capability",
)
def test_gap_capabilities_overridden_in_the_test_class_are_caught(run: Run) -> None:
    assert not _weakened_run_is_green(run, "GapCapabilitiesDenied")
