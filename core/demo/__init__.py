"""The bundled sample memory used by `graphctx demo`: a small engineering organisation."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def sample_path() -> Path:
    return Path(str(files("graphctx.demo").joinpath("sample_memory.jsonl")))
