"""Which server-backed contract runs are collected.

A contract run against a server is collected only when the server's URL is set in the environment
(`source compose/native/env.sh` sets them all); otherwise its file is left out and the reason is
printed in the pytest header and the terminal summary. Contract fixtures never skip. With
GRAPHCTX_REQUIRE_SERVERS=1 (CI), an unset URL or an unreachable server stops the run with an error
instead of leaving tests out.

Each server has its own block below; the blocks only append to `collect_ignore` and `_SERVER_NOTES`.
"""

from __future__ import annotations

import os
import socket
from urllib.parse import urlsplit

import pytest

collect_ignore: list[str] = []
_SERVER_NOTES: list[str] = []
_REQUIRED = os.environ.get("GRAPHCTX_REQUIRE_SERVERS", "") == "1"


def _reachable(url: str, timeout_s: float = 3.0) -> str | None:
    """None when a TCP connection to the URL's host and port succeeds, else why not."""
    parts = urlsplit(url)
    default = 443 if parts.scheme in ("wss", "https") else 80
    try:
        with socket.create_connection((parts.hostname or "", parts.port or default), timeout=timeout_s):
            return None
    except OSError as exc:
        return f"{type(exc).__name__}: {exc}"


def _select(name: str, env: str, files: list[str]) -> None:
    """Collect `files` only when `env` names a reachable server; fail instead when servers are required."""
    url = os.environ.get(env, "")
    if not url:
        problem = f"{env} is not set"
    else:
        why = _reachable(url)
        problem = "" if why is None else f"{env}={url} is unreachable ({why})"
    if not problem:
        _SERVER_NOTES.append(f"{name}: contract run against {url}")
        return
    if _REQUIRED:
        raise pytest.UsageError(f"GRAPHCTX_REQUIRE_SERVERS=1 but {problem}; start it: compose/native/up")
    collect_ignore.extend(files)
    _SERVER_NOTES.append(
        f"{name}: not collected ({', '.join(files)}): {problem} (source compose/native/env.sh)"
    )


def pytest_report_header() -> list[str]:
    return list(_SERVER_NOTES)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    for note in _SERVER_NOTES:
        terminalreporter.write_line(f"graphctx servers: {note}")


# ---- TinkerPop Gremlin Server (graphctx.adapters.gremlin) -------------------------------------
_select("gremlin-server", "GRAPHCTX_TEST_GREMLIN_URL", ["test_graph_gremlin.py"])


# ---- Apache HugeGraph (graphctx.adapters.hugegraph): REST for the schema, Gremlin for traversals ----
if os.environ.get("GRAPHCTX_TEST_HUGEGRAPH_URL"):
    os.environ.setdefault("GRAPHCTX_TEST_HUGEGRAPH_GREMLIN_URL", "ws://127.0.0.1:18182/gremlin")
_select("hugegraph", "GRAPHCTX_TEST_HUGEGRAPH_URL", ["test_graph_hugegraph.py"])
if "test_graph_hugegraph.py" not in collect_ignore:
    _select("hugegraph gremlin", "GRAPHCTX_TEST_HUGEGRAPH_GREMLIN_URL", ["test_graph_hugegraph.py"])
