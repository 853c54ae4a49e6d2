"""`graphctx certify`: the contract suite run under the suite's own control, and a certificate.

    python -m graphctx.contracts certify ADAPTER [--port graph|lexical|vector ...] [--out DIR]
        [--opt-out TEST=REASON ...] [--known-broken TEST=REASON ...] [--timeout SECONDS]

ADAPTER is an entry-point name (`sqlite`, `tantivy`, `qdrant-edge`, your own) or `module:callable`, a
factory with the entry-point signature of each port: graph `(settings) -> GraphStore`, lexical
`(settings) -> LexicalIndex`, vector `(settings, model_id, dimension) -> VectorIndex`. The factory
is called once per test with a fresh `Settings(data_dir=<a new directory>)`; a server-backed factory
reads its URLs from its settings or environment variables, which certify passes through.

What certify controls, so that a pass means the contract passed:

* the test classes are generated here: one per contract class of each port (graph:
  `GraphStoreContract` and `GraphCongruenceContract`; lexical: `LexicalIndexContract`; vector:
  `VectorIndexContract`) plus `RetrievalContract` over the adapter(s) in their ports and the embedded
  defaults elsewhere -- whole bundles, nothing overridden but the fixtures (and, if asked,
  `--known-broken` tests);
* pytest runs in a subprocess with its own rootdir and ini, no conftest of the caller's, no `-k`, no
  deselection, plugin autoloading off and the contract plugin loaded explicitly;
* the adapter's capabilities are read once, from the first instance, and every test must see the
  same ones;
* the verdict is computed here from the plugin's report: every contract test of every class ran and
  passed or was skipped by the contract (an undeclared capability, named, or a listed `--opt-out`
  with its reason); `--known-broken` tests failed as expected; capabilities never changed; a graph
  store declares at least `MINIMUM_TEMPLATES`.

It writes `certificate.json` and `certificate.md` (and the pytest console, `pytest.log`) to `--out`,
prints one verdict line, and exits 0 (PASS), 1 (FAIL) or 2 (the command itself was wrong).
"""

from __future__ import annotations

import argparse
import functools
import importlib
import importlib.util
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, entry_points, version
from pathlib import Path
from typing import Any

import pytest

from graphctx import registry
from graphctx.contracts import CONTRACT_VERSION, DATASET_VERSION
from graphctx.contracts._base import capability_json
from graphctx.contracts._guard import GUARD, contract_tests, expected_cases
from graphctx.contracts._markers import known_broken
from graphctx.contracts.datasets import FakeEmbedder
from graphctx.contracts.graph import MINIMUM_TEMPLATES
from graphctx.errors import BackendError
from graphctx.kernel import templates as t
from graphctx.kernel.stores import Stores
from graphctx.scope import Scope
from graphctx.settings import Settings

CERTIFICATE_VERSION = 1
PORTS = ("graph", "lexical", "vector")
CONTRACTS: dict[str, tuple[tuple[str, str], ...]] = {
    "graph": (
        ("graphctx.contracts.graph", "GraphStoreContract"),
        ("graphctx.contracts.congruence", "GraphCongruenceContract"),
    ),
    "lexical": (("graphctx.contracts.lexical", "LexicalIndexContract"),),
    "vector": (("graphctx.contracts.vector", "VectorIndexContract"),),
    "retrieval": (("graphctx.contracts.retrieval", "RetrievalContract"),),
}
SUBJECT = {
    "graph": "graph_store",
    "lexical": "lexical_index",
    "vector": "vector_index",
    "retrieval": "stores",
}
VECTOR_DIMENSION = 32
VECTOR_MODEL = FakeEmbedder(VECTOR_DIMENSION).model_id
DEFAULTS = {"graph": "sqlite", "lexical": "tantivy", "vector": "qdrant-edge", "journal": "sqlite"}
"""The embedded stores the retrieval step uses in the ports that are not under test."""
PLAN = "certify-plan.json"
TEST_FILE = "test_certify.py"
EXIT_PASS, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """The command was wrong (unknown adapter or port, an opt-out naming no test, ...): exit 2."""


