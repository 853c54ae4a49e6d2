"""A live Apache HugeGraph 1.5 server (REST at GRAPHCTX_TEST_HUGEGRAPH_URL, Gremlin at
GRAPHCTX_TEST_HUGEGRAPH_GREMLIN_URL), certified by `graphctx certify hugegraph` through its entry
point, which reads its own GRAPHCTX_HUGEGRAPH_* variables as in a deployment. Collected only when the
REST URL is set (see conftest.py); the native server: compose/native/up hugegraph."""

from __future__ import annotations

import os
from pathlib import Path

from certify_run import certify
from test_certificates import assert_certified, certificate_dir

URL = os.environ.get("GRAPHCTX_TEST_HUGEGRAPH_URL", "http://127.0.0.1:18080")
GREMLIN_URL = os.environ.get("GRAPHCTX_TEST_HUGEGRAPH_GREMLIN_URL", "ws://127.0.0.1:18182/gremlin")


def test_hugegraph_is_certified(tmp_path: Path) -> None:
    env = {
        "GRAPHCTX_HUGEGRAPH_URL": URL,
        "GRAPHCTX_HUGEGRAPH_GREMLIN_URL": GREMLIN_URL,
        "GRAPHCTX_HUGEGRAPH_POOL_SIZE": "2",
    }
    run = certify(["hugegraph"], certificate_dir("hugegraph", tmp_path), env=env)
    assert_certified(run, "hugegraph")
