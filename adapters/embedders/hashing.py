"""A model-free embedder: deterministic feature hashing of identifier-aware tokens.

For tests and as a last-resort fallback when no model is installed. It knows no synonyms: it matches
shared words, identifier parts (`parseHttpRequest` → parse, http, request) and, weakly, shared character
trigrams (so `tokenize` and `tokenizer` are close). Stable across processes and platforms (blake2b, not
`hash()`), so its vectors can be stored; `ALGORITHM_VERSION` is part of the model id.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterator, Sequence

import numpy as np
from numpy.typing import NDArray

from ._base import checked_output, checked_texts, empty_matrix

ALGORITHM_VERSION = 1
BUCKET_CACHE = 200_000
"""Features whose bucket is memoised, per embedder (a bound: later features are hashed each time)."""
"""Bump when the features or their weights change: the model id changes with it."""

_WORD = re.compile(r"[^\W_]+", re.UNICODE)  # runs of letters/digits; `_`, `.`, `::`, `-` separate
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W\d_a-zA-Z]+", re.UNICODE)
_MAX_CHARS = 1 << 20
"""Only the first MiB of a text is hashed (bounded work; the design's input bounds are far lower)."""

_STOPWORDS = frozenset(
    """a about above after again all also am an and any are as at be been before being below between both
    but by can could did do does doing down during each few for from further had has have having he her
    here hers him his how i if in into is it its itself just me more most my no nor not now of off on once
    only or other our ours out over own same she should so some such than that the their them then there
    these they this those through to too under until up very was we were what when where which while who
    whom why will with would you your yours""".split()  # noqa: SIM905
)
"""Function words carry no topic; hashed, they only make unrelated texts look alike."""

_WORD_WEIGHT = 1.0
_PART_WEIGHT = 1.0
_TRIGRAM_WEIGHT = 0.25


def identifier_tokens(text: str) -> Iterator[tuple[str, float]]:
    """(feature, weight) pairs: whole words, their camelCase/digit parts, and character trigrams."""
    text = unicodedata.normalize("NFKC", text[:_MAX_CHARS])
    for word in _WORD.findall(text):
        lower = word.lower()
        if lower in _STOPWORDS:
            continue
        yield "w:" + lower, _WORD_WEIGHT
        parts = _CAMEL.findall(word)
        if len(parts) > 1:
            for part in parts:
                yield "w:" + part.lower(), _PART_WEIGHT
        padded = f"<{lower}>"
        for i in range(len(padded) - 2):
            yield "c:" + padded[i : i + 3], _TRIGRAM_WEIGHT
    # Symbols and control characters only, or stop words only: hash the visible characters and the
    # stop words so that every non-blank text still has features.
    if not any(w.lower() not in _STOPWORDS for w in _WORD.findall(text)):
        for word in _WORD.findall(text):
            yield "w:" + word.lower(), _WORD_WEIGHT
        for ch in text:
            if not ch.isspace() and not ch.isalnum():
                yield "s:" + ch, _WORD_WEIGHT


def _bucket(feature: str, dimension: int) -> tuple[int, float]:
    """(bucket, sign): signed hashing keeps unrelated texts near cosine 0."""
    digest = hashlib.blake2b(feature.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    return (value >> 1) % dimension, (1.0 if value & 1 else -1.0)


class HashingEmbedder:
    """Signed feature hashing into `dimension` buckets, sublinear term frequency, L2-normalised.

    Every non-blank text has at least one feature; should its signed features cancel exactly, the
    unsigned sum is used, so no non-blank text maps to the zero vector."""

    def __init__(self, dimension: int = 256) -> None:
        if not 16 <= dimension <= 65536:
            raise ValueError(f"dimension must be between 16 and 65536, got {dimension}")
        self.dimension = dimension
        self.similarity_floor = 0.25
        """Measured at 256-d (docs/results.md, embedders): keeps 98.9% of relevant hits and leaves
        67% of unrelated queries with no dense hit (word overlap tells topics apart poorly)."""
        self.model_id = f"graphctx-hashing-{dimension}@{ALGORITHM_VERSION}"
        self._bucket_cache: dict[str, tuple[int, float]] = {}

    def caches(self) -> dict[str, dict[str, int]]:
        return {"hashing_buckets": {"entries": len(self._bucket_cache), "max_entries": BUCKET_CACHE}}

    def __repr__(self) -> str:
        return f"HashingEmbedder(model_id={self.model_id!r})"

    def _vector(self, text: str) -> NDArray[np.float32]:
        weights: defaultdict[str, float] = defaultdict(float)
        for feature, weight in identifier_tokens(text):
            weights[feature] += weight
        signed = np.zeros(self.dimension, dtype=np.float64)
        unsigned = np.zeros(self.dimension, dtype=np.float64)
        cache = self._bucket_cache
        for feature, total in weights.items():
            hit = cache.get(feature)
            if hit is None:
                hit = _bucket(feature, self.dimension)
                if len(cache) < BUCKET_CACHE:
                    cache[feature] = hit  # dict writes are atomic under the GIL
            bucket, sign = hit
            signed[bucket] += sign * np.log1p(total)
            unsigned[bucket] += np.log1p(total)
        # Signed features can cancel exactly (colliding features of equal weight and opposite sign);
        # the unsigned sum of the same features cannot, so it stands in for that rare case.
        out = signed if np.any(np.abs(signed) > 1e-9) else unsigned
        return out.astype(np.float32)

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        items = checked_texts(texts)
        if not items:
            return empty_matrix(self.dimension)
        matrix = np.stack([self._vector(text) for text in items])
        return checked_output(matrix, len(items), self.dimension)
