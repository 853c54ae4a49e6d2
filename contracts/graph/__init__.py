"""The GraphStore contract: one mixin per catalogue operation, plus two bundles.

Usage, in the adapter's own tests (one fixture, plus the reopen hook for a durable store)::

    import pytest
    from graphctx.contracts.graph import GraphStoreContract

    class TestAcmeGraphStore(GraphStoreContract):
        @pytest.fixture
        def graph_store(self, tmp_path):
            store = AcmeGraphStore(tmp_path / "graph")  # fresh, schema ensured, empty for every scope
            store.ensure_schema()
            yield store
            store.close()

        @pytest.fixture
        def reopen_graph_store(self, tmp_path):      # durable stores only: open the same location
            return lambda store: AcmeGraphStore(tmp_path / "graph")

The hooks (`contract_hooks`) are the only members a test class may override; the guard fails on any
other override.

`GraphStoreCoreContract` certifies the entity and fact templates (with isolation, injection,
ordering, error, fresh-store and close/reopen checks); `GraphStoreContract` adds neighbourhood, shortest path,
statistics, clear and the clamps. A test needing a template the adapter does not declare in
`capabilities.templates` is skipped with the template's name (`template:<name>`); a test that is
known to fail is overridden with `@known_broken(reason=...)`; anything else is caught by the guard.

What the contract promises
--------------------------
Only ``GraphStore.run(template, scope, params)`` is used; the test never touches the backend.

Scope. Every entity and fact returned carries the request scope's ``tenant_id``, ``namespace`` and
``graph_id``. Nothing of another scope -- another tenant, a sibling namespace of the same tenant, or a
shared code graph (``graph_id``) of the same tenant and namespace -- is ever returned, counted, reached
by a traversal, changed or deleted, even when ids, names, aliases, qualified names and fact ids
collide. An entity or fact that names another scope is refused with ``ScopeError`` (nothing of the
batch is written) or re-bound to the request's scope; it never lands in the scope it names.

Ordering. Every answer is in a total order fixed by the catalogue -- a rank and then an id, never a
raw score, never insertion order -- and repeating a read gives an identical answer:

* ``entity.get_by_ids``: the order of the ids given, each entity once, missing ids absent;
* ``entity.names`` (optional): exactly what ``entity.get_by_ids`` would answer, narrowed to the id,
  name, qualified name and scope;
* ``entity.find_exact``: field rank (id, qualified_name, name, alias), then entity id; an entity
  once, under its best field; ``id`` and ``qualified_name`` compare exactly, ``name`` and ``alias``
  casefolded (``str.casefold``); ``value`` is the first given value that matched, as given; a page
  is filled from later fields past the entities a better field listed;
* ``entity.hashes``: entity id;
* ``fact.from_roots`` and every list of edges: (subject_id, predicate, object_id, id); a limit keeps
  the first facts of the whole answer in that order, whatever the number of roots;
* ``graph.neighbourhood`` nodes: (depth, id), roots at depth 0, each node once at its smallest depth;
* ``graph.shortest_path``: a shortest path; among several, the smallest sequence of node ids
  (never the order of the edges); between two consecutive nodes joined by several edges, the first
  of them in catalogue edge order.

"Id order" is Unicode code-point order (the same as UTF-8 byte order).

Write visibility. A write is visible to the very next ``run()`` on the same store; there is no
flush or refresh step. A write that raises changes nothing. A batch that names one id several times
applies its versions in order: each is counted against what the one before it left, the last is
stored (since 1.5.0).

Close and reopen (since 1.1.0). After ``close()``, ``run()`` raises ``BackendUnavailable`` (or another
``BackendError``); ``close()`` may be called twice. A store declaring ``capabilities.durable`` keeps
every entity and fact across ``close()`` and a reopen on the same location; the test class provides
the ``reopen_graph_store`` hook that reopens it (an in-memory store declares ``durable=False``).

Time. A fact is valid at ``t`` when ``valid_from <= t < valid_to`` (missing bounds are open).
``as_of=None`` means the store's current time, and ``scope.stats``' ``valid_facts`` counts facts
valid now (value-only facts included). Validity holds the same way for every template and direction:
facts entering a root as leaving it, at every hop of a traversal. A new row keeps the ``created_at``
and ``updated_at`` it is given (or gets the current time); a replace keeps the stored ``created_at``
and takes the ``updated_at`` it is given (or the current time); a row reported ``unchanged`` keeps
both (since 1.5.0). A change of any one stored field is an update. Apart from those promises,
comparisons ignore ``created_at`` and ``updated_at``, which adapters may stamp.

Traversals. ``graph.neighbourhood`` is a breadth-first expansion over valid facts whose object is an
entity (value-only facts are not edges), following the edge allowlist and the direction at every
hop. Its edges are the edges it followed to a returned node (an edge between two nodes of the last
depth is not followed). ``limit`` counts nodes beyond the roots, shared by the hops, and keeps the
nodes of smallest id at each hop; ``per_direction_limit`` caps the edges followed from one node in
one direction, keeping its first edges in catalogue order (outgoing by (predicate, object, id),
incoming by (subject, predicate, id)). ``omitted`` is the number of steps the limits left out.

Clamps. Parameters are clamped by the template models, not rejected (a depth of 9 runs as 2), and
the store honours the clamped value exactly. A cut answer says so: ``truncated=True`` (and, for the
neighbourhood, ``omitted >= 1``); an answer with nothing cut has ``truncated=False``, ``omitted=0``.

Errors (the type is the contract, the wording is free):

* a template that is not the catalogue's (unknown name or another version), or that the store does
  not declare in ``capabilities.templates``: ``UnsupportedTemplate``, never an empty result; every
  declared template runs;
* params that are not the template's parameter model: ``InputError``;
* a scope that is not a ``Scope``: ``ScopeError``;
* ``fact.upsert`` with an endpoint missing from the scope: ``NotFound``, and nothing is written;
* unknown ids, roots or values are not errors: they match nothing.
"""

