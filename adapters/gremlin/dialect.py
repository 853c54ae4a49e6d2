"""The extension point under the shared Gremlin template translations.

`graphctx.adapters.gremlin` translates every catalogue template into parameter-bound bytecode once.
What differs between Gremlin servers -- how vertices and edges are identified, how times are
encoded, the wire serializer, the schema a server needs before the first write, how its errors
read -- is a `GremlinDialect`. The generic TinkerPop store uses `GremlinDialect` itself; the
HugeGraph adapter subclasses it and passes its dialect to `GremlinGraphStore`:

    from graphctx.adapters.gremlin import ConnectionConfig, GremlinDialect, GremlinGraphStore

    class HugeGraphDialect(GremlinDialect):
        name = "hugegraph"
        ...

    store = GremlinGraphStore(ConnectionConfig(url=..., traversal_source="__g_hugegraph"),
                              dialect=HugeGraphDialect(...))

The graph model every dialect shares (see docs/operations.md, "graphctx on a TinkerPop Gremlin Server"):

* one vertex per entity, label `VERTEX_LABEL`, with the scope (tenant_id, namespace, graph_id), the
  entity's fields (`keys.ENTITY_*`) and derived lookup keys (`name_key`: casefolded name;
  `alias_key`: one set-cardinality value per casefolded alias; `sort_key`: hex of the UTF-8 id, so
  the server's string order is code-point order);
* one edge per fact, labelled with its predicate (the allowlist in graphctx.model, so a constant of
  code), from subject to object, carrying the scope, `fact_id`, subject/object ids, `order_key` (the
  catalogue edge order as one string) and the fact's fields. A value-only fact (no object) is a
  self-loop on its subject flagged `literal=True`; traversals never follow literals;
* optional fields are absent properties (never a null value); times are `encode_time` values.

Every traversal starts from vertices or edges bound to the scope and re-checks the scope (`scoped`)
on every hop and on both endpoints of every edge.

Stability: this interface is what the HugeGraph adapter builds on. Changes are listed in the dialect
changelog of docs/gremlin-dialects.md, with what each hook decides and server notes (JanusGraph,
Neptune-style endpoints).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, ClassVar

from gremlin_python.driver.serializer import GraphSONSerializersV3d0
from gremlin_python.process.graph_traversal import GraphTraversal, GraphTraversalSource, __
from gremlin_python.process.traversal import Cardinality, T
from gremlin_python.statics import long

from graphctx.errors import GraphctxError
from graphctx.scope import Scope

from . import batch, keys
from .binding import Binder, Op

if TYPE_CHECKING:
    from .store import GremlinGraphStore

Start = GraphTraversalSource | type[__]
"""Where a start hook begins: the traversal source `g`, or `__` for a mid-traversal `V()` start (a leg
of a `union()` or a `project()` by-modulator, so several lookups share one request)."""

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

# the fields of a row (batch.py) that are not property keys: constants of code, like the keys
VERTEX_ID_FIELD = "_vertex_id"
EDGE_ID_FIELD = "_edge_id"
ALIASES_FIELD = "_alias_keys"
SUBJECT_FIELD = "_subject"
TARGET_FIELD = "_target"
ROW_FIELDS = (VERTEX_ID_FIELD, EDGE_ID_FIELD, ALIASES_FIELD, SUBJECT_FIELD, TARGET_FIELD)


@dataclass(frozen=True)
class ConnectionConfig:
    """How to reach one Gremlin Server. Built by each adapter from its own settings."""

    url: str
    """ws:// or wss:// endpoint, e.g. ws://127.0.0.1:8182/gremlin."""
    traversal_source: str = "g"
    """The server-side traversal source alias (`g`; HugeGraph: `__g_<graph>`)."""
    username: str = ""
    password: str = ""
    pool_size: int = 4
    connect_timeout_s: float = 5.0
    """Longest wait for the TCP connect plus the websocket handshake."""
    read_timeout_s: float = 30.0
    """Longest wait for a whole answer once a request is sent."""
    retries: int = 2
    """Extra attempts for idempotent requests (reads and upserts) after a connection failure."""
    backoff_s: float = 0.2
    """First pause between attempts; doubled on each further attempt."""
    max_request_bytes: int = 48 * 1024
    """Estimated upper bound of one request; batches are split into chunks below it (a stock Gremlin
    Server refuses requests over its `maxContentLength`, 64 KiB by default)."""
    transport_factory: Callable[[], Any] | None = None
    """Override of the websocket transport (tests wrap it to inspect every request on the wire)."""


