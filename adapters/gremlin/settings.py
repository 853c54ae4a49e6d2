"""Settings of the generic Gremlin adapter: GRAPHCTX_GREMLIN_* variables, or a [gremlin] table in
graphctx.toml."""

from __future__ import annotations

from typing import Any, ClassVar, Protocol

from pydantic import Field, SecretStr
from pydantic_settings import SettingsConfigDict

from graphctx.settings import SectionSettings

from .dialect import ConnectionConfig


class PoolFields(Protocol):
    """What every Gremlin-speaking adapter's settings name alike (HugeGraph's too)."""

    @property
    def traversal_source(self) -> str: ...

    username: str
    password: SecretStr
    pool_size: int
    connect_timeout_s: float
    retries: int
    max_request_kib: int


def connection_config(
    settings: PoolFields, *, url: str, read_timeout_s: float, **more: Any
) -> ConnectionConfig:
    """The connection pool those settings describe; `more` sets the ConnectionConfig fields an
    adapter names differently or not at all (backoff_s, transport_factory)."""
    return ConnectionConfig(
        url=url,
        traversal_source=settings.traversal_source,
        username=settings.username,
        password=settings.password.get_secret_value(),
        pool_size=settings.pool_size,
        connect_timeout_s=settings.connect_timeout_s,
        read_timeout_s=read_timeout_s,
        retries=settings.retries,
        max_request_bytes=settings.max_request_kib * 1024,
        **more,
    )


class GremlinSettings(SectionSettings):
    """Every field can be set as GRAPHCTX_GREMLIN_<FIELD> (for example GRAPHCTX_GREMLIN_URL) or as
    `<field> = ...` in the [gremlin] table of a graphctx.toml."""

    section: ClassVar[str] = "gremlin"
    model_config = SettingsConfigDict(env_prefix="GRAPHCTX_GREMLIN_", extra="ignore")

    url: str = Field(default="ws://127.0.0.1:8182/gremlin", description="Gremlin Server websocket URL.")
    traversal_source: str = Field(default="g", description="Server-side traversal source alias.")
    username: str = Field(default="", description="Basic/SASL user name (empty: no auth).")
    password: SecretStr = Field(default=SecretStr(""), description="Password for `username`.")
    pool_size: int = Field(default=4, ge=1, le=64, description="Websocket connections in the pool.")
    connect_timeout_s: float = Field(default=5.0, gt=0, le=120, description="Connect + handshake bound.")
    read_timeout_s: float | None = Field(
        default=None, gt=0, le=600, description="Bound on one answer; default: the operation deadline."
    )
    retries: int = Field(default=2, ge=0, le=10, description="Retries of idempotent requests.")
    backoff_s: float = Field(default=0.2, ge=0, le=30, description="First pause between retries.")
    max_request_kib: int = Field(
        default=48,
        ge=8,
        le=65536,
        description="Budget of one request; batches are chunked (a stock server takes 64 KiB).",
    )

    def connection(self, deadline_s: float = 10.0) -> ConnectionConfig:
        """`deadline_s` (the core Settings' operation deadline) bounds a read when
        `read_timeout_s` is unset: no single request may outlive the operation it serves."""
        return connection_config(
            self, url=self.url, read_timeout_s=self.read_timeout_s or deadline_s, backoff_s=self.backoff_s
        )
