"""The guard: an adapter's test class may not silently weaken the contract.

`problems(cls)` lists what an adapter's test class does to the contract it inherits that it may not
do silently. The pytest plugin (`graphctx.contracts.plugin`) runs it for every collected contract
class, whatever the class does to its own tests; `ContractBase.test_contract_guard_DO_NOT_OVERRIDE`
runs it too, for runs without the plugin.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable
from typing import Any

GUARD = "test_contract_guard_DO_NOT_OVERRIDE"
CONTRACT_PACKAGE = "graphctx.contracts"
SKIP_MARKS = frozenset({"skip", "skipif", "xfail"})
"""Marks that turn a test into something other than a pass or a failure."""
AUTHOR_SETTINGS = frozenset({"contract_opt_outs"})
"""Class attributes of the contract that every adapter class may set (besides the hooks)."""


def _is_contract(cls: type) -> bool:
    return cls.__module__.startswith(CONTRACT_PACKAGE)


def _owner(cls: type, name: str) -> type:
    """The class of the MRO whose body defines `name`."""
    return next(c for c in cls.__mro__ if name in vars(c))


def contract_tests(cls: type) -> dict[str, type]:
    """Every contract test name the class inherits, with the contract class that defines it."""
    found: dict[str, type] = {}
    for base in reversed(cls.__mro__):
        if _is_contract(base):
            for name, value in vars(base).items():
                if name.startswith("test_") and callable(value):
                    found[name] = base
    return found


def contract_hooks(cls: type) -> frozenset[str]:
    """The members an adapter class may override: the `contract_hooks` the contract classes declare.
    Only the contract's own declarations count (an adapter cannot widen the set)."""
    hooks: set[str] = set()
    for base in cls.__mro__:
        if _is_contract(base):
            hooks |= set(vars(base).get("contract_hooks", ()))
    return frozenset(hooks)


def contract_members(cls: type) -> dict[str, type]:
    """Every non-test member the contract classes define (fixtures, helpers, `subject_capabilities`,
    `contract_hooks`, ...) with the contract class that defines it; hooks and settings excluded."""
    hooks = contract_hooks(cls)
    found: dict[str, type] = {}
    for base in reversed(cls.__mro__):
        if _is_contract(base):
            for name in vars(base):
                dunder = name.startswith("__") and name.endswith("__")
                if not (dunder or name.startswith("test_") or name in AUTHOR_SETTINGS or name in hooks):
                    found[name] = base
    return found


def _marks(value: Any) -> list[Any]:
    """A `pytestmark` value (one mark, a decorator or a list of them) as a list of marks."""
    if value is None:
        return []
    items: Iterable[Any] = value if isinstance(value, list | tuple) else [value]
    return [getattr(m, "mark", m) for m in items]


def class_marks(cls: type) -> list[tuple[type, Any]]:
    """(class, mark) for every mark the adapter's classes put on the whole class (`pytestmark`)."""
    return [
        (c, mark) for c in cls.__mro__ if not _is_contract(c) for mark in _marks(vars(c).get("pytestmark"))
    ]


def _reasoned_marks(func: Any) -> list[str]:
    """Reasons of the xfail(strict) / skip marks on a function; empty strings for unreasoned ones."""
    reasons = []
    for mark in _marks(getattr(func, "pytestmark", [])):
        if mark.name == "xfail":
            strict = mark.kwargs.get("strict", False)
            reasons.append(mark.kwargs.get("reason", "") if strict else "")
        elif mark.name in ("skip", "skipif"):
            reasons.append(
                mark.kwargs.get("reason", "") or (mark.args[-1] if mark.args and mark.name == "skip" else "")
            )
    return reasons


def problems(cls: type) -> list[str]:
    """What the adapter's test class does to the contract that it may not do silently."""
    out: list[str] = []
    tests = contract_tests(cls)
    for name, origin in sorted(tests.items()):
        owner = _owner(cls, name)
        if _is_contract(owner):
            continue
        value = vars(owner)[name]
        if not callable(value):
            out.append(f"{name} (from {origin.__name__}) was removed by {owner.__name__}")
            continue
        reasons = _reasoned_marks(value)
        if name == GUARD:
            out.append(f"{owner.__name__} overrides the guard {GUARD}")
        elif not reasons or not all(r.strip() for r in reasons):
            out.append(
                f"{name} (from {origin.__name__}) is overridden in {owner.__name__} without "
                "@known_broken(reason=...) or a skip with a reason"
            )
    hooks = sorted(contract_hooks(cls))
    for name, origin in sorted(contract_members(cls).items()):
        owner = _owner(cls, name)
        if not _is_contract(owner):
            out.append(
                f"{owner.__name__} overrides {name!r} (from {origin.__name__}), which is part of the "
                f"contract, not a hook (the hooks are {', '.join(hooks) or 'none'}; "
                "per-test exceptions go in contract_opt_outs or @known_broken)"
            )
    for owner, mark in class_marks(cls):
        if mark.name in SKIP_MARKS:
            out.append(
                f"{owner.__name__} carries a class-level `{mark.name}` mark, which covers every contract "
                "test and the guard (use contract_opt_outs or @known_broken on single tests)"
            )
    for name, reason in sorted(getattr(cls, "contract_opt_outs", {}).items()):
        if name not in tests:
            out.append(
                f"contract_opt_outs names {name!r}, which is not a contract test (renamed or removed?)"
            )
        elif not isinstance(reason, str) or not reason.strip():
            out.append(f"contract_opt_outs[{name!r}] has no reason")
    return out


def cases(func: Any) -> int:
    """How many test cases a test function produces: the product of its parametrizations."""
    count = 1
    for mark in _marks(getattr(func, "pytestmark", [])):
        if mark.name == "parametrize":
            values = mark.args[1] if len(mark.args) > 1 else mark.kwargs.get("argvalues", ())
            count *= len(list(values))
    return count


def expected_cases(cls: type) -> dict[str, int]:
    """{contract test name: number of cases} as the contract defines them: what a complete run of
    the class must report (the guard counts as one case)."""
    return {name: cases(vars(origin)[name]) for name, origin in contract_tests(cls).items()}


def defined_in_contract(cls: type, name: str) -> bool:
    """True when `cls` runs the contract's own definition of `name` (not an override)."""
    owner = next((c for c in cls.__mro__ if name in vars(c)), None)
    return owner is not None and _is_contract(owner) and inspect.isfunction(vars(owner)[name])
