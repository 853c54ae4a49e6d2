"""Machinery shared by every contract class: capability gates, opt-outs, unique scopes, the guard."""

from __future__ import annotations

import inspect
import json
import math
import os
import uuid
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

import pytest

from graphctx.contracts._guard import CONTRACT_PACKAGE, problems
from graphctx.contracts._markers import CAPABILITIES, REQUIRES, contract_skip, watch_body
from graphctx.kernel.ports import Capabilities, LexicalHit, VectorHit
from graphctx.scope import Scope

PLUGIN = "graphctx.contracts.plugin"
NO_PLUGIN = (
    "the graphctx contract plugin is not loaded (PYTEST_DISABLE_PLUGIN_AUTOLOAD or "
    "-p no:graphctx_contracts): without it the guard and the skip rules cannot run out of the test "
    f"class's reach, so no contract test runs. Add `-p {PLUGIN}` (or use `graphctx certify`)."
)


def has_capability(capabilities: Capabilities, name: str) -> bool:
    if name.startswith("template:"):
        return name.removeprefix("template:") in capabilities.templates
    if name in capabilities.extra:
        return bool(capabilities.extra[name])
    value = getattr(capabilities, name, False)
    return value is True


Hit = TypeVar("Hit", LexicalHit, VectorHit)


def check_hits(
    hits: list[Hit],
    hit_type: type[Hit],
    scope: Scope,
    k: int,
    max_k: int,
    check_hit: Callable[[Hit], None] | None = None,
) -> None:
    """What every search answer promises, lexical or dense: a list of at most k (clamped to
    [1, max_k]) `hit_type` hits, each in `scope` with a finite score (then `check_hit`), ordered by
    score desc, then entity_id."""
    assert isinstance(hits, list), f"search returned {type(hits).__name__}, expected a list"
    limit = min(max(k, 1), max_k)
    assert len(hits) <= limit, f"{len(hits)} hits for k={k} (at most {limit})"
    for hit in hits:
        assert isinstance(hit, hit_type), f"search returned {type(hit).__name__}, not {hit_type.__name__}"
        assert scope.contains(hit.tenant_id, hit.namespace, hit.graph_id), (
            f"hit {hit.entity_id!r} carries scope {(hit.tenant_id, hit.namespace, hit.graph_id)}, "
            f"searched {scope}"
        )
        assert math.isfinite(hit.score), f"hit {hit.entity_id!r} has non-finite score {hit.score}"
        if check_hit is not None:
            check_hit(hit)
    assert hits == sorted(hits, key=lambda h: (-h.score, h.entity_id)), (
        f"hits are not ordered by score desc, then entity_id: {[(h.entity_id, h.score) for h in hits]}"
    )


def capability_json(capabilities: Capabilities) -> str:
    """Capabilities as canonical JSON: what a test saw, compared across the run."""
    if not isinstance(capabilities, Capabilities):
        return json.dumps({"not Capabilities": type(capabilities).__name__})
    return json.dumps(
        {
            "templates": sorted(capabilities.templates),
            "durable": capabilities.durable,
            "concurrent_readers": capabilities.concurrent_readers,
            "exact_search": capabilities.exact_search,
            "extra": {k: bool(v) for k, v in sorted(dict(capabilities.extra).items())},
        },
        sort_keys=True,
    )


def plugin_loaded(config: pytest.Config) -> bool:
    return any(getattr(p, "__name__", None) == PLUGIN for p in config.pluginmanager.get_plugins())


