"""pytest plugin (entry point `graphctx_contracts`): markers and the guard's last line of defence."""

from __future__ import annotations

import pytest

from graphctx.contracts._guard import GUARD, defined_in_contract


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "graphctx_contract: a graphctx contract test")


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A class that overrides the guard itself fails every one of its tests."""
    from graphctx.contracts._base import ContractBase

    cls = getattr(item, "cls", None)
    if cls is not None and issubclass(cls, ContractBase) and not defined_in_contract(cls, GUARD):
        pytest.fail(
            f"{cls.__name__} overrides {GUARD}; the contract guard cannot be overridden", pytrace=False
        )
