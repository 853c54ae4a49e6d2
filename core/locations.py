"""Where graphctx looks for its files, without importing pydantic: the default data directory and the
user's config file (graphctx.settings builds on these; a CLI read through a running `serve` needs
them before, and often instead of, the settings)."""

from __future__ import annotations

import os
from pathlib import Path

ENV_PREFIX = "GRAPHCTX_"
CONFIG_FILE = "graphctx.toml"
PRIVATE_UMASK = 0o077
"""The CLI's umask: files it creates are 0600 and directories 0700, whatever the caller's umask."""


def default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "graphctx"


def user_config_file() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "graphctx" / CONFIG_FILE
