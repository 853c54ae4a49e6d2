"""A slow or failing dense leg degrades to lexical within the deadline and says so."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from graphctx.kernel.stores import open_stores
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
