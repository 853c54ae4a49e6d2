"""The Gremlin graph store: the catalogue's templates as parameter-bound bytecode over one dialect."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, TypeVar

from gremlin_python.process.graph_traversal import GraphTraversal, GraphTraversalSource
from gremlin_python.process.traversal import TraversalStrategies
from gremlin_python.structure.graph import Graph
from pydantic import BaseModel

from graphctx import deadlines
from graphctx.clock import Clock, utc_now
from graphctx.errors import BackendError, BackendUnavailable, DeadlineExceeded
from graphctx.kernel import templates as t
from graphctx.kernel.dispatch import Handler, TemplateDispatch
from graphctx.kernel.ports import Capabilities
from graphctx.scope import Scope

from . import entities, facts, scopes, traversal
from .binding import Binder
from .connection import GremlinConnection
from .context import Ctx
from .dialect import ConnectionConfig, GremlinDialect

S = TypeVar("S", bound="GremlinGraphStore")

# (context, scope, params, now) -> result
_Impl = Callable[[Ctx, Scope, Any, datetime], BaseModel]

_IMPLS: dict[str, _Impl] = {
    t.ENTITY_UPSERT.name: lambda c, s, p, now: entities.upsert(c, s, p.entities, now),
    t.ENTITY_GET.name: lambda c, s, p, now: t.EntityList(entities=tuple(entities.get_by_ids(c, s, p.ids))),
    t.ENTITY_NAMES.name: lambda c, s, p, now: entities.names(c, s, p.ids),
    t.ENTITY_FIND_EXACT.name: lambda c, s, p, now: entities.find_exact(c, s, p),
    t.ENTITY_DELETE.name: lambda c, s, p, now: entities.delete(c, s, p.ids),
    t.ENTITY_HASHES.name: lambda c, s, p, now: entities.hashes(c, s, p),
    t.FACT_UPSERT.name: lambda c, s, p, now: facts.upsert(c, s, p.facts, now),
    t.FACT_INVALIDATE.name: facts.invalidate,
    t.FACTS_FROM_ROOTS.name: facts.from_roots,
    t.NEIGHBOURHOOD.name: traversal.neighbourhood,
    t.SHORTEST_PATH.name: traversal.shortest_path,
    t.SCOPE_STATS.name: lambda c, s, p, now: scopes.stats(c, s, now),
    t.SCOPE_CLEAR.name: lambda c, s, p, now: scopes.clear(c, s),
}


class GremlinGraphStore(TemplateDispatch):
    """GraphStore over a Gremlin Server. Thread-safe (the driver pools connections).

    `round_trips` counts requests sent (benchmarks and tests read it). `clock` gives "now" for
    stamps and for validity without as_of.
    """

    def __init__(
        self,
        config: ConnectionConfig,
        *,
        dialect: GremlinDialect | None = None,
        clock: Clock = utc_now,
    ) -> None:
        self.dialect = dialect or GremlinDialect()
        self.name = self.dialect.name
        self.config = config
        self.max_request_bytes = config.max_request_bytes
        # a source with no remote: it only builds bytecode, which the connection submits
        self.g = GraphTraversalSource(Graph(), TraversalStrategies())
        self._clock = clock
        self._conn = GremlinConnection(config, self.dialect)
        self._count_lock = threading.Lock()
        self.round_trips = 0

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(templates=self.supported_templates(), durable=True, concurrent_readers=True)

    def ensure_schema(self) -> None:
        self.dialect.ensure_schema(self)

    def ping(self) -> None:
        """One trivial request: BackendUnavailable (naming the URL) when the server cannot be used."""
        b = Binder()
        self.read(self.g.inject(0), b, "ping")

    def close(self) -> None:
        self._conn.close()

    def run(self, template: t.Template[Any, Any], scope: Scope, params: Any) -> Any:
        if self._conn.closed:
            raise BackendUnavailable(f"{self.name} graph store for {self.config.url} is closed")
        return super().run(template, scope, params)

    def handlers(self) -> Mapping[str, Handler]:
        return {name: self._bind(impl) for name, impl in _IMPLS.items()}

    def _bind(self, impl: _Impl) -> Handler:
        return lambda scope, params: impl(self, scope, params, self._clock())

    # ---- Ctx --------------------------------------------------------------------------------

    def read(self, traversal: GraphTraversal, b: Binder, what: str) -> list[Any]:
        return self.submit(traversal, b, what, idempotent=True)

    def write(self, traversal: GraphTraversal, b: Binder, what: str, *, idempotent: bool) -> list[Any]:
        return self.submit(traversal, b, what, idempotent=idempotent)

    def submit(self, traversal: GraphTraversal, b: Binder, what: str, *, idempotent: bool) -> list[Any]:
        """One request (one round trip, plus retries for idempotent ones)."""
        with self._count_lock:
            self.round_trips += 1
        return self._conn.submit(b.finish(traversal).bytecode, idempotent=idempotent, what=what)


def opened(store: S, *, deadline_s: float, bootstrap_s: float) -> S:
    """`store`, checked before anyone uses it: the server answers within `deadline_s` (a silent one
    fails here, not on the first recall), then the schema bootstrap, a write, within `bootstrap_s`.
    A failure closes the store and names it (a tenant sees the store, never its URL)."""
    try:
        with deadlines.within(deadline_s):
            store.ping()
        with deadlines.within(bootstrap_s):
            store.ensure_schema()
    except BaseException as exc:
        store.close()
        if isinstance(exc, BackendError | DeadlineExceeded):
            exc.details.setdefault("store", "graph")
            exc.details.setdefault("backend", store.name)
        raise
    return store
