"""The collector's thresholds during a bulk run: raised once, restored when the last run ends, and
never lowered or turned on against the embedding program's choice; a short CLI call ends with its
objects frozen for the interpreter's shutdown, a server does not."""

from __future__ import annotations

import gc
import subprocess
import sys
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


PROBE = (
    "import gc, sys\n"
    "from graphctx.cli import main\n"
    "sys.argv = ['graphctx', *sys.argv[1:]]\n"
    "gc.set_threshold(700, 10, 10)\n"
    "try:\n    main()\nexcept SystemExit:\n    pass\n"
    "print('FROZEN', gc.get_freeze_count() > 0, 'THRESHOLDS', gc.get_threshold(), file=sys.stderr)\n"
)


def _cli_in_a_process(*argv: str) -> str:
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, timeout=300)
    return done.stderr


def test_a_short_cli_call_ends_frozen_with_its_writes_whole(tmp_path):
    data = tmp_path / "data"
    said = _cli_in_a_process("demo", "--data-dir", str(data))
    assert "FROZEN True THRESHOLDS (700, 10, 10)" in said, said[-2000:]
    # what the frozen process wrote is all there for the next one
    read = subprocess.run(
        [sys.executable, "-m", "graphctx.cli", "--data-dir", str(data), "--tenant", "demo", "--via",
         "direct", "recall", "who owns checkout-api", "--json"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert read.returncode == 0, read.stderr[-2000:]
    assert "checkout-api" in read.stdout


def test_a_server_command_is_not_frozen():
    said = _cli_in_a_process("serve", "--help")
    assert "FROZEN False THRESHOLDS (700, 10, 10)" in said, said[-2000:]
