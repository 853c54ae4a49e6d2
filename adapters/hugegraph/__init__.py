"""Graph store over Apache HugeGraph: the Gremlin translations plus HugeGraph schema, ids and auth."""

from __future__ import annotations

from graphctx.settings import Settings

from .dialect import HugeGraphDialect
from .rest import RestClient
from .settings import HugeGraphSettings
from .store import HugeGraphStore

__all__ = ["HugeGraphDialect", "HugeGraphSettings", "HugeGraphStore", "RestClient", "create_graph_store"]


def create_graph_store(settings: Settings) -> HugeGraphStore:
    """Entry point `graphctx.graph_stores: hugegraph`: GRAPHCTX_HUGEGRAPH_* settings (or the
    [hugegraph] table of a graphctx.toml), schema ensured.

    The core Settings carry nothing HugeGraph-specific; their data directory names the config file."""
    store = HugeGraphStore(HugeGraphSettings.load(settings))
    try:
        store.ensure_schema()
    except BaseException:
        store.close()
        raise
    return store
