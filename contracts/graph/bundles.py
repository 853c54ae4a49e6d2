"""The two GraphStore bundles: the core (entity and fact templates) and the whole contract."""

from __future__ import annotations

from graphctx.contracts.graph.boundaries import BoundaryTests
from graphctx.contracts.graph.clamps import ClampTests
from graphctx.contracts.graph.depth import IsolationDepthTests
from graphctx.contracts.graph.durability import DurabilityTests
from graphctx.contracts.graph.entities import (
    EntityDeleteTests,
    EntityHashesTests,
    EntityUpsertTests,
    FindExactTests,
    GetByIdsTests,
)
from graphctx.contracts.graph.errors import ErrorTests
from graphctx.contracts.graph.exact import ExactLookupTests
from graphctx.contracts.graph.facts import (
    FactInvalidateTests,
    FactPlacementTests,
    FactsFromRootsTests,
    FactUpsertTests,
)
from graphctx.contracts.graph.fresh import FreshStoreTests
from graphctx.contracts.graph.injection import InjectionTests
from graphctx.contracts.graph.isolation import IsolationTests
from graphctx.contracts.graph.lifecycle import LifecycleTests
from graphctx.contracts.graph.names import EntityNamesTests
from graphctx.contracts.graph.ordering import OrderingTests
from graphctx.contracts.graph.path import ShortestPathTests
from graphctx.contracts.graph.stats import ScopeClearTests, ScopeStatsTests
from graphctx.contracts.graph.traversal import NeighbourhoodTests

# ---- bundles ----------------------------------------------------------------------------------


class GraphStoreCoreContract(
    EntityUpsertTests,
    GetByIdsTests,
    EntityNamesTests,
    FindExactTests,
    EntityDeleteTests,
    EntityHashesTests,
    FactUpsertTests,
    FactPlacementTests,
    FactInvalidateTests,
    FactsFromRootsTests,
    IsolationTests,
    InjectionTests,
    OrderingTests,
    ErrorTests,
    FreshStoreTests,
    DurabilityTests,
    ExactLookupTests,
    BoundaryTests,
    LifecycleTests,
):
    """The entity and fact templates, with isolation, injection, ordering, errors, a fresh store, and
    close / reopen.

    Subclass it and write one `graph_store` fixture (see the module docstring). Tests needing a
    template your store does not declare in `capabilities.templates` skip with its name."""


class GraphStoreContract(
    GraphStoreCoreContract,
    NeighbourhoodTests,
    ShortestPathTests,
    ScopeStatsTests,
    ScopeClearTests,
    ClampTests,
    IsolationDepthTests,
):
    """The whole GraphStore contract: the core plus neighbourhood, shortest path, statistics, clear
    and the clamps. This is what the reference SQLite store passes.

    Usage::

        class TestAcmeGraphStore(GraphStoreContract):
            @pytest.fixture
            def graph_store(self):
                store = AcmeGraphStore(...)
                store.ensure_schema()
                yield store
                store.close()
    """
