"""A live TinkerPop Gremlin Server (TinkerGraph) at GRAPHCTX_TEST_GREMLIN_URL, certified by `graphctx
certify gremlin`: the GraphStore contract, congruence with SQLite and the read trunk, under the
suite's control. Collected only when that URL is set (see conftest.py); the native server:
compose/native/up gremlin-server. The certify harness clears each test's scopes afterwards (TinkerGraph
has no index but tenant_id, so leftovers would slow every later scope-wide read)."""

from __future__ import annotations

import os
from pathlib import Path

from certify_run import certify
from test_certificates import assert_certified, certificate_dir

URL = os.environ.get("GRAPHCTX_TEST_GREMLIN_URL", "ws://127.0.0.1:18183/gremlin")


def test_gremlin_server_is_certified(tmp_path: Path) -> None:
    run = certify(["gremlin"], certificate_dir("gremlin", tmp_path), env={"GRAPHCTX_GREMLIN_URL": URL})
    assert_certified(run, "gremlin")
