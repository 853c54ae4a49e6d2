"""`graphctx config`: every effective setting, its value and where it came from.

Imported at the end of graphctx.cli, whose app this command joins."""

import json
import sys
from typing import Any

import typer

from graphctx.cli import JsonFlag, _fail, app, dumps, out
from graphctx.errors import GraphctxError


def _shown(value: Any) -> Any:
    from pydantic import SecretStr

    if isinstance(value, SecretStr):
        return "**********" if value.get_secret_value() else ""
    if isinstance(value, list | dict | str | int | float | bool) or value is None:
        return value
    return str(value)


def _sections(settings: Any) -> tuple[dict[str, dict[str, dict[str, Any]]], dict[str, str]]:
    """Each installed adapter's settings (value, source, variable), and the sections whose adapter
    cannot be imported (its extra is not installed) with the reason."""
    from graphctx.settings import section_classes, section_sources

    shown: dict[str, dict[str, dict[str, Any]]] = {}
    missing: dict[str, str] = {}
    for name, cls in section_classes().items():
        if isinstance(cls, ImportError):
            missing[name] = f"needs {cls.name or 'a package'} (pip install 'graphctx[{name}]')"
            continue
        values = cls.load(settings)
        origin = section_sources(cls, settings.data_dir)
        shown[name] = {
            field: {
                "value": _shown(getattr(values, field)),
                "source": origin[field],
                "env": cls.env_name(field),
            }
            for field in cls.model_fields
        }
    return shown, missing


@app.command()
def config(ctx: typer.Context, as_json: JsonFlag = False) -> None:
    """Every effective setting and where it came from: a flag, GRAPHCTX_* in the environment, a
    graphctx.toml (in the data directory, then $XDG_CONFIG_HOME/graphctx), or the default; the
    adapters' settings ([gremlin], [hugegraph] tables) too."""
    from rich.table import Table

    from graphctx.locations import ENV_PREFIX, user_config_file
    from graphctx.settings import Settings, config_paths, sources

    try:
        settings = ctx.obj.settings()
        origin = sources(ctx.obj.overrides)
        files = [str(path) for path in config_paths(ctx.obj.overrides)]
        sections, missing = _sections(settings)
    except GraphctxError as exc:
        _fail(exc, as_json)
    rows = {
        name: {
            "value": _shown(getattr(settings, name)),
            "source": origin[name],
            "env": f"{ENV_PREFIX}{name.upper()}",
        }
        for name in Settings.model_fields
    }
    candidates = [str(settings.data_dir / "graphctx.toml"), str(user_config_file())]
    if as_json:
        found = {"settings": rows, "sections": sections, "sections_unavailable": missing}
        sys.stdout.write(dumps({**found, "files": files, "searched": candidates}) + "\n")
        return
    table = Table(title="effective settings", title_justify="left")
    for column in ("setting", "value", "source"):
        table.add_column(column, overflow="fold")  # a path is shown whole, folded if need be
    named = {
        **rows,
        **{
            f"{section}.{field}": row for section, fields in sections.items() for field, row in fields.items()
        },
    }
    for name, row in named.items():
        source = row["source"].replace("override", "flag")
        value = row["value"] if isinstance(row["value"], str) else json.dumps(row["value"])
        table.add_row(name, value, source, style=None if source == "default" else "bold")
    out.print(table, markup=False, highlight=False)
    for section, reason in missing.items():
        out.print(f"[{section}] settings not shown: the adapter {reason}", markup=False, highlight=False)
    for path in candidates:
        state = "read" if path in files else "absent"
        out.print(f"config file {path}: {state}", markup=False, highlight=False)
    out.print(
        f"Each setting NAME is also {ENV_PREFIX}NAME in the environment (lists and maps as JSON) and "
        "`name = ...` in a graphctx.toml; SECTION.NAME is "
        f"{ENV_PREFIX}SECTION_NAME and `name = ...` under [section].",
        markup=False,
        highlight=False,
    )
