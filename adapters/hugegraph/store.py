"""Opening a HugeGraph graph store from settings: one REST client, one Gremlin connection pool."""

from __future__ import annotations

from typing import Any

from graphctx.adapters.gremlin import ConnectionConfig, GremlinGraphStore
from graphctx.clock import Clock, utc_now

from .dialect import HugeGraphDialect
from .rest import RestClient
from .settings import HugeGraphSettings


def connection_config(settings: HugeGraphSettings, *, transport_factory: Any = None) -> ConnectionConfig:
    return ConnectionConfig(
        url=settings.gremlin_url,
        traversal_source=settings.traversal_source,
        username=settings.username,
        password=settings.password.get_secret_value(),
        pool_size=settings.pool_size,
        connect_timeout_s=settings.connect_timeout_s,
        read_timeout_s=settings.read_timeout_s,
        retries=settings.retries,
        max_request_bytes=settings.max_request_kib * 1024,
        transport_factory=transport_factory,
    )


class HugeGraphStore(GremlinGraphStore):
    """The shared Gremlin translations over HugeGraph's Gremlin endpoint, with the HugeGraph dialect;
    `rest` is the REST client the schema bootstrap uses (closed with the store)."""

    def __init__(
        self, settings: HugeGraphSettings, *, clock: Clock = utc_now, transport_factory: Any = None
    ) -> None:
        self.settings = settings
        self.rest = RestClient(settings)
        dialect = HugeGraphDialect(self.rest, schema_task_timeout_s=settings.schema_task_timeout_s)
        super().__init__(
            connection_config(settings, transport_factory=transport_factory), dialect=dialect, clock=clock
        )

    def close(self) -> None:
        super().close()
        self.rest.close()
