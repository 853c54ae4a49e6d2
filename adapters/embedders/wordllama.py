"""The default offline embedder: WordLlama l2_supercat, 256-d, from the files inside the wordllama wheel.

The wordllama wheel ships the 256-d weights (`wordllama/weights/l2_supercat_256.safetensors`) and the
Llama-2 BPE tokenizer (`wordllama/tokenizers/l2_supercat_tokenizer_config.json`). Its own loader looks
for the tokenizer under `wordllama/tokenizer/` (singular), misses it and then either downloads from the
Hugging Face hub or, with `disable_download=True`, fails. It also calls `logging.basicConfig(INFO)` on
import. So this adapter never imports the `wordllama` package: it finds the installed package directory,
maps the shipped weights (float16, read-only, shared by every process through the page cache), reads
the tokenizer with `tokenizers` (wordllama's own dependency) and does the same computation as
`WordLlamaInference.embed(norm=True)` — mean of the token embeddings (no special tokens), L2-normalised
— without padding, so one long text does not inflate a whole batch. Nothing here can reach the
network: a missing file is a `ConfigError`.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from graphctx.errors import ConfigError

from ._base import Lazy, checked_output, checked_texts, empty_matrix

CONFIG = "l2_supercat"
DIMENSION = 256
WEIGHTS_FILE = Path("weights") / f"{CONFIG}_{DIMENSION}.safetensors"
TOKENIZER_FILE = Path("tokenizers") / f"{CONFIG}_tokenizer_config.json"
TENSOR_KEY = "embedding.weight"

_BATCH_TEXTS = 256
"""Texts tokenised per call."""
_GATHER_TOKENS = 1 << 16
"""A text longer than this many tokens is summed in pieces of this many rows."""
_POOL_TOKENS = 1 << 10
"""Token rows of several texts gathered at once (1,024 x 256 float32 = 1 MiB, which stays in cache
while numpy sums it column by column: 2x faster than 64 MiB at a time). Each text's sum is the same
whatever texts share its gather (np.add.reduceat sums each segment on its own)."""

_BULK_TOKENS = 1 << 14
"""A batch of more tokens than this is summed from a float32 copy of the whole matrix, made once
(12 ms, 32 MiB): converting each gathered float16 row costs a bulk run (indexing) 18 % more. Queries
keep to the mapped float16 rows."""

_INSTALL_HINT = "install it with `pip install 'wordllama>=0.4,<0.5'` (a default dependency of graphctx)"


def package_dir() -> Path:
    """The installed wordllama package directory, found without importing the package."""
    try:
        spec = importlib.util.find_spec("wordllama")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(f"the wordllama package is not installed; {_INSTALL_HINT}")
    return Path(next(iter(spec.submodule_search_locations)))


def package_version() -> str:
    try:
        return importlib.metadata.version("wordllama")
    except importlib.metadata.PackageNotFoundError as exc:
        raise ConfigError(f"the wordllama package is not installed; {_INSTALL_HINT}") from exc


@dataclass(frozen=True)
class _Model:
    embedding: NDArray[np.floating]  # (vocab, DIMENSION), float16 as shipped, mapped read-only
    tokenizer: Any  # tokenizers.Tokenizer


_DTYPES = {"F16": "<f2", "F32": "<f4"}
_MAX_HEADER = 1 << 20


def _mapped(path: Path, key: str) -> NDArray[np.floating]:
    """One tensor of a safetensors file, mapped read-only instead of read and converted: processes
    share its pages (16 MiB of float16 once, not 32 MiB of float32 per process) and a query touches a
    few rows of it. The format: an 8-byte little-endian header size, a JSON header giving each
    tensor's dtype, shape and byte range after the header, then the tensors' bytes."""
    with path.open("rb") as fh:
        size = int.from_bytes(fh.read(8), "little")
        if not 0 < size <= _MAX_HEADER:
            raise ValueError(f"a safetensors header of {size} bytes")
        header = json.loads(fh.read(size))
    info = header[key]
    dtype = np.dtype(_DTYPES[info["dtype"]])
    shape = tuple(int(n) for n in info["shape"])
    begin, end = (int(n) for n in info["data_offsets"])
    if len(shape) != 2 or end - begin != shape[0] * shape[1] * dtype.itemsize:
        raise ValueError(f"tensor {key!r}: shape {shape} does not match its {end - begin} bytes")
    return np.memmap(path, dtype=dtype, mode="r", offset=8 + size + begin, shape=shape)


def _load(root: Path) -> _Model:
    weights, tokenizer_file = root / WEIGHTS_FILE, root / TOKENIZER_FILE
    missing = [str(p) for p in (weights, tokenizer_file) if not p.is_file()]
    if missing:
        raise ConfigError(
            f"the installed wordllama wheel lacks its bundled model files {missing}; reinstall it "
            f"({_INSTALL_HINT}); graphctx never downloads a model"
        )
    try:
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise ConfigError(f"wordllama's dependencies are missing ({exc}); {_INSTALL_HINT}") from exc
    try:
        embedding = _mapped(weights, TENSOR_KEY)
        tokenizer = Tokenizer.from_file(str(tokenizer_file))
    except Exception as exc:  # a corrupt file is a broken installation, not a crash
        raise ConfigError(f"cannot read the wordllama model files in {root}: {exc}") from exc
    if embedding.shape[1] != DIMENSION:
        raise ConfigError(f"wordllama weights have shape {embedding.shape}, expected (vocab, {DIMENSION})")
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return _Model(embedding, tokenizer)


class WordLlamaEmbedder:
    """WordLlama l2_supercat 256-d static embeddings: fast (< 1 ms a query), small, no torch.

    The model is read from the installed wheel on first use, once, under a lock."""

    dimension: int = DIMENSION
    similarity_floor: float = 0.30
    """Measured (docs/results.md, embedders): unrelated queries' best cosine is 0.19 at the median and
    0.32 at p99; relevant top-10 hits score 0.34 at p1, 0.40 at p5. 0.30 keeps 99.9% of relevant hits
    and leaves 98% of unrelated queries with no dense hit."""

    def __init__(self, root: Path | None = None) -> None:
        self._root = root
        self.model_id = f"wordllama-{CONFIG.replace('_', '-')}-{DIMENSION}@{package_version()}"
        self._model = Lazy(lambda: _load(self._root or package_dir()))
        self._bulk = Lazy(lambda: _float32(self._model.get().embedding))

    def __repr__(self) -> str:
        return f"WordLlamaEmbedder(model_id={self.model_id!r})"

    def load(self) -> None:
        """Load the model now instead of on the first embed() (for start-up checks and timing)."""
        self._model.get()

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        items = checked_texts(texts)
        if not items:
            return empty_matrix(self.dimension)
        model = self._model.get()
        out = np.empty((len(items), self.dimension), dtype=np.float32)
        for start in range(0, len(items), _BATCH_TEXTS):
            chunk = items[start : start + _BATCH_TEXTS]
            # the ids only: without the offsets encode_batch also computes, a third less CPU
            encodings = model.tokenizer.encode_batch_fast(chunk, add_special_tokens=False)
            ids = [np.asarray(enc.ids, dtype=np.int64) for enc in encodings]
            bulk = self._bulk.loaded or sum(map(len, ids)) > _BULK_TOKENS
            out[start : start + len(chunk)] = _sum_pool(self._bulk.get() if bulk else model.embedding, ids)
        return checked_output(out, len(items), self.dimension)


def _float32(matrix: NDArray[np.floating]) -> NDArray[np.float32]:
    converted = np.ascontiguousarray(matrix, dtype=np.float32)
    converted.setflags(write=False)
    return converted


def _sum_pool(embedding: NDArray[np.floating], ids: list[NDArray[np.int64]]) -> NDArray[np.float32]:
    """Sum of each text's token rows (normalised later, so equal in direction to the mean), each row
    made float32 before it is summed: the same sums as converting the whole matrix first."""
    vocab = embedding.shape[0]
    out = np.zeros((len(ids), embedding.shape[1]), dtype=np.float32)
    group = min(_POOL_TOKENS, _GATHER_TOKENS)  # so a group over _GATHER_TOKENS is one text
    start = 0
    while start < len(ids):
        end, tokens = start, 0
        while end < len(ids) and (end == start or tokens + len(ids[end]) <= group):
            tokens += len(ids[end])
            end += 1
        if tokens > _GATHER_TOKENS:  # one very long text: sum it piece by piece
            row = ids[start]
            for piece in range(0, len(row), _GATHER_TOKENS):
                part = np.clip(row[piece : piece + _GATHER_TOKENS], 0, vocab - 1)
                out[start] += embedding[part].astype(np.float32, copy=False).sum(axis=0, dtype=np.float32)
        elif tokens:
            lengths = np.array([len(row) for row in ids[start:end]])
            flat = np.clip(np.concatenate(ids[start:end]), 0, vocab - 1)
            nonempty = np.flatnonzero(lengths)
            offsets = np.concatenate(([0], np.cumsum(lengths)[:-1]))[nonempty]
            rows = embedding[flat].astype(np.float32, copy=False)
            out[start + nonempty] = np.add.reduceat(rows, offsets, axis=0, dtype=np.float32)
        start = end
    return out


class Llama2TokenCounter:
    """Counts tokens with the Llama-2 BPE tokenizer shipped inside the wordllama wheel (a default
    dependency, so nothing is downloaded): `GRAPHCTX_TOKEN_COUNTER=llama2` (graphctx.tokens)."""

    def __init__(self, root: Path | None = None) -> None:
        self.name = f"llama-2@wordllama-{package_version()}"
        self._root = root
        self._tokenizer = Lazy(self._load)

    def _load(self) -> Any:
        path = (self._root or package_dir()) / TOKENIZER_FILE
        if not path.is_file():
            raise ConfigError(f"the wordllama wheel lacks its tokenizer {path}; {_INSTALL_HINT}")
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(path))
        tokenizer.no_padding()
        tokenizer.no_truncation()
        return tokenizer

    def count(self, text: str) -> int:
        return len(self._tokenizer.get().encode(text, add_special_tokens=False).ids)
