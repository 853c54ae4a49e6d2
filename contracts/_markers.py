"""How a contract test states what it needs, how an adapter says a test is known to break, and the
records the plugin keeps about each contract test (why the contract skipped it, what capabilities it
saw, whether its body ran)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NoReturn, TypeVar

import pytest

F = TypeVar("F", bound=Callable[..., Any])
REQUIRES = "__graphctx_requires__"
BODY_WRAPPED = "__graphctx_body__"


@dataclass(frozen=True)
class ContractSkip:
    """Why the contract itself skipped a test: a capability the adapter does not declare (`flags`
    names them), a reasoned opt-out, or a missing optional hook."""

    kind: Literal["capability", "opt_out", "hook"]
    reason: str
    flags: tuple[str, ...] = ()


CONTRACT_SKIP = pytest.StashKey[ContractSkip]()
"""Set on a test item when the contract itself skips it. The plugin fails any other skip of a
contract test."""
CAPABILITIES = pytest.StashKey[str]()
"""The capabilities the test's subject declared when the test ran (canonical JSON)."""
BODY = pytest.StashKey[str]()
"""'started' when a contract test's own body began, 'completed' when it returned."""

_running: list[pytest.Item] = []
"""The item whose call phase is running (set by the plugin), so a contract body can mark it."""


def requires(*capabilities: str) -> Callable[[F], F]:
    """Run the test only when the adapter declares every named capability; otherwise it is skipped
    with the capability's name. Names are `Capabilities` fields (`durable`, `concurrent_readers`,
    `exact_search`), keys of `Capabilities.extra`, or `template:<name>` for a catalogue template."""

    def mark(func: F) -> F:
        setattr(func, REQUIRES, tuple(getattr(func, REQUIRES, ())) + capabilities)
        return func

    return mark


def known_broken(reason: str) -> pytest.MarkDecorator:
    """Mark an overridden contract test as a strict expected failure. The reason is mandatory: it
    should name the backend limitation (and an issue). If the test starts passing, the run fails."""
    if not isinstance(reason, str) or not reason.strip():
        raise ValueError("known_broken() needs a reason naming the limitation")
    return pytest.mark.xfail(strict=True, reason=reason)


def contract_skip(
    item: pytest.Item, reason: str, *, flags: Sequence[str] = (), opt_out: bool = False, hook: bool = False
) -> NoReturn:
    """Skip a contract test on the contract's own authority (the plugin lets only these through):
    a capability the adapter does not declare (`flags` names it), an opt-out, or an optional hook the
    test class does not provide (`flags` names the hook)."""
    kind: Literal["capability", "opt_out", "hook"] = (
        "opt_out" if opt_out else "hook" if hook else "capability"
    )
    item.stash[CONTRACT_SKIP] = ContractSkip(kind, reason, tuple(flags))
    pytest.skip(reason)


def watch_body(func: F) -> F:
    """Wrap a contract test so the running item records that its body ran and returned: a test
    reported passed whose body never completed (a hook that skipped the call) is caught."""
    if getattr(func, BODY_WRAPPED, False):
        return func

    @functools.wraps(func)
    def body(*args: Any, **kwargs: Any) -> Any:
        item = _running[-1] if _running else None
        if item is not None:
            item.stash[BODY] = "started"
        result = func(*args, **kwargs)
        if item is not None:
            item.stash[BODY] = "completed"
        return result

    setattr(body, BODY_WRAPPED, True)
    return body  # type: ignore[return-value]
