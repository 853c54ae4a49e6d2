"""Graph store over Apache HugeGraph: the Gremlin translations plus HugeGraph schema, ids and auth."""

from __future__ import annotations

from graphctx.adapters.gremlin import opened
from graphctx.settings import Settings

from .dialect import HugeGraphDialect
from .rest import RestClient
from .settings import HugeGraphSettings
from .store import HugeGraphStore

__all__ = ["HugeGraphDialect", "HugeGraphSettings", "HugeGraphStore", "RestClient", "create_graph_store"]


def create_graph_store(settings: Settings) -> HugeGraphStore:
    """Entry point `graphctx.graph_stores: hugegraph`: GRAPHCTX_HUGEGRAPH_* settings (or the
    [hugegraph] table of a graphctx.toml), both endpoints reached within the operation deadline,
    schema ensured within the larger of the write deadline and the schema task timeout (a fresh
    graph's index builds are asynchronous tasks).

    The core Settings carry nothing HugeGraph-specific; their data directory names the config file."""
    own = HugeGraphSettings.load(settings)
    bootstrap_s = max(settings.write_deadline_s, own.schema_task_timeout_s)
    return opened(HugeGraphStore(own), deadline_s=settings.deadline_s, bootstrap_s=bootstrap_s)