# ---- what to certify -------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    adapter: str
    ports: tuple[str, ...]
    opt_outs: dict[str, str] = field(default_factory=dict)
    known_broken: dict[str, str] = field(default_factory=dict)

    @property
    def is_entry_point(self) -> bool:
        return ":" not in self.adapter

    def classes(self) -> list[tuple[str, str, type]]:
        """(port, generated class name, contract class) for every class certify runs."""
        out = []
        for port in (*self.ports, "retrieval"):
            for module, name in CONTRACTS[port]:
                contract = getattr(importlib.import_module(module), name)
                out.append((port, f"TestCertify{name}", contract))
        return out

    def to_json(self) -> str:
        return json.dumps(
            {
                "adapter": self.adapter,
                "ports": list(self.ports),
                "opt_outs": self.opt_outs,
                "known_broken": self.known_broken,
            },
            indent=1,
        )

    @classmethod
    def from_json(cls, text: str) -> Plan:
        data = json.loads(text)
        return cls(data["adapter"], tuple(data["ports"]), data["opt_outs"], data["known_broken"])


def _pairs(values: Sequence[str], what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values:
        name, sep, reason = value.partition("=")
        if not sep or not name.strip() or not reason.strip():
            raise UsageError(f"{what} needs TEST=REASON with a reason, got {value!r}")
        out[name.strip()] = reason.strip()
    return out


def _entry_point_ports(name: str) -> list[str]:
    return [
        port for port in PORTS if any(ep.name == name for ep in entry_points(group=registry.GROUPS[port]))
    ]


def make_plan(
    adapter: str, ports: Sequence[str], opt_outs: Sequence[str] = (), known: Sequence[str] = ()
) -> Plan:
    """Check the command before anything runs: the adapter exists, the ports are ports, every
    opt-out and known-broken names a contract test of a certified class and gives a reason."""
    if not adapter.strip():
        raise UsageError("name the adapter: an entry-point name or module:callable")
    bad = [p for p in ports if p not in PORTS]
    if bad:
        raise UsageError(f"unknown port(s) {', '.join(bad)}; the ports are {', '.join(PORTS)}")
    if ":" in adapter:
        module, _, attr = adapter.partition(":")
        if not module or not attr or importlib.util.find_spec(module) is None:
            raise UsageError(f"cannot find the factory {adapter!r} (module:callable, importable from here)")
        if not ports:
            raise UsageError("a module:callable factory needs --port (graph, lexical or vector)")
    else:
        registered = _entry_point_ports(adapter)
        if not registered:
            raise UsageError(f"no graph, lexical or vector entry point named {adapter!r}")
        missing = [p for p in ports if p not in registered]
        if missing:
            raise UsageError(f"{adapter!r} is not registered as a {', '.join(missing)} adapter")
        ports = ports or registered
    plan = Plan(
        adapter, tuple(dict.fromkeys(ports)), _pairs(opt_outs, "--opt-out"), _pairs(known, "--known-broken")
    )
    names = {n for _, _, contract in plan.classes() for n in contract_tests(contract)}
    for option, given in (("--opt-out", plan.opt_outs), ("--known-broken", plan.known_broken)):
        unknown = sorted(n for n in given if n not in names or n == GUARD)
        if unknown:
            raise UsageError(
                f"{option} names no contract test of the certified classes: {', '.join(unknown)}"
            )
    both = sorted(set(plan.opt_outs) & set(plan.known_broken))
    if both:
        raise UsageError(f"a test is either opted out or known broken, not both: {', '.join(both)}")
    return plan


# ---- the generated test module (runs in the controlled subprocess) ----------------------------


class Harness:
    """What the generated classes' fixtures call: the adapter's factory, fresh per test, its
    capabilities frozen from the first instance, and the scopes cleared afterwards."""

    def __init__(self, plan: Plan, run_dir: Path) -> None:
        self.plan = plan
        self.run_dir = run_dir
        self._factory: Callable[..., Any] | None = None

    @classmethod
    def next_to(cls, test_file: str) -> Harness:
        run_dir = Path(test_file).resolve().parent
        return cls(Plan.from_json((run_dir / PLAN).read_text()), run_dir)

    def factory(self, port: str) -> Callable[..., Any]:
        if self.plan.is_entry_point:
            return registry.factory(port, self.plan.adapter)
        if self._factory is None:
            module, _, attr = self.plan.adapter.partition(":")
            self._factory = functools.reduce(getattr, attr.split("."), importlib.import_module(module))
        return self._factory

    def open(self, port: str, data_dir: Path) -> Any:
        settings = Settings(data_dir=data_dir)
        if port == "vector":
            subject = self.factory(port)(settings, VECTOR_MODEL, VECTOR_DIMENSION)
        else:
            subject = self.factory(port)(settings)
        self._freeze(port, subject)
        return subject

    def _freeze(self, port: str, subject: Any) -> None:
        path = self.run_dir / f"capabilities-{port}.json"
        if not path.exists():
            name = getattr(subject, "name", type(subject).__name__)
            path.write_text(
                json.dumps({"name": str(name), "capabilities": capability_json(subject.capabilities)})
            )

    def frozen(self, port: str) -> dict[str, Any] | None:
        path = self.run_dir / f"capabilities-{port}.json"
        return json.loads(json.loads(path.read_text())["capabilities"]) if path.exists() else None

    def subject(self, port: str, data_dir: Path, scopes: Sequence[Scope]) -> Iterator[Any]:
        subject = self.open(port, data_dir)
        try:
            yield subject
        finally:
            try:
                if port == "graph":
                    self._clear(subject, data_dir, scopes)
            finally:
                subject.close()

    def _clear(self, store: Any, data_dir: Path, scopes: Sequence[Scope]) -> None:
        """A shared server keeps what a test wrote: clear the test's scopes (with a new instance if
        the test closed its own)."""
        frozen = self.frozen("graph") or {}
        if t.SCOPE_CLEAR.name not in frozen.get("templates", ()):
            return
        try:
            store.run(t.SCOPE_CLEAR, scopes[0], t.NoParams())
        except BackendError:  # closed by the test
            store = self.factory("graph")(Settings(data_dir=data_dir))
            try:
                for scope in scopes:
                    store.run(t.SCOPE_CLEAR, scope, t.NoParams())
            finally:
                store.close()
            return
        for scope in scopes[1:]:
            store.run(t.SCOPE_CLEAR, scope, t.NoParams())

    def reopen(self, data_dir: Path, port: str = "graph") -> Callable[[Any], Any]:
        """The `reopen_graph_store` (or `reopen_lexical_index`) hook for a durable store: the factory
        again, same directory."""
        frozen = self.frozen(port)
        if frozen is None:
            self.open(port, data_dir / "probe").close()
            frozen = self.frozen(port) or {}
        if not frozen.get("durable", True):
            raise NotImplementedError("an in-memory store has no reopen hook")
        return lambda store: self.factory(port)(Settings(data_dir=data_dir))

    def stores(self, data_dir: Path) -> Stores:
        """The retrieval trio: the adapter in its port(s), the embedded defaults elsewhere."""
        settings = Settings(data_dir=data_dir, embedder="hashing")
        data_dir.mkdir(parents=True, exist_ok=True)
        opened: list[Any] = []
        try:

            def make(port: str, *args: Any) -> Any:
                if port in self.plan.ports:
                    subject = self.factory(port)(settings, *args)
                    self._freeze(port, subject)
                else:
                    subject = registry.factory(port, DEFAULTS[port])(settings, *args)
                opened.append(subject)
                return subject

            graph = make("graph")
            journal = registry.factory("journal", DEFAULTS["journal"])(settings)
            opened.append(journal)
            lexical = make("lexical")
            embedder = registry.factory("embedder", "hashing")(settings)
            vector = make("vector", embedder.model_id, embedder.dimension)
            return Stores(graph=graph, lexical=lexical, journal=journal, vector=vector, embedder=embedder)
        except BaseException:
            for subject in reversed(opened):
                subject.close()
            raise

    def known_broken(self, contract: type, name: str) -> Any:
        """An override of a contract test, marked known broken with the plan's reason: it runs the
        contract's own test and must fail (strict)."""
        original = getattr(contract, name)

        @functools.wraps(original)
        def override(*args: Any, **kwargs: Any) -> Any:
            return original(*args, **kwargs)

        return known_broken(self.plan.known_broken[name])(override)

    def for_model(self, data_dir: Path) -> Callable[[str], Any]:
        """The `vector_index_for_model` hook: the factory again, same directory, another model."""
        return lambda model_id: self.factory("vector")(
            Settings(data_dir=data_dir), model_id, VECTOR_DIMENSION
        )


def _fixture(port: str) -> str:
    scopes = "scope, other_scope, sibling_scope, graph_scope"
    if port == "retrieval":
        return (
            "    @pytest.fixture\n"
            "    def stores(self, tmp_path):\n"
            "        return H.stores(tmp_path / 'stores')\n"
        )
    text = (
        "    @pytest.fixture\n"
        f"    def {SUBJECT[port]}(self, tmp_path, {scopes}):\n"
        f"        yield from H.subject({port!r}, tmp_path / {port!r}, ({scopes}))\n"
    )
    if port == "graph":
        text += (
            "\n    @pytest.fixture\n"
            "    def reopen_graph_store(self, tmp_path):\n"
            "        return H.reopen(tmp_path / 'graph')\n"
        )
    if port == "vector":
        text += (
            "\n    @pytest.fixture\n"
            "    def vector_index_for_model(self, tmp_path):\n"
            "        return H.for_model(tmp_path / 'vector')\n"
        )
    if port == "lexical":
        text += (
            "\n    @pytest.fixture\n"
            "    def reopen_lexical_index(self, tmp_path):\n"
            "        return H.reopen(tmp_path / 'lexical', 'lexical')\n"
        )
    return text


def render(plan: Plan) -> str:
    """The test module certify runs: one class per contract class, fixtures only."""
    lines = [
        '"""Generated by graphctx certify; do not edit (the certificate names what it ran)."""',
        "import pytest",
        "",
        "from graphctx.contracts.certify import Harness",
    ]
    for port in (*plan.ports, "retrieval"):
        lines += [f"from {module} import {name}" for module, name in CONTRACTS[port]]
    lines += ["", "H = Harness.next_to(__file__)", ""]
    for port, name, contract in plan.classes():
        tests = contract_tests(contract)
        opt_outs = {n: r for n, r in plan.opt_outs.items() if n in tests}
        broken = sorted(n for n in plan.known_broken if n in tests)
        body = [f"class {name}({contract.__name__}):"]
        if opt_outs:
            body.append(f"    contract_opt_outs = {opt_outs!r}")
        for test in broken:
            body.append(f"    {test} = H.known_broken({contract.__name__}, {test!r})")
        body.append("")
        body.append(_fixture(port))
        lines += ["", *body, ""]
    return "\n".join(lines)


# ---- running it --------------------------------------------------------------------------------


INI = textwrap.dedent(
    """\
    [pytest]
    addopts =
    python_files = test_certify.py
    xfail_strict = true
    faulthandler_timeout = 300
    """
)
"""`faulthandler_timeout`: a test still running after 5 minutes has every thread's stack written to the
console, once, so a stalled backend call shows where it waits."""
INTERRUPT_GRACE_S = 60.0


@dataclass
class Run:
    code: int | None
    report: dict[str, Any] | None
    console: str
    seconds: float
    frozen: dict[str, dict[str, Any]]


PYTEST_INTERRUPTIBLE = (
    "import signal, sys, pytest; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "sys.exit(pytest.main())"
)
"""`python -m pytest`, with Ctrl-C given back its default first: a shell starts a background job
(`certify ... &`, nohup, some CI runners) with SIGINT ignored and the run would inherit that, so the
interrupt at --timeout would do nothing and the run be killed without its summary or report."""


def run(plan: Plan, run_dir: Path, timeout_s: float, console_path: Path | None = None) -> Run:
    """Run the generated suite; its console goes to `console_path` as it runs (`tail -f` it), so a
    run that stalls or is stopped still shows how far it got."""
    (run_dir / PLAN).write_text(plan.to_json())
    (run_dir / TEST_FILE).write_text(render(plan))
    (run_dir / "pytest.ini").write_text(INI)
    report = run_dir / "report.json"
    console_path = console_path or run_dir / "pytest.log"
    command = [
        sys.executable, "-c", PYTEST_INTERRUPTIBLE, "-c", str(run_dir / "pytest.ini"),
        "--rootdir", str(run_dir), "--confcutdir", str(run_dir),
        "-p", "graphctx.contracts.plugin", "-p", "no:cacheprovider",
        "--basetemp", str(run_dir / "tmp"), "--graphctx-report", str(report), "-q", "-rfEs",
        "--tb=short", "--durations=25", "--durations-min=1", str(run_dir / TEST_FILE),
    ]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PY_COLORS"))}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONPATH"] = os.pathsep.join([os.getcwd(), *filter(None, [os.environ.get("PYTHONPATH")])])
    started = time.monotonic()
    with console_path.open("w", encoding="utf-8", errors="replace") as console_file:
        proc = subprocess.Popen(command, cwd=run_dir, env=env, stdout=console_file, stderr=subprocess.STDOUT)
        code: int | None
        try:
            code = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            code = None
            _interrupt(proc)
    if code is None:
        with console_path.open("a", encoding="utf-8") as console_file:
            console_file.write(
                f"\n\ncertify: the run timed out after {timeout_s:g} s (interrupted; see the report)"
            )
    console = console_path.read_text(encoding="utf-8", errors="replace")
    seconds = time.monotonic() - started
    data = json.loads(report.read_text()) if report.is_file() else None
    frozen = {
        port: json.loads((run_dir / f"capabilities-{port}.json").read_text())
        for port in PORTS
        if (run_dir / f"capabilities-{port}.json").is_file()
    }
    return Run(code, data, console, seconds, frozen)


