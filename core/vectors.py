"""Vector checks shared by every embedder and vector index."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from graphctx.errors import InvalidVector


def checked_vector(vector: Sequence[float] | NDArray[np.floating], dimension: int) -> NDArray[np.float32]:
    """A finite, non-zero float32 vector of `dimension`, L2-normalised; InvalidVector otherwise."""
    try:
        arr = np.asarray(vector, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise InvalidVector(f"vector is not numeric: {exc}") from exc
    if arr.ndim != 1 or arr.shape[0] != dimension:
        raise InvalidVector(f"vector has shape {arr.shape}, expected ({dimension},)")
    if not np.all(np.isfinite(arr)):
        raise InvalidVector("vector has non-finite values (NaN or infinity)")
    norm = float(np.linalg.norm(arr))
    if norm == 0.0 or not np.isfinite(norm):
        raise InvalidVector("vector is all zero")
    return (arr / norm).astype(np.float32)


def checked_matrix(matrix: NDArray[np.floating], rows: int, dimension: int) -> NDArray[np.float32]:
    arr = np.asarray(matrix, dtype=np.float32)
    if arr.shape != (rows, dimension):
        raise InvalidVector(f"embedding matrix has shape {arr.shape}, expected ({rows}, {dimension})")
    return np.stack([checked_vector(row, dimension) for row in arr]) if rows else arr