from __future__ import annotations

# the helpers stay importable from here, as they were from the single module of contract 1.1
from graphctx.contracts.graph._common import (  # noqa: F401
    AFTER_T0,
    CLEAR,
    DELETE,
    FACTS,
    FAR_FUTURE,
    FAR_PAST,
    FIND,
    FROM_ROOTS,
    GET,
    HASHES,
    INVALIDATE,
    MINIMUM_TEMPLATES,
    NAMES,
    NEIGHBOURHOOD,
    PATH,
    STATS,
    UPSERT,
    _GraphSubject,
    _matches,
    _path,
    all_hashes,
    chain,
    clear,
    code,
    delete_entities,
    edge,
    edge_triples,
    ent,
    entity_names,
    entity_view,
    expected_entity,
    expected_fact,
    expected_from_roots,
    fact_order,
    fact_view,
    find_exact,
    from_roots,
    get_entities,
    hash_page,
    ids,
    in_scope,
    invalidate,
    load,
    memory,
    modified,
    name_view,
    neighbourhood,
    node_ids,
    shortest_path,
    stats,
    upsert_entities,
    upsert_facts,
    utc,
    valid_at,
)
from graphctx.contracts.graph.boundaries import BoundaryTests
from graphctx.contracts.graph.bundles import GraphStoreContract, GraphStoreCoreContract
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
from graphctx.contracts.graph.errors import UNKNOWN_TEMPLATE, ErrorTests, empty_scope_calls  # noqa: F401
from graphctx.contracts.graph.exact import ExactLookupTests
from graphctx.contracts.graph.facts import FactInvalidateTests, FactsFromRootsTests, FactUpsertTests
from graphctx.contracts.graph.fresh import FreshStoreTests
from graphctx.contracts.graph.injection import InjectionTests, targeted_payloads
from graphctx.contracts.graph.isolation import IsolationTests, Tenancy, tenant_data  # noqa: F401
from graphctx.contracts.graph.lifecycle import LifecycleTests
from graphctx.contracts.graph.names import EntityNamesTests
from graphctx.contracts.graph.ordering import OrderingTests
from graphctx.contracts.graph.path import ShortestPathTests
from graphctx.contracts.graph.stats import ScopeClearTests, ScopeStatsTests
from graphctx.contracts.graph.traversal import NeighbourhoodTests

__all__ = [
    "MINIMUM_TEMPLATES",
    "BoundaryTests",
    "ClampTests",
    "DurabilityTests",
    "EntityDeleteTests",
    "EntityHashesTests",
    "EntityNamesTests",
    "EntityUpsertTests",
    "ErrorTests",
    "ExactLookupTests",
    "FactInvalidateTests",
    "FactUpsertTests",
    "FactsFromRootsTests",
    "FindExactTests",
    "FreshStoreTests",
    "GetByIdsTests",
    "GraphStoreContract",
    "GraphStoreCoreContract",
    "InjectionTests",
    "IsolationDepthTests",
    "IsolationTests",
    "LifecycleTests",
    "NeighbourhoodTests",
    "OrderingTests",
    "ScopeClearTests",
    "ScopeStatsTests",
    "ShortestPathTests",
    "targeted_payloads",
]
