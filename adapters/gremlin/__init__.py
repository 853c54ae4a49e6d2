"""Graph store over any TinkerPop Gremlin Server: the template catalogue as parameter-bound bytecode.

The translations are shared: `graphctx.adapters.hugegraph` runs the same `GremlinGraphStore` with its
own `GremlinDialect` (ids, times, serializer, schema).
"""

from __future__ import annotations

from graphctx import deadlines
from graphctx.settings import Settings

from . import keys
from .binding import Binder
from .connection import GremlinConnection, ServerError, TimedTransport
from .dialect import ConnectionConfig, GremlinDialect
from .settings import GremlinSettings
from .store import GremlinGraphStore

__all__ = [
    "Binder",
    "ConnectionConfig",
    "GremlinConnection",
    "GremlinDialect",
    "GremlinGraphStore",
    "GremlinSettings",
    "ServerError",
    "TimedTransport",
    "create_graph_store",
    "keys",
]


def create_graph_store(settings: Settings) -> GremlinGraphStore:
    """Entry point `graphctx.graph_stores: gremlin`: GRAPHCTX_GREMLIN_* settings (or the [gremlin]
    table of a graphctx.toml), server reached, schema ensured.
    From the core `settings` it takes the operation deadline, the default bound on one answer."""
    store = GremlinGraphStore(GremlinSettings.load(settings).connection(deadline_s=settings.deadline_s))
    try:
        with deadlines.within(settings.deadline_s):  # a silent server too, within the deadline
            store.ping()  # a wrong URL or a down server fails here, clearly, not on the first recall
        store.ensure_schema()
    except BaseException:
        store.close()
        raise
    return store
