"""What every graphctx embedder shares: input checks, output checks, and a lazy, thread-safe load.

Empty input: a text with no non-whitespace character has no meaning to embed, and any vector made for it
would sit at the same place for every empty text (so every empty entity would be "similar" to every short
query). Every embedder here therefore rejects such a text with `InvalidVector` before it runs the model;
the error names the offending positions in `details["indices"]` so a caller embedding a batch can drop
them and retry, and the retrieval pipeline falls back to the lexical leg, as it does for any invalid vector.
Every other text (any unicode, control characters, very long text) gives a finite, non-zero,
L2-normalised float32 vector or, should a model ever produce a zero or non-finite row, `InvalidVector`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

import numpy as np
from numpy.typing import NDArray

from graphctx.errors import InputError, InvalidVector
from graphctx.vectors import checked_matrix

T = TypeVar("T")


def checked_texts(texts: Sequence[str]) -> list[str]:
    """The texts as a list; InputError for a non-string or a string with a lone surrogate (not valid
    Unicode, so no tokenizer can take it); InvalidVector for blank texts."""
    if isinstance(texts, str):
        raise InputError("embed() takes a sequence of texts, not a single string")
    items = list(texts)
    blank: list[int] = []
    for i, text in enumerate(items):
        if not isinstance(text, str):
            raise InputError(f"text {i} is {type(text).__name__}, expected str")
        if not text.strip():
            blank.append(i)
        elif not text.isascii():
            try:
                text.encode("utf-8")
            except UnicodeEncodeError as exc:  # a lone surrogate: no tokenizer can take it
                raise InputError(f"text {i} is not valid Unicode ({exc.reason} at {exc.start})") from exc
    if blank:
        raise InvalidVector(
            f"cannot embed an empty or whitespace-only text (positions {blank[:10]}"
            f"{', …' if len(blank) > 10 else ''})",
            indices=blank,
        )
    return items


def empty_matrix(dimension: int) -> NDArray[np.float32]:
    return np.zeros((0, dimension), dtype=np.float32)


def checked_output(matrix: NDArray[np.floating], rows: int, dimension: int) -> NDArray[np.float32]:
    """Shape, finiteness and non-zero checks, then L2 normalisation (graphctx.vectors.checked_matrix)."""
    return np.ascontiguousarray(checked_matrix(matrix, rows, dimension), dtype=np.float32)


class Lazy(Generic[T]):
    """A value built once, on first use, by `factory`; thread-safe (double-checked lock).

    A factory that raises is retried on the next call (nothing half-built is kept)."""

    def __init__(self, factory: Callable[[], T]) -> None:
        self._factory = factory
        self._lock = threading.Lock()
        self._value: T | None = None

    @property
    def loaded(self) -> bool:
        return self._value is not None

    def get(self) -> T:
        value = self._value
        if value is None:
            with self._lock:
                value = self._value
                if value is None:
                    value = self._factory()
                    self._value = value
        return value
