"""The operation's deadline as backend calls see it (graphctx.deadlines), and the write lock waited
for within it."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from graphctx import deadlines
from graphctx.errors import DeadlineExceeded
from graphctx.scope import Scope
from graphctx.service import ContextService
from tests.conftest import make_settings


def test_outside_an_operation_a_call_gets_its_own_cap() -> None:
    assert deadlines.current() is None
    assert deadlines.budget(30.0) == 30.0


def test_inside_one_a_call_gets_at_most_what_remains() -> None:
    with deadlines.within(2.0) as deadline:
        assert deadlines.current() is deadline
        assert 0 < deadlines.budget(30.0) <= 2.0
        assert deadlines.budget(0.5) == 0.5
    assert deadlines.current() is None


def test_a_nested_operation_never_extends_the_outer_deadline() -> None:
    with deadlines.within(1.0) as outer:
        with deadlines.within(60.0) as inner:
            assert inner is outer
        with deadlines.within(0.5) as shorter:
            assert shorter is not outer and shorter.seconds == 0.5


def test_a_spent_deadline_refuses_the_next_call_naming_it() -> None:
    with deadlines.within(0.0), pytest.raises(DeadlineExceeded) as raised:
        deadlines.budget(30.0, "entity.get on gremlin")
    assert raised.value.details["stage"] == "entity.get on gremlin"


def test_work_handed_to_another_thread_carries_the_deadline() -> None:
    with ThreadPoolExecutor(1) as pool, deadlines.within(3.0) as deadline:
        assert pool.submit(deadlines.current).result() is None  # not by itself
        assert pool.submit(deadlines.carry(deadlines.current)).result() is deadline


def test_a_lock_is_waited_for_within_the_deadline_only() -> None:
    lock = threading.Lock()
    lock.acquire()
    with deadlines.within(0.2), pytest.raises(DeadlineExceeded) as raised:
        deadlines.acquire(lock, "the write lock")
    assert "the write lock" in raised.value.message
    lock.release()
    with deadlines.within(0.2):
        deadlines.acquire(lock, "the write lock")
    lock.release()


def test_a_write_behind_a_stuck_write_ends_at_the_deadline(tmp_path: Path) -> None:
    """Another write holds the one writer's lock and never lets go: the next write ends with a
    typed deadline_exceeded at its deadline instead of queueing forever; reads still answer."""
    settings = make_settings(tmp_path / "data", deadline_s=2.0, write_deadline_s=2.0)
    scope = Scope("t-lock")
    with ContextService.open(settings) as service:
        service.remember(scope, [{"id": "a", "name": "alpha"}])
        service._writes.acquire()  # the stuck writer
        try:
            with pytest.raises(DeadlineExceeded) as raised:
                service.remember(scope, [{"id": "b", "name": "beta"}])
            assert "write lock" in raised.value.message
            assert service.recall(scope, "alpha")["items"][0]["name"] == "alpha"
        finally:
            service._writes.release()
        service.remember(scope, [{"id": "b", "name": "beta"}])
