"""The read gate: at most N holders, waiters served in arrival order, a timed-out waiter withdraws."""

from __future__ import annotations

import dataclasses
import threading
import time
from pathlib import Path

from graphctx import deadlines
from graphctx.errors import DeadlineExceeded
from graphctx.gate import FairGate
from graphctx.kernel.ports import Capabilities
from graphctx.kernel.stores import open_stores
from graphctx.scope import Scope
from graphctx.service import ContextService
from tests.conftest import make_settings

SCOPE = Scope("gate", "default")


def _wait_for(predicate, what: str) -> None:  # type: ignore[no-untyped-def]
    give_up = time.monotonic() + 10
    while not predicate():
        assert time.monotonic() < give_up, f"timed out waiting for {what}"
        time.sleep(0.002)


def test_waiters_get_the_slots_in_arrival_order() -> None:
    gate = FairGate(2)
    assert gate.acquire() and gate.acquire()
    assert not gate.acquire(blocking=False)
    order: list[int] = []

    def wait(i: int) -> None:
        assert gate.acquire()
        order.append(i)

    threads = []
    for i in range(5):
        threads.append(threading.Thread(target=wait, args=(i,)))
        threads[-1].start()
        _wait_for(lambda n=i + 1: gate.waiting() == n, f"{i + 1} waiters")
    for served in range(1, 6):
        gate.release()  # each release hands its slot to the longest waiter
        _wait_for(lambda n=served: len(order) >= n, "the next waiter")
    for t in threads:
        t.join(5)
    assert order == [0, 1, 2, 3, 4]


def test_a_waiter_that_times_out_leaves_the_queue_and_takes_no_slot() -> None:
    gate = FairGate(1)
    assert gate.acquire()
    assert gate.acquire(timeout=0.01) is False
    assert gate.waiting() == 0
    gate.release()
    assert gate.acquire(blocking=False)  # the one slot is free again, not leaked
    gate.release()


def test_a_read_waits_for_a_slot_within_its_deadline(tmp_path: Path) -> None:
    scope = Scope("gate", "default")
    with ContextService.open(make_settings(tmp_path / "data", read_concurrency=2)) as svc:
        svc.remember(scope, [{"id": "a", "type": "note", "name": "alpha", "summary": "gatemark"}])
        errors: list[BaseException] = []

        def read() -> None:
            try:
                for _ in range(5):
                    assert svc.recall(scope, "gatemark")["items"]
            except BaseException as exc:
                errors.append(exc)

        threads = [threading.Thread(target=read) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert errors == []
        gate = svc._read_gate
        assert gate is not None and gate.acquire() and gate.acquire()  # both slots free again
        try:
            with deadlines.within(0.05):
                try:
                    svc.recall(scope, "gatemark")
                except DeadlineExceeded as exc:
                    assert "read slot" in exc.message
                else:
                    raise AssertionError("a read ran with every slot taken")
        finally:
            gate.release()
            gate.release()


class _Remote:
    """A store that claims nothing about where its reads compute (Capabilities.in_process False)."""

    def __init__(self, store: object) -> None:
        self._store = store

    def __getattr__(self, name: str) -> object:
        return getattr(self._store, name)

    @property
    def capabilities(self) -> Capabilities:
        return dataclasses.replace(self._store.capabilities, in_process=False)  # type: ignore[attr-defined]


def test_unset_read_concurrency_is_one_slot_on_embedded_stores_and_unlimited_otherwise(
    tmp_path: Path,
) -> None:
    settings = make_settings(tmp_path / "data")
    assert settings.read_concurrency is None
    stores = open_stores(settings)
    try:
        assert stores.in_process
        with ContextService(stores, settings, owns_stores=False) as svc:
            assert svc.read_slots == 1
        remote = dataclasses.replace(stores, graph=_Remote(stores.graph))  # type: ignore[arg-type]
        assert not remote.in_process
        with ContextService(remote, settings, owns_stores=False) as svc:
            assert svc.read_slots == 0
            svc.remember(SCOPE, [{"id": "a", "type": "note", "name": "alpha", "summary": "gatemark"}])
            assert svc.recall(SCOPE, "gatemark")["items"]  # no gate, still served
        for asked in (0, 3):
            with ContextService(
                stores, settings.model_copy(update={"read_concurrency": asked}), owns_stores=False
            ) as svc:
                assert svc.read_slots == asked  # a set value wins either way
    finally:
        stores.close()
