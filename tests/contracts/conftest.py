"""Which server-backed contract runs are collected.

A contract run against a server is collected only when the server's URL is set in the environment
(`source compose/native/env.sh` sets them all); otherwise its file is left out and the reason is
printed in the pytest header and the terminal summary. Contract fixtures never skip. With
GRAPHCTX_REQUIRE_SERVERS=1 (CI), an unset URL or an unreachable server stops the run with an error
instead of leaving tests out; the HugeGraph cluster, started only when needed, has its own switch
(GRAPHCTX_REQUIRE_CLUSTER=1) and env file (compose/native/hugegraph-cluster/env.sh).

Each server has its own block below; the blocks only append to `collect_ignore` and `_SERVER_NOTES`.
"""

from __future__ import annotations

import os
import socket
from urllib.parse import urlsplit

import pytest

collect_ignore: list[str] = []
_SERVER_NOTES: list[str] = []


def _reachable(url: str, timeout_s: float = 3.0) -> str | None:
    """None when a TCP connection to the URL's host and port succeeds, else why not."""
    parts = urlsplit(url)
    default = 443 if parts.scheme in ("wss", "https") else 80
    try:
        with socket.create_connection((parts.hostname or "", parts.port or default), timeout=timeout_s):
            return None
    except OSError as exc:
        return f"{type(exc).__name__}: {exc}"


def _select(name: str, env: str, files: list[str], *, switch: str = "GRAPHCTX_REQUIRE_SERVERS") -> None:
    """Collect `files` only when `env` names a reachable server; fail instead when `switch` is 1."""
    url = os.environ.get(env, "")
    if not url:
        problem = f"{env} is not set"
    else:
        why = _reachable(url)
        problem = "" if why is None else f"{env}={url} is unreachable ({why})"
    if not problem:
        _SERVER_NOTES.append(f"{name}: contract run against {url}")
        return
    if os.environ.get(switch, "") == "1":
        raise pytest.UsageError(f"{switch}=1 but {problem}; start it: compose/native/up")
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


# ---- Apache HugeGraph in distributed mode (PD + 3 stores + 2 servers, hstore) -----------------
# compose/native/up hugegraph-cluster; source compose/native/hugegraph-cluster/env.sh
_CLUSTER_FILES = ["test_graph_hugegraph_cluster.py", "test_certify_hugegraph_cluster.py"]
for _name, _env in (
    ("hugegraph cluster server 1", "GRAPHCTX_TEST_HGCLUSTER_URL"),
    ("hugegraph cluster server 1 gremlin", "GRAPHCTX_TEST_HGCLUSTER_GREMLIN_URL"),
    ("hugegraph cluster server 2", "GRAPHCTX_TEST_HGCLUSTER_URL_2"),
    ("hugegraph cluster server 2 gremlin", "GRAPHCTX_TEST_HGCLUSTER_GREMLIN_URL_2"),
):
    if _CLUSTER_FILES[0] in collect_ignore:
        break
    # the cluster is started only when needed: requiring the servers does not require it
    _select(_name, _env, _CLUSTER_FILES, switch="GRAPHCTX_REQUIRE_CLUSTER")

# The cluster's certificate takes 20-60 minutes here: collected only when asked (.ci/cluster-certify).
_CLUSTER_CERTIFICATE = "test_certify_hugegraph_cluster.py"
if _CLUSTER_CERTIFICATE not in collect_ignore and os.environ.get("GRAPHCTX_CLUSTER_CERTIFY", "") != "1":
    collect_ignore.append(_CLUSTER_CERTIFICATE)
    _SERVER_NOTES.append(
        f"hugegraph cluster certificate: not collected ({_CLUSTER_CERTIFICATE}): "
        "set GRAPHCTX_CLUSTER_CERTIFY=1 or run .ci/cluster-certify (20-60 min)"
    )
