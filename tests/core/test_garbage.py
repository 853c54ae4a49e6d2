"""The collector's thresholds during a bulk run: raised once, restored when the last run ends, and
never lowered or turned on against the embedding program's choice."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

from graphctx.garbage import BULK_THRESHOLDS, fewer_collections


@pytest.fixture(autouse=True)
def _restore() -> Iterator[None]:
    saved, enabled = gc.get_threshold(), gc.isenabled()
    yield
    gc.set_threshold(*saved)
    (gc.enable if enabled else gc.disable)()


def test_raised_for_the_run_and_restored_after_it():
    gc.set_threshold(700, 10, 10)
    with fewer_collections():
        assert gc.get_threshold() == BULK_THRESHOLDS
    assert gc.get_threshold() == (700, 10, 10)


def test_restored_even_when_the_run_fails():
    gc.set_threshold(700, 10, 10)
    with pytest.raises(RuntimeError), fewer_collections():
        raise RuntimeError("the run failed")
    assert gc.get_threshold() == (700, 10, 10)


def test_nested_and_concurrent_runs_restore_once_the_last_ends():
    gc.set_threshold(700, 10, 10)
    inside, leave = threading.Event(), threading.Event()

    def other_run() -> None:
        with fewer_collections():
            inside.set()
            assert leave.wait(10)

    thread = threading.Thread(target=other_run)
    with fewer_collections():
        thread.start()
        assert inside.wait(10)
        with fewer_collections():
            assert gc.get_threshold() == BULK_THRESHOLDS
        assert gc.get_threshold() == BULK_THRESHOLDS
    assert gc.get_threshold() == BULK_THRESHOLDS  # the other run is still going
    leave.set()
    thread.join(10)
    assert gc.get_threshold() == (700, 10, 10)


@pytest.mark.parametrize("chosen", [(0, 10, 10), (500_000, 10, 10)])
def test_a_program_s_own_choice_is_left_alone(chosen: tuple[int, int, int]):
    gc.set_threshold(*chosen)  # collection off by threshold; or young collections already rarer
    with fewer_collections():
        assert gc.get_threshold() == chosen
    assert gc.get_threshold() == chosen