class GremlinDialect:
    """The generic TinkerPop dialect: caller-supplied string ids (TinkerGraph with
    `vertexIdManager=ANY` and `edgeIdManager=ANY`, Neptune), epoch-microsecond longs for times,
    GraphSON v3, no schema.

    Subclasses override hooks; the template translations only ever call these methods.
    """

    name: ClassVar[str] = "gremlin"
    """Store name reported by the GraphStore (`store.name`)."""

    vertex_label: ClassVar[str] = keys.VERTEX_LABEL

    # ---- identity ---------------------------------------------------------------------------

    def vertex_id(self, scope: Scope, entity_id: str) -> Any | None:
        """The id the vertex of `entity_id` in `scope` gets, or None when the server assigns ids
        (then `entity_vertices`/`find_vertex` must look vertices up by properties).

        Default: a JSON array of the scope and the id, so two scopes can never share a vertex."""
        return json.dumps(
            ["e", scope.tenant_id, scope.namespace, scope.graph_id, entity_id],
            ensure_ascii=False,
            separators=(",", ":"),
        )

    def edge_id(self, scope: Scope, fact_id: str) -> Any | None:
        """The id the edge of `fact_id` in `scope` gets, or None when the server assigns edge ids
        (then `fact_edges` must look edges up by properties)."""
        return json.dumps(
            ["f", scope.tenant_id, scope.namespace, scope.graph_id, fact_id],
            ensure_ascii=False,
            separators=(",", ":"),
        )

    def edge_label(self, predicate: str) -> str:
        """The edge label of a predicate. `predicate` is already checked against the allowlist."""
        return predicate

    # ---- traversal building blocks ----------------------------------------------------------

    def scoped(self, t: GraphTraversal, b: Binder, scope: Scope) -> GraphTraversal:
        """Append the scope filter to a traversal positioned on entity vertices or fact edges."""
        return (
            t.has(keys.TENANT_ID, b(scope.tenant_id))
            .has(keys.NAMESPACE, b(scope.namespace))
            .has(keys.GRAPH_ID, b(scope.graph_id))
        )

    def scope_vertices(self, g: Start, b: Binder, scope: Scope) -> GraphTraversal:
        """Start: every entity vertex of the scope."""
        return self.scoped(g.V().has_label(self.vertex_label), b, scope)

    def entity_vertices(self, g: Start, b: Binder, scope: Scope, entity_ids: Sequence[str]) -> GraphTraversal:
        """Start: the scope's entity vertices among `entity_ids` (each at most once, any order).
        `entity_ids` is non-empty and de-duplicated."""
        vids = [self.vertex_id(scope, i) for i in entity_ids]
        if any(v is None for v in vids):
            t = self.has_any(g.V().has_label(self.vertex_label), b, keys.ENTITY_ID, entity_ids)
        else:
            t = g.V(b(vids)).has_label(self.vertex_label)
        return self.scoped(t, b, scope)

    def find_vertex(self, b: Binder, scope: Scope, entity_id: str) -> GraphTraversal:
        """Anonymous, mid-traversal: the scope's vertex of `entity_id` (or nothing)."""
        vid = self.vertex_id(scope, entity_id)
        if vid is None:
            t = __.V().has_label(self.vertex_label).has(keys.ENTITY_ID, b(entity_id))
        else:
            t = __.V(b(vid)).has_label(self.vertex_label)
        return self.scoped(t, b, scope)

    def new_vertex(self, b: Binder, scope: Scope, entity_id: str) -> GraphTraversal:
        """Anonymous: add the vertex of `entity_id` with its identity set (id and/or the properties
        the server needs at creation, e.g. primary keys). The caller then sets every property,
        scope included, with `property()` steps."""
        t = __.add_v(self.vertex_label)
        vid = self.vertex_id(scope, entity_id)
        if vid is not None:
            t = t.property(T.id, b(vid))
        return t

    def fact_edges(
        self, g: GraphTraversalSource, b: Binder, scope: Scope, fact_ids: Sequence[str]
    ) -> GraphTraversal:
        """Start: the scope's fact edges among `fact_ids` (non-empty, de-duplicated)."""
        eids = [self.edge_id(scope, i) for i in fact_ids]
        by_id = all(e is not None for e in eids)
        t = g.E(b(eids)) if by_id else self.has_any(g.E(), b, keys.FACT_ID, fact_ids)
        return self.scoped(t, b, scope)

    def fact_edge(self, t: GraphTraversal, b: Binder, scope: Scope, fact_id: str) -> GraphTraversal:
        """Append to an `outE(label)` step from a fact's subject what keeps the edge of `fact_id` (the
        caller adds the scope filter). Used to read the stored version of a fact at its subject and to
        drop it there. Default: equality on `fact_id`. (Added for HugeGraph, whose sort key makes it
        a range of the vertex's edges instead of a scan of them.)"""
        return t.has(keys.FACT_ID, b(fact_id))

    def edge_identity(self, t: GraphTraversal, b: Binder, scope: Scope, fact_id: str) -> GraphTraversal:
        """Append to an `addE()` step what identifies the new edge (its id, when ids are supplied).
        The caller then sets every property, `fact_id` and the scope included."""
        eid = self.edge_id(scope, fact_id)
        return t if eid is None else t.property(T.id, b(eid))

    def has_any(self, t: GraphTraversal, b: Binder, key: str, values: Sequence[Any]) -> GraphTraversal:
        """Keep elements whose `key` equals one of `values` (non-empty). Used on the scoped start
        (qualified_name, name_key, alias_key -- a set-cardinality key -- and, without supplied ids,
        entity_id / fact_id). Default: an or() of bound equalities (Binder.has_any)."""
        return b.has_any(t, key, values)

    def find_any(self, g: Start, b: Binder, scope: Scope, key: str, values: Sequence[Any]) -> GraphTraversal:
        """Start: the scope's entity vertices whose `key` (qualified_name, name_key, alias_key) equals
        one of `values` (find_exact, which passes `__`: one leg per field, all in one request).
        Default: `has_any` on `scope_vertices`. (Added for HugeGraph, whose alias lookups go through
        an index of their own.)"""
        return self.has_any(self.scope_vertices(g, b, scope), b, key, values)

    def set_aliases(
        self, t: GraphTraversal, b: Binder, scope: Scope, entity_id: str, alias_keys: Sequence[str]
    ) -> GraphTraversal:
        """Append to an entity-vertex traversal what stores its alias keys (the old ones are already
        dropped). Default: one set-cardinality `alias_key` value each."""
        for alias in alias_keys:
            t = t.property(Cardinality.set_, keys.ALIAS_KEY, b(alias))
        return t

    def drop_entities(self, t: GraphTraversal) -> GraphTraversal:
        """Drop the entity vertices `t` is on (their fact edges go with them). Dialects that keep
        helper vertices per entity (HugeGraph's alias index) drop those here too."""
        return t.drop()

    def compare(self, t: GraphTraversal, b: Binder, key: str, op: Op, value: Any) -> GraphTraversal:
        """Keep elements whose `key` is `op` `value`; elements without `key` are dropped. Used on the
        scoped start (sort_key > after) and on anonymous traversals inside or() (validity of fact
        edges). Default: Binder.compare (value bound as a traversal side effect)."""
        return b.compare(t, key, op, value)

    edge_identity_keys: ClassVar[frozenset[str]] = frozenset()
    """Edge properties `edge_identity` already sets (e.g. a sort key a server refuses to set twice);
    the shared translations do not set them again."""

    # ---- bulk writes as bound rows (batch.py) -----------------------------------------------
    # entity.upsert and fact.upsert send one traversal per request whose values travel as rows; each
    # per-item hook above has a row counterpart here. A dialect that overrides a per-item hook and not
    # its row counterpart keeps the per-item writes (`writes_rows`).

    edge_add_replaces: ClassVar[bool] = False
    """True when adding an edge whose identity (ends, label, `edge_identity` values) equals a stored
    edge's replaces that edge (HugeGraph builds edge ids from them). A new fact then needs no drop
    before its add for a second run of the write to leave the same graph."""

    def writes_rows(self) -> bool:
        """Whether the row writes apply: the dialect supplies vertex ids and every per-item write hook
        it overrides has its row counterpart overridden too."""
        pairs = [
            ("new_vertex", "new_vertex_from_row"),
            ("set_aliases", "set_aliases_from_row"),
            ("edge_identity", "edge_identity_from_row"),
        ]
        cls = type(self)
        for item, row in pairs:
            if getattr(cls, item) is not getattr(GremlinDialect, item) and getattr(cls, row) is getattr(
                GremlinDialect, row
            ):
                return False
        return True

    def new_vertex_from_row(self, b: Binder, scope: Scope) -> GraphTraversal:
        """Anonymous, on the row at hand: add its vertex, with the id `vertex_id` gave (row key
        `VERTEX_ID_FIELD`). Row counterpart of `new_vertex`."""
        return __.add_v(self.vertex_label).property(T.id, batch.field(VERTEX_ID_FIELD))

    def alias_fields(self, scope: Scope, entity_id: str, alias_keys: Sequence[str]) -> dict[str, Any]:
        """What a row needs for `set_aliases_from_row`: default the alias keys (absent when none)."""
        return {ALIASES_FIELD: list(alias_keys)} if alias_keys else {}

    def set_aliases_from_row(
        self, t: GraphTraversal, b: Binder, scope: Scope, *, stored: bool
    ) -> GraphTraversal:
        """Append to a row's vertex (step label `batch.ELEMENT`) what stores the row's alias keys; the
        old ones are already dropped. `stored`: the vertex existed before this write. Row counterpart
        of `set_aliases`."""
        return t.side_effect(
            batch.field(ALIASES_FIELD)
            .unfold()
            .as_(batch.ALIAS)
            .select(batch.ELEMENT)
            .property(Cardinality.set_, keys.ALIAS_KEY, __.select(batch.ALIAS))
        )

    def edge_fields(self, scope: Scope, fact_id: str) -> dict[str, Any]:
        """What a row needs for `edge_identity_from_row`: default the edge id (absent when the server
        assigns ids)."""
        eid = self.edge_id(scope, fact_id)
        return {} if eid is None else {EDGE_ID_FIELD: eid}

    def edge_identity_from_row(self, t: GraphTraversal, b: Binder, scope: Scope) -> GraphTraversal:
        """Append to an `addE()` on the row at hand what identifies the new edge (the fields
        `edge_fields` put in the row). Row counterpart of `edge_identity`."""
        if self.edge_id(scope, "f") is None:  # ids are supplied for every fact or for none
            return t
        return t.property(T.id, batch.field(EDGE_ID_FIELD))

    # ---- values -----------------------------------------------------------------------------

    def encode_time(self, value: datetime) -> Any:
        """A stored time. Must order like the instant (the validity filters compare on the server).
        Default: microseconds since the epoch as a long; a naive datetime is UTC."""
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return long((value - _EPOCH) // timedelta(microseconds=1))

    def decode_time(self, value: Any) -> datetime:
        return _EPOCH + timedelta(microseconds=int(value))

    # ---- wire, schema, errors ---------------------------------------------------------------

    def message_serializer(self) -> Any:
        """The driver's message serializer. Default GraphSON v3 (HugeGraph adds its id types)."""
        return GraphSONSerializersV3d0()

    def ensure_schema(self, store: GremlinGraphStore) -> None:
        """Create what the server needs before the first write (property keys, labels, indexes);
        idempotent. TinkerGraph is schemaless: nothing to do."""

    def translate_error(self, exc: BaseException) -> GraphctxError | None:
        """A typed error for a server error this dialect recognises, or None for the default mapping
        (BackendError naming the server and the template)."""
        return None
