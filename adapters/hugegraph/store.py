"""Opening a HugeGraph graph store from settings: one REST client, one Gremlin connection pool."""

from __future__ import annotations

from typing import Any

from graphctx.adapters.gremlin import GremlinGraphStore
from graphctx.adapters.gremlin.settings import connection_config
from graphctx.clock import Clock, utc_now

from .dialect import HugeGraphDialect
from .rest import RestClient
from .settings import HugeGraphSettings


class HugeGraphStore(GremlinGraphStore):
    """The shared Gremlin translations over HugeGraph's Gremlin endpoint, with the HugeGraph dialect;
    `rest` is the REST client the schema bootstrap uses (closed with the store)."""

    def __init__(
        self, settings: HugeGraphSettings, *, clock: Clock = utc_now, transport_factory: Any = None
    ) -> None:
        self.settings = settings
        self.rest = RestClient(settings)
        dialect = HugeGraphDialect(self.rest, schema_task_timeout_s=settings.schema_task_timeout_s)
        pool = connection_config(
            settings,
            url=settings.gremlin_url,
            read_timeout_s=settings.read_timeout_s,
            transport_factory=transport_factory,
        )
        super().__init__(pool, dialect=dialect, clock=clock)

    def ping(self) -> None:
        """The REST endpoint (the graph's own path), then the Gremlin endpoint: each answers or fails
        typed, within the operation's deadline."""
        self.rest.get("")
        super().ping()

    def close(self) -> None:
        super().close()
        self.rest.close()
