"""Exact dense search in numpy: one memory-mapped float32 matrix per scope, one writer, readers in
any number of processes (the embedded default vector index; see `graphctx.adapters.flat.index`)."""

from __future__ import annotations

from graphctx.datadir import ensure_dir
from graphctx.settings import Settings

from .index import FlatVectorIndex
from .settings import FlatSettings

__all__ = ["FlatSettings", "FlatVectorIndex", "create_flat_index"]

DIRECTORY = "vectors-flat"


def create_flat_index(settings: Settings, model_id: str, dimension: int) -> FlatVectorIndex:
    """Entry point `graphctx.vector_indexes: flat`: `<data_dir>/vectors-flat/<model>-<dim>/`, with
    the GRAPHCTX_FLAT_* settings. Read-only opens create nothing and read beside a writing process."""
    own = FlatSettings.load(settings)
    path = settings.data_dir / DIRECTORY
    if not settings.read_only:
        ensure_dir(path)
    return FlatVectorIndex(
        path,
        model_id,
        dimension,
        read_only=settings.read_only,
        max_open_scopes=own.max_open_scopes,
        codes_min_rows=own.codes_min_rows,
    )
