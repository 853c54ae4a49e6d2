"""Settings of the flat vector index: GRAPHCTX_FLAT_* variables, or a [flat] table in graphctx.toml."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field
from pydantic_settings import SettingsConfigDict

from graphctx.settings import SectionSettings


class FlatSettings(SectionSettings):
    """Every field can be set as GRAPHCTX_FLAT_<FIELD> (GRAPHCTX_FLAT_MAX_OPEN_SCOPES) or as
    `<field> = ...` in the [flat] table of a graphctx.toml."""

    section: ClassVar[str] = "flat"
    model_config = SettingsConfigDict(env_prefix="GRAPHCTX_FLAT_", extra="ignore")

    max_open_scopes: int = Field(
        default=256,
        ge=1,
        le=1_000_000,
        description="Scopes whose shard (id table and mapped matrix) stays open in a process; the least "
        "recently used one beyond this is made durable and closed (reopened from disk when next used).",
    )
    codes_min_rows: int = Field(
        default=8192,
        ge=0,
        le=1_000_000_000,
        description="Scopes with at least this many vectors, once searched twice in a process, get "
        "int8 codes in that process's memory (about a quarter of the float32 matrix) that prune the "
        "exact search: the same results, a fraction of the memory traffic. 0 turns them off.",
    )
