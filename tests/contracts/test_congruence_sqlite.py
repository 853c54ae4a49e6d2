"""Congruence: the SQLite adapter in memory answers exactly like the file-based reference.

Also checks that the runner itself notices a store that answers differently, so a green congruence
run means something.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphctx.adapters.sqlite import SqliteGraphStore
from graphctx.contracts.congruence import (
    GROUPS,
    GraphCongruenceContract,
    compare_graph_stores,
    reference_graph_store,
)
from graphctx.kernel import templates as t
from graphctx.kernel.ports import Capabilities
from graphctx.scope import Scope


@pytest.fixture
def memory_store() -> Iterator[SqliteGraphStore]:
    store = SqliteGraphStore(":memory:")
    store.ensure_schema()
    yield store
    store.close()


class TestSqliteInMemoryCongruence(GraphCongruenceContract):
    @pytest.fixture
    def graph_store(self, memory_store: SqliteGraphStore) -> SqliteGraphStore:
        return memory_store


class _Skewed:
    """A store that answers one template slightly differently from the one it wraps."""

    name = "skewed"

    def __init__(
        self, inner: SqliteGraphStore, template: str, declared: frozenset[str] | None = None
    ) -> None:
        self.inner, self.template = inner, template
        self._declared = declared

    @property
    def capabilities(self) -> Capabilities:
        caps = self.inner.capabilities
        return Capabilities(templates=self._declared) if self._declared is not None else caps

    def run(self, template: t.Template[Any, Any], scope: Scope, params: Any) -> Any:
        result = self.inner.run(template, scope, params)
        if template.name != self.template:
            return result
        if isinstance(result, t.Subgraph):
            return result.model_copy(update={"nodes": result.nodes[::-1]})
        if isinstance(result, t.ExactMatches):
            return result.model_copy(update={"matches": result.matches[:1]})
        if isinstance(result, t.ScopeStats):
            return result.model_copy(update={"valid_facts": result.facts})
        raise AssertionError(f"no skew for {template}")

    def ensure_schema(self) -> None:
        self.inner.ensure_schema()

    def close(self) -> None:
        self.inner.close()


def test_compare_graph_stores_congruent_for_the_reference_itself(
    tmp_path: Path, memory_store: SqliteGraphStore
) -> None:
    """Every group runs and finds no difference between two SQLite stores."""
    reference = reference_graph_store(tmp_path / "ref")
    try:
        assert compare_graph_stores(reference, memory_store, Scope("congruence", "plain")) == []
    finally:
        reference.close()


@pytest.mark.parametrize(
    ("template", "group", "marker"),
    [
        ("graph.neighbourhood", "graph.neighbourhood", '"depth": 0'),
        ("entity.find_exact", "entity.find_exact", '"field": "'),
        ("scope.stats", "scope.stats", '"valid_facts": '),
    ],
)
def test_compare_graph_stores_reports_a_readable_diff(
    tmp_path: Path, memory_store: SqliteGraphStore, template: str, group: str, marker: str
) -> None:
    """A store that answers differently gets one diff per differing probe, naming template and params."""
    reference = reference_graph_store(tmp_path / "ref")
    try:
        differences = compare_graph_stores(
            reference, _Skewed(memory_store, template), Scope("c", "x"), groups=(group,)
        )
    finally:
        reference.close()
    assert differences
    first = differences[0]
    assert first.startswith(f"{template}@v1 {{")
    assert "--- expected (sqlite reference)" in first and "+++ actual (candidate)" in first
    assert marker in first


def test_compare_graph_stores_skips_undeclared_templates(
    tmp_path: Path, memory_store: SqliteGraphStore
) -> None:
    """Probes of templates the candidate does not declare are left out, not reported as differences."""
    declared = frozenset({"entity.upsert", "fact.upsert", "entity.get_by_ids"})
    skewed = _Skewed(memory_store, "graph.neighbourhood", declared=declared)
    reference = reference_graph_store(tmp_path / "ref")
    try:
        assert compare_graph_stores(reference, skewed, Scope("c", "x"), groups=GROUPS) == []
    finally:
        reference.close()


def test_compare_graph_stores_rejects_unknown_group(tmp_path: Path, memory_store: SqliteGraphStore) -> None:
    """A misspelt group is an error, not an empty (congruent-looking) comparison."""
    with pytest.raises(ValueError, match="unknown congruence group"):
        compare_graph_stores(memory_store, memory_store, Scope("c"), groups=("graph.neighborhood",))
