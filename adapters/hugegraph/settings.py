"""Connection settings of the HugeGraph adapter: GRAPHCTX_HUGEGRAPH_* variables, or a [hugegraph] table
in graphctx.toml."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field, SecretStr
from pydantic_settings import SettingsConfigDict

from graphctx.settings import SectionSettings


class HugeGraphSettings(SectionSettings):
    """Every field can be set as GRAPHCTX_HUGEGRAPH_<FIELD> (for example GRAPHCTX_HUGEGRAPH_URL) or as
    `<field> = ...` in the [hugegraph] table of a graphctx.toml."""

    section: ClassVar[str] = "hugegraph"
    model_config = SettingsConfigDict(env_prefix="GRAPHCTX_HUGEGRAPH_", extra="ignore")

    url: str = Field(default="http://127.0.0.1:8080", description="REST endpoint (schema API, tasks).")
    gremlin_url: str = Field(
        default="ws://127.0.0.1:8182/gremlin", description="Gremlin websocket endpoint (traversals)."
    )
    graph: str = Field(default="hugegraph", pattern=r"^[A-Za-z][A-Za-z0-9_]{0,47}$")
    graphspace: str = Field(
        default="",
        pattern=r"^([A-Za-z][A-Za-z0-9_]{0,47})?$",
        description="HugeGraph 1.7 graphspace (e.g. DEFAULT); empty for 1.5 servers.",
    )
    username: str = ""
    password: SecretStr = SecretStr("")
    connect_timeout_s: float = Field(default=3.0, gt=0, le=60)
    read_timeout_s: float = Field(default=30.0, gt=0, le=600, description="REST and Gremlin answers.")
    schema_task_timeout_s: float = Field(
        default=120.0, gt=0, le=3600, description="How long to wait for an index label to be built."
    )
    pool_size: int = Field(default=4, ge=1, le=64, description="Gremlin websocket connections.")
    retries: int = Field(default=2, ge=0, le=10, description="Retries of a read when the server drops.")
    max_request_kib: int = Field(
        default=48,
        ge=16,
        le=65536,
        description="Budget of one Gremlin request; batches are split under it. HugeGraph's stock "
        "gremlin-server.yaml accepts 64 KiB (maxContentLength); raise both together.",
    )

    @property
    def traversal_source(self) -> str:
        """The traversal source HugeGraph registers for the graph (ContextGremlinServer, prefix __g_)."""
        return f"__g_{self.graphspace}-{self.graph}" if self.graphspace else f"__g_{self.graph}"

    @property
    def graph_path(self) -> str:
        """REST path prefix of the graph: /graphspaces/<gs>/graphs/<g> on 1.7, /graphs/<g> on 1.5."""
        base = self.url.rstrip("/")
        if self.graphspace:
            return f"{base}/graphspaces/{self.graphspace}/graphs/{self.graph}"
        return f"{base}/graphs/{self.graph}"
