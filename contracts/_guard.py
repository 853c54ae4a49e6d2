"""The guard: an adapter's test class may not silently weaken the contract."""

from __future__ import annotations

import inspect
from typing import Any

GUARD = "test_contract_guard_DO_NOT_OVERRIDE"
CONTRACT_PACKAGE = "graphctx.contracts"


def _is_contract(cls: type) -> bool:
    return cls.__module__.startswith(CONTRACT_PACKAGE)


def contract_tests(cls: type) -> dict[str, type]:
    """Every contract test name the class inherits, with the contract class that defines it."""
    found: dict[str, type] = {}
    for base in reversed(cls.__mro__):
        if _is_contract(base):
            for name, value in vars(base).items():
                if name.startswith("test_") and callable(value):
                    found[name] = base
    return found


def _reasoned_marks(func: Any) -> list[str]:
    """Reasons of the xfail(strict) / skip marks on a function; empty strings for unreasoned ones."""
    reasons = []
    for mark in getattr(func, "pytestmark", []):
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
        owner = next(c for c in cls.__mro__ if name in vars(c))
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
    for name, reason in sorted(getattr(cls, "contract_opt_outs", {}).items()):
        if name not in tests:
            out.append(
                f"contract_opt_outs names {name!r}, which is not a contract test (renamed or removed?)"
            )
        elif not isinstance(reason, str) or not reason.strip():
            out.append(f"contract_opt_outs[{name!r}] has no reason")
    return out


def defined_in_contract(cls: type, name: str) -> bool:
    owner = next((c for c in cls.__mro__ if name in vars(c)), None)
    return owner is not None and _is_contract(owner) and inspect.isfunction(vars(owner)[name])
