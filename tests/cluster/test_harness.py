"""The fault run's own retry of a scenario's setup write, against a fake service (no cluster): it
retries typed failures until the write lands, gives up past its bound (naming the last error), and lets
an untyped error through (that is a defect the run must report, not wait out)."""

from __future__ import annotations

from typing import Any

import pytest

from graphctx.errors import BackendUnavailable
from graphctx.scope import Scope
from tests.cluster import faults


class FakeService:
    def __init__(self, failures: list[Exception]) -> None:
        self.failures = failures
        self.writes = 0

    def remember(self, scope: Scope, entities: Any = (), facts: Any = ()) -> dict[str, int]:
        list(facts)  # ContextService.remember iterates its facts: None is not a value it takes
        self.writes += 1
        if self.failures:
            raise self.failures.pop(0)
        return {"entities": len(entities)}


def test_set_up_retries_typed_failures_until_the_write_lands(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(faults.time, "sleep", lambda s: None)
    svc = FakeService([BackendUnavailable("UNAVAILABLE: io exception")] * 2)
    faults.set_up(svc, Scope("s"), [{"id": "a"}], [])  # type: ignore[arg-type]
    assert svc.writes == 3


def test_set_up_gives_up_past_its_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(faults, "SERVING_BOUND_S", 0.0)
    svc = FakeService([])
    with pytest.raises(RuntimeError, match="did not land"):
        faults.set_up(svc, Scope("s"), [{"id": "a"}], [])  # type: ignore[arg-type]
    assert svc.writes == 0


def test_an_untyped_error_is_not_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(faults.time, "sleep", lambda s: None)
    svc = FakeService([ValueError("a defect")])
    with pytest.raises(ValueError, match="a defect"):
        faults.set_up(svc, Scope("s"), [{"id": "a"}], [])  # type: ignore[arg-type]
    assert svc.writes == 1


def test_set_up_passes_its_facts_along(monkeypatch: pytest.MonkeyPatch) -> None:
    svc = FakeService([])
    faults.set_up(svc, Scope("s"), [{"id": "a"}], [{"subject_id": "a"}])  # type: ignore[arg-type]
    assert svc.writes == 1