def _interrupt(proc: subprocess.Popen[bytes]) -> None:
    """Stop a run that outlived its timeout as Ctrl-C would: pytest then prints its summary of what
    failed so far and the plugin writes its report; killed only if it does not end in a grace time."""
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=INTERRUPT_GRACE_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)


# ---- the verdict -------------------------------------------------------------------------------


@dataclass
class Check:
    name: str
    ok: bool
    detail: str

    def as_dict(self) -> dict[str, Any]:
        return {"check": self.name, "ok": self.ok, "detail": self.detail}


def judge(plan: Plan, result: Run) -> tuple[list[Check], dict[str, Any]]:
    """Every check the verdict needs, from the report alone (and the contract classes as this process
    imports them, not as the run saw them)."""
    checks: list[Check] = []
    report = result.report or {}
    tests: list[dict[str, Any]] = report.get("tests", [])
    checks.append(
        Check(
            "the suite ran",
            result.report is not None and result.code in (0, 1),
            "pytest exit status "
            + ("timed out" if result.code is None else str(result.code))
            + ("" if result.report else "; no report was written (see pytest.log)"),
        )
    )
    checks.append(
        Check(
            "contract version",
            report.get("contract_version") == CONTRACT_VERSION,
            f"run {report.get('contract_version')}, certify {CONTRACT_VERSION}",
        )
    )
    per_class: list[dict[str, Any]] = []
    missing_total, extra_total = 0, 0
    for port, name, contract in plan.classes():
        expected = expected_cases(contract)
        mine = [r for r in tests if r.get("class", "").endswith(f"::{name}")]
        ran: dict[str, int] = {}
        for r in mine:
            ran[r["test"]] = ran.get(r["test"], 0) + 1
        missing = {n: c - ran.get(n, 0) for n, c in expected.items() if ran.get(n, 0) < c}
        extra = sorted(n for n, c in ran.items() if c > expected.get(n, 0))
        missing_total += sum(missing.values())
        extra_total += len(extra)
        counts: dict[str, int] = {}
        for r in mine:
            counts[r["outcome"]] = counts.get(r["outcome"], 0) + 1
        per_class.append(
            {
                "class": name,
                "contract": contract.__name__,
                "port": port,
                "expected": sum(expected.values()),
                "ran": len(mine),
                "counts": counts,
                "missing": missing,
            }
        )
    checks.append(
        Check(
            "every contract test ran",
            missing_total == 0 and extra_total == 0 and bool(tests),
            f"{len(tests)} ran; {missing_total} contract test case(s) missing"
            + (f"; {extra_total} unexpected" if extra_total else ""),
        )
    )
    failed = [r for r in tests if r["outcome"] == "failed"]
    checks.append(
        Check(
            "no failure", not failed, ", ".join(r["nodeid"].rsplit("::", 2)[-1] for r in failed[:8]) or "none"
        )
    )
    unexplained = [
        r
        for r in tests
        if r["outcome"] == "skipped"
        and not (r.get("skip") and r["skip"].get("kind") in ("capability", "opt_out"))
    ]
    checks.append(
        Check(
            "every skip is the contract's",
            not unexplained,
            ", ".join(r["test"] for r in unexplained[:8])
            or "capability skips name their flag; opt-outs their reason",
        )
    )
    unlisted = [r for r in tests if r["outcome"] == "xfailed" and r["test"] not in plan.known_broken]
    not_broken = [r for r in tests if r["test"] in plan.known_broken and r["outcome"] != "xfailed"]
    checks.append(
        Check(
            "known-broken tests fail as declared",
            not unlisted and not not_broken,
            "; ".join(
                [f"xfailed without --known-broken: {r['test']}" for r in unlisted[:5]]
                + [f"{r['test']} {r['outcome']}" for r in not_broken[:5]]
            )
            or f"{len(plan.known_broken)} declared",
        )
    )
    changed = _capability_changes(plan, result, tests)
    checks.append(
        Check("capabilities never changed", not changed, "; ".join(changed[:5]) or "one declaration per port")
    )
    checks.append(_minimum(plan, result))
    unfinished = [
        r
        for r in tests
        if r["outcome"] == "passed"
        and r.get("inherited")
        and not r.get("guard")
        and r.get("body") != "completed"
    ]
    checks.append(
        Check(
            "every pass ran the contract's body",
            not unfinished,
            ", ".join(r["test"] for r in unfinished[:5]) or "all",
        )
    )
    return checks, {"classes": per_class}