def unique_tenant(prefix: str = "ct") -> str:
    """Unique per test and per xdist worker, so a shared server never mixes two tests' data."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    return f"{prefix}-{worker}-{uuid.uuid4().hex[:12]}"


class ContractBase:
    """Base of every contract class. Adapter authors never subclass this directly."""

    contract_opt_outs: ClassVar[dict[str, str]] = {}
    """{contract test name: reason} for tests that cannot apply to this adapter. Prefer capabilities;
    the guard fails on a name that is not a contract test or on a missing reason."""

    contract_hooks: ClassVar[frozenset[str]] = frozenset()
    """The members an adapter's test class may override (each harness declares its own: the subject
    fixture and a few documented hooks). Overriding any other member of a contract class -- a fixture
    such as `scope` or `_contract_gate`, `subject_capabilities`, a helper -- fails the guard."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Every test a contract class defines records, on its item, that its body ran (the plugin
        fails a contract test reported passed whose body never completed)."""
        super().__init_subclass__(**kwargs)
        if cls.__module__.startswith(CONTRACT_PACKAGE):
            for name, value in list(vars(cls).items()):
                if name.startswith("test_") and inspect.isfunction(value):
                    setattr(cls, name, watch_body(value))

    def subject_capabilities(self, request: pytest.FixtureRequest) -> Capabilities:
        """The capabilities of the adapter under test (each contract reads them from its subject)."""
        raise NotImplementedError

    @pytest.fixture(autouse=True)
    def _contract_gate(self, request: pytest.FixtureRequest) -> None:
        """Before every contract test: the plugin must be loaded; a reasoned opt-out skips; the
        subject's capabilities are recorded (they must not change during a run) and any capability
        the test needs but the adapter does not declare skips it, naming the capability."""
        if not plugin_loaded(request.config):
            pytest.fail(NO_PLUGIN, pytrace=False)
        name = getattr(request.node, "originalname", request.node.name)
        reason = self.contract_opt_outs.get(name)
        if isinstance(reason, str) and reason.strip():
            contract_skip(request.node, f"opted out: {reason}", opt_out=True)
        capabilities = self.subject_capabilities(request)
        request.node.stash[CAPABILITIES] = capability_json(capabilities)
        needed = getattr(request.function, REQUIRES, ())
        missing = [c for c in needed if not has_capability(capabilities, c)]
        if missing:
            contract_skip(
                request.node, f"adapter does not declare capability {', '.join(missing)}", flags=missing
            )

    @pytest.fixture
    def scope(self) -> Scope:
        """The scope this test writes to; unique per test and per parallel worker."""
        return Scope(unique_tenant(), "contract")

    @pytest.fixture
    def other_scope(self, scope: Scope) -> Scope:
        """Another tenant: the adversary in isolation tests (same ids, names, aliases, vectors)."""
        return Scope(scope.tenant_id + "-b", scope.namespace)

    @pytest.fixture
    def sibling_scope(self, scope: Scope) -> Scope:
        """Same tenant, another namespace."""
        return Scope(scope.tenant_id, "contract-sibling")

    @pytest.fixture
    def graph_scope(self, scope: Scope) -> Scope:
        """Same tenant and namespace, a shared code graph."""
        return Scope(scope.tenant_id, scope.namespace, "graph-1")

    def test_contract_guard_DO_NOT_OVERRIDE(self) -> None:
        """The adapter's test class keeps every contract test or marks it known-broken with a reason.

        With the contract plugin loaded (the default), the plugin runs the guard in this test's place,
        out of reach of the class's fixtures and marks; this body runs only without the plugin."""
        found = problems(type(self))
        assert not found, "the contract was weakened:\n  " + "\n  ".join(found)


def adversarial_scopes(request: Any) -> list[Scope]:
    return [request.getfixturevalue(n) for n in ("other_scope", "sibling_scope", "graph_scope")]


SCOPE_SEPARATORS = "._:@-"
"""Every character a scope selector may hold besides letters and digits (graphctx.scope)."""


def joined_twins(scope: Scope) -> list[tuple[Scope, Scope]]:
    """Pairs of different scopes whose parts read the same once joined by one of SCOPE_SEPARATORS
    (`t:x`/`y` and `t`/`x:y`; `t`/`x:y`/`z` and `t`/`x`/`y:z`; `t`/`x:g`/"" and `t`/`x`/`g`): an
    adapter that keys by a joined string instead of the three parts mixes their data. Since 1.6.0."""
    t = scope.tenant_id
    pairs = []
    for i, sep in enumerate(SCOPE_SEPARATORS):  # the parts carry i: every scope here is different
        x, y, z = f"x{i}", f"y{i}", f"z{i}"
        pairs += [
            (Scope(f"{t}{sep}{x}", y), Scope(t, f"{x}{sep}{y}")),
            (Scope(t, f"{x}{sep}{y}", z), Scope(t, x, f"{y}{sep}{z}")),
            (Scope(t, f"{x}{sep}{z}"), Scope(t, x, z)),
        ]
    assert len({s for pair in pairs for s in pair}) == 2 * len(pairs)
    return pairs
