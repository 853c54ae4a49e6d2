"""Vector checks shared by every embedder and vector index, and the file-safe name of a collection."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from graphctx.errors import InvalidVector

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


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
    with np.errstate(over="ignore", under="ignore"):
        norm = float(np.linalg.norm(arr))
    if not np.any(arr):
        raise InvalidVector("vector is all zero")
    if norm == 0.0 or not np.isfinite(norm):  # finite entries whose float32 squares over- or underflow
        raise InvalidVector(
            f"vector's length is out of float32 range (largest entry {float(np.max(np.abs(arr))):.3g}): "
            "scale it before sending it"
        )
    return (arr / norm).astype(np.float32)


def checked_vectors(
    matrix: NDArray[np.floating], dimension: int
) -> tuple[NDArray[np.float32], NDArray[np.bool_]] | None:
    """`checked_vector` of every row of a (n, dimension) matrix at once: the rows it returns (bit for
    bit: each row's norm is its own float32 dot product, as np.linalg.norm computes it) and which rows
    it accepts (invalid rows are zero). None when the matrix is not (n, dimension) float data."""
    try:
        arr = np.asarray(matrix, dtype=np.float32)
    except (TypeError, ValueError):
        return None
    if arr.ndim != 2 or arr.shape[1] != dimension:
        return None
    with np.errstate(over="ignore", invalid="ignore"):
        norms = np.sqrt(np.fromiter((row.dot(row) for row in arr), dtype=np.float32, count=len(arr)))
        ok = np.isfinite(arr).all(axis=1) & np.isfinite(norms) & (norms != 0)
        out = np.zeros_like(arr)
        out[ok] = arr[ok] / norms[ok, None]
    return out, ok


def valid_rows(matrix: NDArray[np.floating], dimension: int) -> tuple[NDArray[np.float32], NDArray[np.bool_]]:
    """Every row checked at once: the L2-normalised float32 matrix and which rows are valid (finite,
    non-zero). Invalid rows are zero in the result. InvalidVector when the shape is wrong."""
    arr = np.asarray(matrix, dtype=np.float32)
    if arr.ndim != 2 or arr.shape[1] != dimension:
        raise InvalidVector(f"vectors have shape {arr.shape}, expected (n, {dimension})")
    with np.errstate(over="ignore", invalid="ignore"):
        norms = np.linalg.norm(arr, axis=1)
        ok = np.isfinite(arr).all(axis=1) & np.isfinite(norms) & (norms > 0)
    out = np.zeros_like(arr)
    out[ok] = arr[ok] / norms[ok, None]
    return out, ok


def checked_matrix(matrix: NDArray[np.floating], rows: int, dimension: int) -> NDArray[np.float32]:
    """A (rows, dimension) matrix whose every row passes `checked_vector`, normalised; InvalidVector
    naming the first bad row otherwise."""
    arr = np.asarray(matrix, dtype=np.float32)
    if arr.shape != (rows, dimension):
        raise InvalidVector(f"embedding matrix has shape {arr.shape}, expected ({rows}, {dimension})")
    if not rows:
        return arr
    out, ok = valid_rows(arr, dimension)
    if not ok.all():
        bad = int(np.flatnonzero(~ok)[0])
        checked_vector(arr[bad], dimension)  # raises with the reason
    return out


def collection_name(model_id: str) -> str:
    """File- and collection-safe; the hash keeps 'a/b' and 'a_b' in different collections."""
    slug = _UNSAFE.sub("_", model_id).strip("._-")[:64] or "model"
    return f"{slug}-{hashlib.sha256(model_id.encode()).hexdigest()[:8]}"