def _capability_changes(plan: Plan, result: Run, tests: list[dict[str, Any]]) -> list[str]:
    out = []
    ports = {name: port for port, name, _ in plan.classes()}
    for port in plan.ports:
        frozen = result.frozen.get(port)
        if frozen is None:
            out.append(f"{port}: the adapter was never opened")
            continue
        for r in tests:
            cls = r.get("class", "").rsplit("::", 1)[-1]
            owner = ports.get(cls)
            compare = owner == port or (owner == "retrieval" and port == "graph")
            if compare and r.get("capabilities") and r["capabilities"] != frozen["capabilities"]:
                out.append(
                    f"{r['test']} saw {r['capabilities']}, the first instance {frozen['capabilities']}"
                )
    return out


def _minimum(plan: Plan, result: Run) -> Check:
    if "graph" not in plan.ports:
        return Check("minimum templates", True, "not a graph store")
    frozen = result.frozen.get("graph")
    declared = set(json.loads(frozen["capabilities"]).get("templates", [])) if frozen else set()
    missing = sorted(MINIMUM_TEMPLATES - declared)
    return Check(
        "minimum templates",
        not missing,
        f"missing {', '.join(missing)}"
        if missing
        else f"declares {len(declared)} of {len(t.CATALOG)} templates",
    )


