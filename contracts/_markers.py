"""How a contract test states what it needs, and how an adapter says a test is known to break."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

import pytest

F = TypeVar("F", bound=Callable[..., Any])
REQUIRES = "__graphctx_requires__"
CONTRACT_SKIP = pytest.StashKey[str]()
"""Set on a test item when the contract itself skips it (capability, opt-out, missing optional hook).
The plugin fails any other skip of a contract test."""


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


def contract_skip(item: pytest.Item, reason: str) -> NoReturn:
    """Skip a contract test on the contract's own authority (the plugin lets only these through)."""
    item.stash[CONTRACT_SKIP] = reason
    pytest.skip(reason)
