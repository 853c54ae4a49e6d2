"""Qdrant vector indexes: `EdgeVectorIndex` (the engine in-process, the default) and
`ClientVectorIndex` (a Qdrant server, or qdrant-client's local mode as a test stand-in).

The factories are the `graphctx.vector_indexes` entry points.
"""

from __future__ import annotations

import math

from graphctx.datadir import ensure_dir, writer_pid
from graphctx.errors import ConfigError
from graphctx.settings import Settings

from .client import ClientVectorIndex
from .edge import EdgeVectorIndex

__all__ = [
    "ClientVectorIndex",
    "EdgeVectorIndex",
    "create_edge_index",
    "create_local_index",
    "create_server_index",
]


def create_edge_index(settings: Settings, model_id: str, dimension: int) -> EdgeVectorIndex:
    if settings.read_only:

        def held_by() -> str:
            pid = writer_pid(settings.data_dir)
            return f"pid {pid}" if pid is not None else ""

        return EdgeVectorIndex(
            settings.data_dir / "vectors", model_id, dimension, read_only=True, held_by=held_by
        )
    return EdgeVectorIndex(ensure_dir(settings.data_dir / "vectors"), model_id, dimension)


def create_local_index(settings: Settings, model_id: str, dimension: int) -> ClientVectorIndex:
    return ClientVectorIndex(settings.data_dir / "vectors-local", model_id, dimension)


def create_server_index(settings: Settings, model_id: str, dimension: int) -> ClientVectorIndex:
    if not settings.qdrant_url:
        raise ConfigError(
            "vector_backend 'qdrant-server' needs the server URL: set GRAPHCTX_QDRANT_URL "
            "(for example http://localhost:6333)"
        )
    key = settings.qdrant_api_key.get_secret_value() if settings.qdrant_api_key else None
    # the client's timeout is whole seconds; the operation deadline bounds it
    timeout = max(1, math.ceil(settings.deadline_s))
    return ClientVectorIndex(settings.qdrant_url, model_id, dimension, api_key=key, timeout=timeout)
