"""Graph store over any TinkerPop Gremlin Server: the template catalogue as parameter-bound bytecode.

The translations are shared: `graphctx.adapters.hugegraph` runs the same `GremlinGraphStore` with its
own `GremlinDialect` (ids, times, serializer, schema).
"""

from __future__ import annotations

from graphctx.settings import Settings

from . import batch, keys
from .binding import Binder
from .connection import GremlinConnection, ServerError, TimedTransport
from .dialect import ConnectionConfig, GremlinDialect
from .settings import GremlinSettings
from .store import GremlinGraphStore, opened

__all__ = [
    "Binder",
    "ConnectionConfig",
    "GremlinConnection",
    "GremlinDialect",
    "GremlinGraphStore",
    "GremlinSettings",
    "ServerError",
    "TimedTransport",
    "batch",
    "create_graph_store",
    "keys",
    "opened",
]


def create_graph_store(settings: Settings) -> GremlinGraphStore:
    """Entry point `graphctx.graph_stores: gremlin`: GRAPHCTX_GREMLIN_* settings (or the [gremlin]
    table of a graphctx.toml), server reached within the operation deadline, schema ensured.
    From the core `settings` it takes the operation deadline, the default bound on one answer."""
    store = GremlinGraphStore(GremlinSettings.load(settings).connection(deadline_s=settings.deadline_s))
    return opened(store, deadline_s=settings.deadline_s, bootstrap_s=settings.write_deadline_s)