# ---- the certificate ----------------------------------------------------------------------------


def _version(dist: str) -> str:
    try:
        return version(dist)
    except PackageNotFoundError:
        return "unknown"


def certificate(plan: Plan, result: Run, argv: Sequence[str]) -> dict[str, Any]:
    checks, extra = judge(plan, result)
    tests = (result.report or {}).get("tests", [])
    verdict = "PASS" if all(c.ok for c in checks) else "FAIL"
    skips = [r for r in tests if r["outcome"] == "skipped" and r.get("skip")]
    return {
        "certificate_version": CERTIFICATE_VERSION,
        "verdict": verdict,
        "reasons": [f"{c.name}: {c.detail}" for c in checks if not c.ok],
        "contract_version": CONTRACT_VERSION,
        "dataset_version": DATASET_VERSION,
        "graphctx_version": _version("graphctx"),
        "pytest_version": pytest.__version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "duration_s": round(result.seconds, 1),
        "command": list(argv),
        "adapter": {
            "adapter": plan.adapter,
            "kind": "entry point" if plan.is_entry_point else "factory",
            "ports": list(plan.ports),
            "names": {port: f["name"] for port, f in result.frozen.items()},
        },
        "capabilities": {port: json.loads(f["capabilities"]) for port, f in result.frozen.items()},
        "minimum_templates": sorted(MINIMUM_TEMPLATES) if "graph" in plan.ports else [],
        "checks": [c.as_dict() for c in checks],
        "classes": extra["classes"],
        "capability_skips": [
            {
                "test": r["nodeid"].split("::", 1)[-1],
                "flags": r["skip"]["flags"],
                "reason": r["skip"]["reason"],
            }
            for r in skips
            if r["skip"]["kind"] == "capability"
        ],
        "opt_outs": [{"test": n, "reason": reason} for n, reason in sorted(plan.opt_outs.items())],
        "known_broken": [{"test": n, "reason": reason} for n, reason in sorted(plan.known_broken.items())],
        "tests": [
            {
                "test": r["nodeid"].split("::", 1)[-1],
                "outcome": r["outcome"],
                "duration_s": r.get("duration_s", 0.0),
                **({"reason": r["reason"]} if r.get("reason") else {}),
                **({"skip": r["skip"]} if r.get("skip") else {}),
                **({"message": r["message"][-1500:]} if r.get("message") else {}),
            }
            for r in tests
        ],
    }


