"""Our embedded adapters and the worked example, certified by `graphctx certify` exactly as a platform
team would certify theirs: each certificate must PASS with every contract test of every class run,
no failure and no skip the adapter's own capabilities do not explain.

With GRAPHCTX_CERTIFICATE_DIR set (CI sets it), the certificates are kept there, one directory per
adapter; otherwise they go to the test's temporary directory. The servers' certificates are made in
test_graph_gremlin.py and test_graph_hugegraph.py (collected only where the servers run).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from certify_run import REPO, Certified, certify

EXPLAINED_SKIPS = {
    "sqlite": set(),
    "tantivy": set(),
    "tantivy-in-ram": {"durable"},
    "qdrant-edge": set(),
    "qdrant-local": {"small_shards_only"},
    "dictgraph": {"durable"},
    "gremlin": set(),
    "hugegraph": set(),
    "hugegraph-cluster": set(),
}
"""The capability flags each adapter's certificate may skip on (its own declarations)."""


def certificate_dir(name: str, tmp_path: Path) -> Path:
    base = os.environ.get("GRAPHCTX_CERTIFICATE_DIR")
    return Path(base) / name if base else tmp_path / name


def assert_certified(run: Certified, name: str) -> None:
    assert run.code == 0, run.why
    cert = run.certificate
    assert cert is not None and cert["verdict"] == "PASS", run.why
    assert run.output.startswith(f"graphctx certify: PASS {cert['adapter']['adapter']}"), run.output
    assert all(c["ok"] for c in cert["checks"]), cert["checks"]
    for cls in cert["classes"]:
        assert cls["ran"] == cls["expected"] and not cls["missing"], cls
        assert set(cls["counts"]) <= {"passed", "skipped"}, cls
    flags = {f for s in cert["capability_skips"] for f in s["flags"]}
    assert flags == EXPLAINED_SKIPS[name], cert["capability_skips"]
    assert len(cert["capability_skips"]) == len(run.tests("skipped")), "a skip without a capability"
    assert cert["opt_outs"] == [] and cert["known_broken"] == []
    assert cert["contract_version"] and cert["capabilities"]


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("sqlite", ["sqlite"]),
        ("tantivy", ["tantivy"]),
        ("tantivy-in-ram", ["tests.contracts.factories:tantivy_in_ram", "--port", "lexical"]),
        ("qdrant-edge", ["qdrant-edge"]),
        ("qdrant-local", ["qdrant-local"]),
    ],
)
def test_our_embedded_adapters_are_certified(tmp_path: Path, name: str, args: list[str]) -> None:
    run = certify(args, certificate_dir(name, tmp_path))
    assert_certified(run, name)
    classes = {c["contract"] for c in run.certificate["classes"]}  # type: ignore[index]
    assert "RetrievalContract" in classes


def test_the_worked_example_is_certified(tmp_path: Path) -> None:
    """docs/examples/dictgraph, certified from its own directory through its factory."""
    run = certify(
        ["dictgraph:create_graph_store", "--port", "graph"],
        certificate_dir("dictgraph", tmp_path),
        cwd=REPO / "docs" / "examples" / "dictgraph",
    )
    assert_certified(run, "dictgraph")
    assert run.certificate["capabilities"]["graph"]["durable"] is False  # type: ignore[index]
