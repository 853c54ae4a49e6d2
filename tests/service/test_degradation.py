"""A slow or failing dense leg degrades to lexical within the deadline and says so."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from graphctx.kernel.stores import open_stores
from graphctx.retrieval.runner import LIMIT
from graphctx.service import ContextService
from tests.conftest import TENANT_A, fixed_clock
from tests.service.memory_data import load


class _Wrapped:
    def __init__(self, inner):
        self.inner = inner
        self.model_id, self.dimension = inner.model_id, inner.dimension
        self.query_mode = threading.Event()

    def embed(self, texts):
        if self.query_mode.is_set():
            return self.on_query(texts)
        return self.inner.embed(texts)


class _Slow(_Wrapped):
    def __init__(self, inner):
        super().__init__(inner)
        self.release = threading.Event()

    def on_query(self, texts):
        self.release.wait(30)
        return self.inner.embed(texts)


class _Broken(_Wrapped):
    def on_query(self, texts):
        raise RuntimeError("model file unreadable")


class _NaN(_Wrapped):
    def on_query(self, texts):
        return np.full((len(texts), self.dimension), np.nan, dtype=np.float32)


@pytest.mark.parametrize(
    ("wrapper", "status"), [(_Slow, "timeout"), (_Broken, "error"), (_NaN, "invalid_vector")]
)
def test_dense_leg_failure_falls_back_to_lexical(settings, wrapper, status):
    settings = settings.model_copy(update={"dense_deadline_s": 0.2})
    stores = open_stores(settings)
    embedder = wrapper(stores.embedder)
    stores.embedder = embedder
    with ContextService(stores, settings, clock=fixed_clock) as service:
        load(service, TENANT_A, "m")
        embedder.query_mode.set()
        env = service.recall(TENANT_A, "latency spike evictions")
        if isinstance(embedder, _Slow):
            embedder.release.set()
    assert env["legs"]["dense"]["status"] == status
    assert env["legs"]["dense"]["fallback"] == "lexical"
    assert env["legs"]["bm25"]["status"] == "ok"
    assert env["items"] and env["items"][0]["name"].startswith("INC-2041")
    assert "dense" not in env["items"][0]["match"]
    assert env["follow_up"]


class _HangsThenHeals(_Wrapped):
    """The first `hung` query embeddings hang until released; every later one answers."""

    def __init__(self, inner, hung):
        super().__init__(inner)
        self.similarity_floor = inner.similarity_floor  # its answers are used
        self.hung, self.calls = hung, 0
        self.lock, self.release = threading.Lock(), threading.Event()

    def on_query(self, texts):
        with self.lock:
            self.calls += 1
            mine = self.calls
        if mine <= self.hung:
            self.release.wait(60)
        return self.inner.embed(texts)


def _dense_status(service):
    return service.recall(TENANT_A, "latency spike evictions")["legs"]["dense"]


def test_hung_dense_calls_do_not_hold_back_the_recalls_after_the_vector_side_recovers(settings):
    """Six dense calls hang for good (more than the four threads of the pool the leg used to run
    in, behind which every later call queued until its budget ran out): the next recall's dense leg
    answers, on a thread of its own."""
    settings = settings.model_copy(update={"dense_deadline_s": 0.3})
    stores = open_stores(settings)
    embedder = _HangsThenHeals(stores.embedder, hung=6)
    stores.embedder = embedder
    with ContextService(stores, settings, clock=fixed_clock) as service:
        load(service, TENANT_A, "m")
        embedder.query_mode.set()
        try:
            assert [_dense_status(service)["status"] for _ in range(6)] == ["timeout"] * 6
            assert _dense_status(service)["status"] == "ok"
        finally:
            embedder.release.set()


def test_while_every_leg_thread_is_hung_the_dense_leg_is_skipped_at_once(settings):
    settings = settings.model_copy(update={"dense_deadline_s": 0.3})
    stores = open_stores(settings)
    embedder = _HangsThenHeals(stores.embedder, hung=LIMIT)
    stores.embedder = embedder
    with ContextService(stores, settings, clock=fixed_clock) as service:
        load(service, TENANT_A, "m")
        embedder.query_mode.set()
        try:
            for _ in range(LIMIT):
                assert _dense_status(service)["status"] == "timeout"
            skipped = _dense_status(service)
            assert skipped["status"] == "skipped" and skipped["fallback"] == "lexical", skipped
        finally:
            embedder.release.set()
        for _ in range(200):  # the hung calls return: their threads end
            if service._executor.running == 0:
                break
            time.sleep(0.05)
        assert _dense_status(service)["status"] == "ok"