def summary_line(cert: dict[str, Any], where: Path) -> str:
    counts: dict[str, int] = {}
    for r in cert["tests"]:
        counts[r["outcome"]] = counts.get(r["outcome"], 0) + 1
    flags = sorted({f for s in cert["capability_skips"] for f in s["flags"]})
    tally = ", ".join(f"{n} {o}" for o, n in sorted(counts.items())) or "nothing ran"
    if flags:
        tally += f" (capability skips: {', '.join(flags)})"
    why = "" if cert["verdict"] == "PASS" else f" -- {'; '.join(cert['reasons'])}"
    ports = "+".join(cert["adapter"]["ports"])
    return (
        f"graphctx certify: {cert['verdict']} {cert['adapter']['adapter']} [{ports}] contract "
        f"{cert['contract_version']}: {tally}{why}; certificate {where}"
    )


def markdown(cert: dict[str, Any]) -> str:
    a = cert["adapter"]
    lines = [
        f"# graphctx certificate: {cert['verdict']}",
        "",
        f"- adapter: `{a['adapter']}` ({a['kind']}), ports: {', '.join(a['ports'])}; "
        f"store names: {', '.join(f'{p} = {n}' for p, n in a['names'].items()) or 'none'}",
        f"- contract {cert['contract_version']}, datasets {cert['dataset_version']}, graphctx "
        f"{cert['graphctx_version']}, pytest {cert['pytest_version']}, Python {cert['python']}",
        f"- {cert['created_at']} on {cert['platform']}, {cert['duration_s']} s",
        "",
        "## Checks",
        "",
        "| check | ok | detail |",
        "|---|---|---|",
        *(f"| {c['check']} | {'yes' if c['ok'] else '**no**'} | {c['detail']} |" for c in cert["checks"]),
        "",
        "## Contract classes",
        "",
        "| class | contract | expected | ran | outcomes |",
        "|---|---|---|---|---|",
        *(
            f"| {c['class']} | {c['contract']} | {c['expected']} | {c['ran']} | "
            f"{', '.join(f'{n} {o}' for o, n in sorted(c['counts'].items()))} |"
            for c in cert["classes"]
        ),
        "",
        "## Capabilities",
        "",
        *(f"- {port}: `{json.dumps(caps, sort_keys=True)}`" for port, caps in cert["capabilities"].items()),
        "",
        "## Capability skips",
        "",
        *([f"- {s['test']}: {', '.join(s['flags'])}" for s in cert["capability_skips"]] or ["none"]),
        "",
        "## Opt-outs and known breakage",
        "",
        *([f"- opted out {o['test']}: {o['reason']}" for o in cert["opt_outs"]] or []),
        *([f"- known broken {k['test']}: {k['reason']}" for k in cert["known_broken"]] or []),
        *(["none"] if not cert["opt_outs"] and not cert["known_broken"] else []),
    ]
    failed = [r for r in cert["tests"] if r["outcome"] == "failed"]
    if failed:
        lines += ["", "## Failures", ""]
        for r in failed:
            first = (r.get("message") or "").strip().splitlines()[-1:] or [""]
            lines.append(f"- {r['test']}: {first[0][:300]}")
    return "\n".join(lines) + "\n"


