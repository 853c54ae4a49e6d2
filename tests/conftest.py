"""Shared fixtures: services on the real embedded stores in a temporary data directory."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from graphctx.scope import Scope
from graphctx.service import ContextService
from graphctx.settings import Settings

_CONFIG_HOME = "TESTS_GRAPHCTX_CONFIG_HOME"

# no test reads the developer's own ~/.config/graphctx/graphctx.toml: one empty directory for the
# run, made by the first process that imports this (xdist workers and test subprocesses, some of
# them killed with SIGKILL, inherit it) and removed when that process ends
if _CONFIG_HOME not in os.environ:
    os.environ[_CONFIG_HOME] = tempfile.mkdtemp(prefix="graphctx-test-config-")
    atexit.register(shutil.rmtree, os.environ[_CONFIG_HOME], ignore_errors=True)
os.environ["XDG_CONFIG_HOME"] = os.environ[_CONFIG_HOME]

FIXED_NOW = datetime(2025, 11, 29, 12, 0, tzinfo=UTC)
TENANT_A = Scope("tenant-a", "default")
TENANT_B = Scope("tenant-b", "default")


def fixed_clock() -> datetime:
    return FIXED_NOW


def make_settings(data_dir: Path, **overrides: object) -> Settings:
    """Embedded stores with the hashing embedder (fast, deterministic) unless overridden."""
    return Settings(data_dir=data_dir, embedder="hashing", **overrides)  # type: ignore[arg-type]


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return make_settings(tmp_path / "data")


@pytest.fixture
def service(settings: Settings) -> Iterator[ContextService]:
    with ContextService.open(settings, clock=fixed_clock) as svc:
        yield svc
