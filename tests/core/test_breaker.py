"""The circuit breaker a graph store's calls go through (graphctx.kernel.breaker), on a fake clock."""

from __future__ import annotations

from typing import Any

import pytest

from graphctx.errors import BackendTimeout, BackendUnavailable, DeadlineExceeded, InputError
from graphctx.kernel.breaker import Breaker


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _fail(exc: Exception) -> Any:
    def run() -> Any:
        raise exc

    return run


def _breaker(clock: Clock) -> Breaker:
    return Breaker("graph", "gremlin", threshold=3, cooldown_s=2.0, clock=clock)


def test_it_opens_after_consecutive_server_failures_and_then_refuses_at_once() -> None:
    clock = Clock()
    breaker = _breaker(clock)
    calls = 0

    def silent() -> Any:
        nonlocal calls
        calls += 1
        raise BackendTimeout("no answer", stage="entity.get")

    for _ in range(3):
        with pytest.raises(BackendTimeout):
            breaker.call(silent)
    assert breaker.state == "open"
    with pytest.raises(BackendUnavailable) as refused:
        breaker.call(silent)
    assert calls == 3  # the server was not asked again
    assert refused.value.details == {"store": "graph", "backend": "gremlin", "retry_after_s": 2}
    assert "the graph store (gremlin)" in refused.value.to_dict()["message"]


def test_failures_of_the_request_or_of_an_earlier_stage_do_not_count() -> None:
    breaker = _breaker(Clock())
    for exc in (InputError("bad"), DeadlineExceeded("spent before the call"), ValueError("bug")):
        for _ in range(5):
            with pytest.raises(type(exc)):
                breaker.call(_fail(exc))
    assert breaker.state == "closed"


def test_an_answer_in_between_resets_the_count() -> None:
    breaker = _breaker(Clock())
    for _ in range(5):
        for _ in range(2):
            with pytest.raises(BackendUnavailable):
                breaker.call(_fail(BackendUnavailable("down")))
        assert breaker.call(lambda: "ok") == "ok"
    assert breaker.state == "closed"


def test_after_the_cooldown_one_probe_decides() -> None:
    clock = Clock()
    breaker = _breaker(clock)
    for _ in range(3):
        with pytest.raises(BackendUnavailable):
            breaker.call(_fail(BackendUnavailable("down")))
    clock.now += 2.0
    assert breaker.state == "half_open"
    with pytest.raises(BackendUnavailable):  # the probe fails: open again, for a whole cooldown
        breaker.call(_fail(BackendUnavailable("still down")))
    assert breaker.state == "open"
    clock.now += 1.0
    with pytest.raises(BackendUnavailable) as refused:
        breaker.call(lambda: "not asked")
    assert "paused" in refused.value.message
    clock.now += 1.0
    assert breaker.call(lambda: "back") == "back"  # the probe answers: closed
    assert breaker.state == "closed"
    assert breaker.call(lambda: "again") == "again"


def test_only_one_probe_at_a_time() -> None:
    clock = Clock()
    breaker = _breaker(clock)
    for _ in range(3):
        with pytest.raises(BackendUnavailable):
            breaker.call(_fail(BackendUnavailable("down")))
    clock.now += 2.0
    seen: list[str] = []

    def probe() -> str:
        with pytest.raises(BackendUnavailable):  # a second call while the probe is out
            breaker.call(lambda: "second")
        seen.append("probe")
        return "ok"

    assert breaker.call(probe) == "ok"
    assert seen == ["probe"] and breaker.state == "closed"