# ---- the command ----------------------------------------------------------------------------


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m graphctx.contracts certify",
        description="Run the graphctx contract suite for an adapter under the suite's control and "
        "write a certificate (JSON + summary) with the verdict.",
    )
    p.add_argument("adapter", help="entry-point name (sqlite, tantivy, qdrant-edge, ...) or module:callable")
    p.add_argument("--port", action="append", default=[], choices=PORTS, help="a port the adapter implements")
    p.add_argument("--out", default="graphctx-certificate", help="directory for the certificate")
    p.add_argument("--opt-out", action="append", default=[], metavar="TEST=REASON")
    p.add_argument("--known-broken", action="append", default=[], metavar="TEST=REASON")
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds before the run is stopped")
    p.add_argument("--keep", action="store_true", help="keep the generated run directory (printed)")
    return p


def main(argv: Sequence[str]) -> int:
    args = parser().parse_args(argv)
    try:
        plan = make_plan(args.adapter, args.port, args.opt_out, args.known_broken)
    except UsageError as exc:
        print(f"graphctx certify: {exc}", file=sys.stderr)
        return EXIT_USAGE
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    run_dir = Path(tempfile.mkdtemp(prefix="graphctx-certify-"))
    try:
        result = run(plan, run_dir, args.timeout, out / "pytest.log")
    finally:
        if args.keep:
            print(f"graphctx certify: run directory kept at {run_dir}", file=sys.stderr)
        else:
            shutil.rmtree(run_dir, ignore_errors=True)
    cert = certificate(plan, result, ["certify", *argv])
    (out / "certificate.json").write_text(json.dumps(cert, indent=1, sort_keys=False) + "\n")
    (out / "certificate.md").write_text(markdown(cert))
    print(summary_line(cert, out / "certificate.json"))
    return EXIT_PASS if cert["verdict"] == "PASS" else EXIT_FAIL
