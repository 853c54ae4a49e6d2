"""The HugeGraph dialect of the shared Gremlin translations.

What differs from a plain TinkerPop server (measured on HugeGraph 1.5.0, TinkerPop 3.5.1 inside):
* vertex ids are caller-chosen strings (CUSTOMIZE_STRING), derived by hashing scope + entity id, so
  two scopes never share a vertex and an id's length or characters never reach HugeGraph's id codec;
* edge ids cannot be supplied: HugeGraph builds them from source, label, sort values and target.
  Fact edges are MULTIPLE with the sort key `fact_key` (a hash of scope + fact id, set once at
  `addE`, since a sort key cannot be updated): a fact is found at its subject by that key (a range of
  the vertex's edges), or, when its place is not known, by fact id through the scope's edge index;
* GraphSON v3 with HugeGraph's id types (GraphBinary cannot carry HugeGraph ids);
* a schema (property keys, labels, index labels) created over REST before the first write.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from gremlin_python.process.graph_traversal import GraphTraversal, GraphTraversalSource, __
from gremlin_python.process.traversal import T

from graphctx.adapters.gremlin import Binder, GremlinDialect, batch, keys
from graphctx.adapters.gremlin.dialect import Start
from graphctx.errors import BackendError, BackendUnavailable, GraphctxError
from graphctx.scope import Scope

from . import schema, serializer
from .rest import RestClient

if TYPE_CHECKING:
    from graphctx.adapters.gremlin import GremlinGraphStore


# What the hstore backend's gRPC client reports when a store node or a partition leader cannot be
# reached (measured on a 1.5.0 cluster: "UNAVAILABLE: io exception" for ~12 s after a store's kill -9,
# until its partitions have new leaders). The request did not complete; the server itself is fine.
_STORAGE_UNAVAILABLE = ("UNAVAILABLE: ", "DEADLINE_EXCEEDED: ")  # gRPC status prefixes
# HugeGraph's own evaluation timeout (evaluationTimeout in gremlin-server.yaml, 30 s by default) does
# not answer Gremlin's 598: it interrupts the storage read, which answers 500 with this text (measured
# on a loaded 1.5.0 cluster). The request did not complete; the next one may.
_INTERRUPTED = "java.lang.InterruptedException"


# fields of a row write (graphctx.adapters.gremlin.batch) besides the property keys: constants of code
FACT_KEY_FIELD = "_fact_key"
ALIAS_VERTICES_FIELD = "_alias_vertices"
ALIAS_ID = "_id"
ROW_FIELDS = (FACT_KEY_FIELD, ALIAS_VERTICES_FIELD, ALIAS_ID)


def _digest(*parts: str) -> str:
    canonical = json.dumps(parts, ensure_ascii=False, separators=(",", ":"))
    # surrogatepass: an unpaired surrogate (never storable) still hashes instead of raising
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()[:40]


class HugeGraphDialect(GremlinDialect):
    name: ClassVar[str] = "hugegraph"

    def __init__(self, rest: RestClient, *, schema_task_timeout_s: float = 120.0) -> None:
        self.rest = rest
        self.schema_task_timeout_s = schema_task_timeout_s

    # ---- identity ---------------------------------------------------------------------------

    def vertex_id(self, scope: Scope, entity_id: str) -> str:
        return "e" + _digest(scope.tenant_id, scope.namespace, scope.graph_id, entity_id)

    def edge_id(self, scope: Scope, fact_id: str) -> None:
        return None

    def fact_key(self, scope: Scope, fact_id: str) -> str:
        """The sort key that tells apart several facts between one pair of vertices."""
        return "f" + _digest(scope.tenant_id, scope.namespace, scope.graph_id, fact_id)

    def edge_identity(self, t: GraphTraversal, b: Binder, scope: Scope, fact_id: str) -> GraphTraversal:
        return t.property(schema.FACT_SORT_KEY, b(self.fact_key(scope, fact_id)))

    # an edge's id is (source, label, sort values, target): adding one with a stored edge's identity
    # replaces that edge (GraphTransaction keeps one edge per id), so a new fact needs no drop first
    edge_add_replaces: ClassVar[bool] = True

    def edge_fields(self, scope: Scope, fact_id: str) -> dict[str, Any]:
        return {FACT_KEY_FIELD: self.fact_key(scope, fact_id)}

    def edge_identity_from_row(self, t: GraphTraversal, b: Binder, scope: Scope) -> GraphTraversal:
        return t.property(schema.FACT_SORT_KEY, batch.field(FACT_KEY_FIELD))

    def fact_edge(self, t: GraphTraversal, b: Binder, scope: Scope, fact_id: str) -> GraphTraversal:
        # outE(one label) then an equality on the edge label's first sort key is a prefix of HugeGraph's
        # edge ids (owner vertex, direction, label, sort values): GraphTransaction.optimizeQuery turns it
        # into a SORT_KEYS query, a range of the vertex's edges, and the other has() steps are filtered
        # on what it finds. On fact_id alone it would read every edge of the label at the vertex.
        return t.has(schema.FACT_SORT_KEY, b(self.fact_key(scope, fact_id))).has(keys.FACT_ID, b(fact_id))

    def fact_edges(
        self, g: GraphTraversalSource, b: Binder, scope: Scope, fact_ids: Sequence[str]
    ) -> GraphTraversal:
        # the scope's edge index (one per edge label) narrows to the scope; HugeGraph has no IN on an
        # index for bound values, so the fact ids are matched on the server after it
        return b.has_any(self.scoped(g.E(), b, scope), keys.FACT_ID, list(fact_ids))

    def has_any(self, t: GraphTraversal, b: Binder, key: str, values: Sequence[Any]) -> GraphTraversal:
        if key != keys.ALIAS_KEY:
            return b.has_any(t, key, values)
        # a SET key holds one Java collection on HugeGraph, and equality on it needs HugeGraph's own
        # CONTAINS predicate (not expressible in bytecode): unfold and compare after the scope index
        return t.filter_(__.values(keys.ALIAS_KEY).unfold().or_(*[__.is_(b(v)) for v in values]))

    # ---- aliases: an index HugeGraph can query ----------------------------------------------

    def alias_scope(self, scope: Scope) -> str:
        return "s" + _digest(scope.tenant_id, scope.namespace, scope.graph_id)

    def set_aliases(
        self, t: GraphTraversal, b: Binder, scope: Scope, entity_id: str, alias_keys: Sequence[str]
    ) -> GraphTraversal:
        """Besides the alias_key values, replace the entity's `alias` vertices (one per alias key)."""
        t = super().set_aliases(t, b, scope, entity_id, alias_keys)
        t = t.side_effect(__.in_e(schema.ALIAS_EDGE).out_v().drop())
        target = self.vertex_id(scope, entity_id)
        for alias in alias_keys:
            vid = self.alias_vertex_id(scope, entity_id, alias)
            t = t.side_effect(
                __.add_v(schema.ALIAS_LABEL)
                .property(T.id, b(vid))
                .property(schema.ALIAS_VALUE, b(alias))
                .property(schema.ALIAS_SCOPE, b(self.alias_scope(scope)))
                .add_e(schema.ALIAS_EDGE)
                .to(__.V(b(target)))
            )
        return t

    def alias_vertex_id(self, scope: Scope, entity_id: str, alias: str) -> str:
        return "a" + _digest(scope.tenant_id, scope.namespace, scope.graph_id, entity_id, alias)

    def alias_fields(self, scope: Scope, entity_id: str, alias_keys: Sequence[str]) -> dict[str, Any]:
        fields = super().alias_fields(scope, entity_id, alias_keys)
        if alias_keys:
            fields[ALIAS_VERTICES_FIELD] = [
                {ALIAS_ID: self.alias_vertex_id(scope, entity_id, a), schema.ALIAS_VALUE: a}
                for a in alias_keys
            ]
        return fields

    def set_aliases_from_row(
        self, t: GraphTraversal, b: Binder, scope: Scope, *, stored: bool
    ) -> GraphTraversal:
        """Besides the alias_key values, the row's `alias` vertices (a stored entity's old ones go
        first; adding an alias vertex or edge that exists replaces it, so a second run is the same)."""
        t = super().set_aliases_from_row(t, b, scope, stored=stored)
        if stored:
            t = t.side_effect(__.in_e(schema.ALIAS_EDGE).out_v().drop())
        return t.side_effect(
            batch.field(ALIAS_VERTICES_FIELD)
            .unfold()
            .as_(batch.ALIAS)
            .add_v(schema.ALIAS_LABEL)
            .property(T.id, __.select(batch.ALIAS).select(ALIAS_ID))
            .property(schema.ALIAS_VALUE, __.select(batch.ALIAS).select(schema.ALIAS_VALUE))
            .property(schema.ALIAS_SCOPE, b(self.alias_scope(scope)))
            .add_e(schema.ALIAS_EDGE)
            .to(batch.ELEMENT)
        )

    def drop_entities(self, t: GraphTraversal) -> GraphTraversal:
        """The entities' alias vertices go with them; left behind they would only take space, but
        every re-index that deletes symbols would leave more."""
        return t.side_effect(__.in_e(schema.ALIAS_EDGE).out_v().drop()).drop()

    def find_any(self, g: Start, b: Binder, scope: Scope, key: str, values: Sequence[Any]) -> GraphTraversal:
        if key != keys.ALIAS_KEY:
            return super().find_any(g, b, scope, key, values)
        # one index lookup per alias key (HugeGraph has no IN over an index for bound values)
        here = self.alias_scope(scope)
        legs = [
            __.V()
            .has_label(schema.ALIAS_LABEL)
            .has(schema.ALIAS_VALUE, b(v))
            .has(schema.ALIAS_SCOPE, b(here))
            for v in values
        ]
        # mid-traversal (g is `__`) the legs start from the traverser at hand; from `g`, from one injected
        head = g.inject(0).union(*legs) if isinstance(g, GraphTraversalSource) else __.union(*legs)
        t = head.out(schema.ALIAS_EDGE).has_label(self.vertex_label)
        return self.scoped(t, b, scope).dedup()

    # ---- wire, schema, errors ---------------------------------------------------------------

    def message_serializer(self) -> Any:
        return serializer.message_serializer()

    def ensure_schema(self, store: GremlinGraphStore) -> None:
        schema.ensure(self.rest, task_timeout_s=self.schema_task_timeout_s)

    def translate_error(self, exc: BaseException) -> GraphctxError | None:
        message = str(getattr(exc, "status_message", exc))
        if any(sign in message for sign in _STORAGE_UNAVAILABLE):
            return BackendUnavailable(
                "HugeGraph's storage cannot serve the request (on a cluster: a store node is down or a "
                f"partition is electing its leader): {message[:300]}"
            )
        if _INTERRUPTED in message:
            return BackendUnavailable(
                "HugeGraph ended the request at its evaluation timeout (evaluationTimeout in "
                f"gremlin-server.yaml): {message[:300]}"
            )
        if "NoIndexException" in message or "not indexed" in message:
            return BackendError(
                "HugeGraph refused a query on properties without an index label; the graph's schema is "
                f"older than this graphctx (run ensure_schema): {message[:300]}"
            )
        return None
