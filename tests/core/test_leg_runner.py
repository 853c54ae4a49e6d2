"""The dense leg's threads: reused while idle, never more than the limit alive, a hung call never
queues a later one (it is refused at once when every thread is busy), idle threads end."""

from __future__ import annotations

import threading
import time

import pytest

from graphctx.retrieval.runner import LegRunner, Saturated


def wait_until(condition, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.005)


def test_calls_one_after_another_reuse_one_thread() -> None:
    runner = LegRunner(limit=4)
    try:
        seen = {runner.submit(threading.get_ident).result(timeout=5) for _ in range(20)}
        assert len(seen) == 1
        wait_until(lambda: runner.running == 0)
    finally:
        runner.shutdown()


def test_results_and_exceptions_reach_the_caller() -> None:
    runner = LegRunner(limit=2)
    try:
        assert runner.submit(lambda a, b=0: a + b, 2, b=3).result(timeout=5) == 5
        with pytest.raises(ZeroDivisionError):
            runner.submit(lambda: 1 / 0).result(timeout=5)
        assert runner.submit(lambda: "after an error").result(timeout=5) == "after an error"
    finally:
        runner.shutdown()


def test_hung_calls_are_refused_beyond_the_limit_and_released_when_they_return() -> None:
    release = threading.Event()
    runner = LegRunner(limit=3)
    try:
        hung = [runner.submit(release.wait) for _ in range(3)]
        wait_until(lambda: runner.running == 3)
        with pytest.raises(Saturated):
            runner.submit(lambda: "never runs").result(timeout=5)
        release.set()
        assert all(f.result(timeout=5) for f in hung)
        wait_until(lambda: runner.running == 0)
        assert runner.submit(lambda: "runs again").result(timeout=5) == "runs again"
    finally:
        release.set()
        runner.shutdown()


def test_a_free_thread_serves_a_call_while_others_hang() -> None:
    release = threading.Event()
    runner = LegRunner(limit=3)
    try:
        hung = [runner.submit(release.wait) for _ in range(2)]
        wait_until(lambda: runner.running == 2)
        assert runner.submit(lambda: "answered").result(timeout=5) == "answered"
        release.set()
        for f in hung:
            f.result(timeout=5)
    finally:
        release.set()
        runner.shutdown()


def test_idle_threads_end_and_new_calls_start_new_ones() -> None:
    runner = LegRunner(limit=2, idle_s=0.05)
    try:
        first = runner.submit(threading.current_thread).result(timeout=5)
        wait_until(lambda: not first.is_alive())
        assert runner.running == 0
        second = runner.submit(threading.current_thread).result(timeout=5)
        assert second is not first
    finally:
        runner.shutdown()


def test_many_concurrent_submitters_never_exceed_the_limit() -> None:
    runner = LegRunner(limit=4)
    peak, busy, lock = [0], [0], threading.Lock()

    def work() -> int:
        with lock:
            busy[0] += 1
            peak[0] = max(peak[0], busy[0])
        time.sleep(0.002)
        with lock:
            busy[0] -= 1
        return 1

    results: list[str] = []

    def submitter() -> None:
        for _ in range(50):
            try:
                results.append(str(runner.submit(work).result(timeout=5)))
            except Saturated:
                results.append("saturated")

    try:
        threads = [threading.Thread(target=submitter) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(results) == 400 and "1" in results
        assert peak[0] <= 4
    finally:
        runner.shutdown()


def test_shutdown_ends_idle_threads_and_refuses_new_calls() -> None:
    runner = LegRunner(limit=2)
    worker = runner.submit(threading.current_thread).result(timeout=5)
    runner.shutdown()
    assert not worker.is_alive()
    with pytest.raises(RuntimeError):
        runner.submit(lambda: None)
