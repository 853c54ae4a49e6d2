"""Exact top-k with a quarter of the memory traffic: int8 codes of a scope's rows prune the scan, the
float32 rows decide.

Each row is coded as `x = mean + scale * code + residual` (per-dimension `mean` and `scale`, `code` in
int8). For a unit query q, with `q * scale = t * q8 + u` (the query coded the same way):

    q . x = q . mean + t * (q8 . code) + u . code + q . residual

so the approximate score `q . mean + t * (q8 . code)` is within `|residual| + |u| * |code|` of the
exact one (Cauchy-Schwarz, per row; both norms are known). A search scores every code (one int8 pass,
SIMD, outside the GIL), takes the exact float32 scores of the best few, whose k-th is a floor T for
the true k-th score, and rescores exactly every row whose bound reaches T. Every row of the true top
k (and every row tied with its k-th) is among them, so the answer is the brute-force answer whatever
the data: the codes' quality decides only how many rows are rescored. Clipped codes (rows added after
the scale was chosen) stay correct for the same reason: their residual is measured, not assumed.

The codes live in memory, per process, built from the mapped matrix the first time a large scope is
searched (in the background: searches meanwhile run brute force), extended as rows are appended and
rebuilt when the scope has grown well past the rows its scale was fitted on.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

SLACK = 1e-4
"""Added to every bound: float32 rounding of the scores (~1e-6 for unit vectors; BLAS and a row-by-row
sum of the same row differ by as much) stays far below it."""
REFIT_GROWTH = 4
"""Codes are refitted once a scope holds this many times the rows its scale was fitted on."""
_LIMIT = 127
_CHUNK = 16_384
"""Rows coded per step: bounds the float32 temporaries of a fit or an extension (16 MiB at 256-d)."""


@dataclass(frozen=True)
class Codes:
    """An immutable view of the first `rows` codes (later appends never change these rows)."""

    codes: NDArray[np.int8]
    slack: NDArray[np.float32]
    """Per row: |residual| + SLACK."""
    norms: NDArray[np.float32]
    """Per row: |code|."""
    mean: NDArray[np.float32]
    scale: NDArray[np.float32]
    rows: int
    fitted_rows: int
    widest_slack: float
    widest_norm: float


class CodeBook:
    """Codes of one shard generation: fitted once, extended in place past the rows any view shows."""

    def __init__(self, matrix: NDArray[np.float32]) -> None:
        rows, dimension = matrix.shape
        self.mean = matrix.mean(axis=0, dtype=np.float64).astype(np.float32)
        spread = np.zeros(dimension, dtype=np.float32)
        for start in range(0, rows, _CHUNK):
            np.maximum(spread, np.abs(matrix[start : start + _CHUNK] - self.mean).max(axis=0), out=spread)
        # a dimension every row agrees on gets a tiny step rather than a division by zero
        self.scale = np.maximum(spread / _LIMIT, 1e-7).astype(np.float32)
        self.fitted_rows = rows
        capacity = max(rows, 1024)
        self._codes = np.zeros((capacity, dimension), dtype=np.int8)
        self._slack = np.zeros(capacity, dtype=np.float32)
        self._norms = np.zeros(capacity, dtype=np.float32)
        self.rows = 0
        self.extend(matrix)

    def extend(self, rows: NDArray[np.float32]) -> None:
        """Code `rows` (the next rows of the matrix, in order)."""
        need = self.rows + len(rows)
        if need > len(self._codes):  # a new buffer: views handed out keep the old one
            capacity = max(need, 2 * len(self._codes))
            self._codes = _grown(self._codes, capacity, self.rows)
            self._slack = _grown(self._slack, capacity, self.rows)
            self._norms = _grown(self._norms, capacity, self.rows)
        for start in range(0, len(rows), _CHUNK):
            centred = rows[start : start + _CHUNK] - self.mean
            code = np.clip(np.rint(centred / self.scale), -_LIMIT, _LIMIT)
            residual = centred - code * self.scale
            at = slice(self.rows, self.rows + len(code))
            self._codes[at] = code.astype(np.int8)
            self._slack[at] = np.linalg.norm(residual, axis=1) + SLACK
            self._norms[at] = np.linalg.norm(code, axis=1)
            self.rows += len(code)

    def view(self) -> Codes:
        n = self.rows
        slack, norms = self._slack[:n], self._norms[:n]
        return Codes(
            self._codes[:n],
            slack,
            norms,
            self.mean,
            self.scale,
            n,
            self.fitted_rows,
            float(slack.max()) if n else 0.0,
            float(norms.max()) if n else 0.0,
        )

    def nbytes(self) -> int:
        return int(self._codes.nbytes + self._slack.nbytes + self._norms.nbytes)


def _grown(array: NDArray[np.generic], capacity: int, used: int) -> NDArray[np.generic]:
    out = np.zeros((capacity, *array.shape[1:]), dtype=array.dtype)
    out[:used] = array[:used]
    return out


def stale(codes: Codes, rows: int) -> bool:
    """Whether the scope has outgrown the rows its scale was fitted on (codes are refitted)."""
    return rows >= REFIT_GROWTH * max(codes.fitted_rows, 1)


def candidates(
    codes: Codes,
    matrix: NDArray[np.float32],
    dead: NDArray[np.bool_] | None,
    query: NDArray[np.float32],
    k: int,
) -> NDArray[np.intp]:
    """Rows that may be in the top k of `matrix @ query`: a superset of the true top k and of every
    row tied with its k-th score (within SLACK). `query` is unit-length."""
    import numkong  # a SIMD int8 kernel that releases the GIL; imported on first use

    scaled = query * codes.scale
    step = float(np.abs(scaled).max()) / _LIMIT or 1.0
    q8 = np.rint(scaled / step).astype(np.int8)
    query_error = float(np.linalg.norm(scaled - q8 * np.float32(step)))
    dots = np.asarray(numkong.cdist(q8[None, :], codes.codes, metric="dot", out_dtype="float32"))
    approx = dots.reshape(-1) * np.float32(step) + np.float32(float(query @ codes.mean))
    if dead is not None:
        approx[dead[: codes.rows]] = -np.inf
    probe = _probe(approx, k)
    probe_scores = matrix[probe] @ query
    if len(probe) < k:  # fewer live rows than k: every live row is a candidate
        return probe
    floor = np.partition(probe_scores, len(probe) - k)[len(probe) - k]
    widest = codes.widest_slack + query_error * codes.widest_norm
    near = np.flatnonzero(approx >= floor - widest)  # one pass; the per-row bound on these only
    bound = approx[near] + codes.slack[near] + np.float32(query_error) * codes.norms[near]
    return near[bound >= floor]


def _probe(approx: NDArray[np.float32], k: int) -> NDArray[np.intp]:
    """Live rows with about the best approximate scores (at least k of them when k rows are live):
    their exact k-th score is the floor. A cut read off every 32nd row usually finds them without
    partitioning all rows; a dead row (-inf) never enters, its score would raise the floor."""
    want = max(32, 2 * k)
    live = approx > -np.inf
    sample = approx[::32]
    if len(sample) >= 64:
        top = max(2, want // 32)
        cut = np.partition(sample, len(sample) - top)[len(sample) - top]
        probe = np.flatnonzero((approx >= cut) & live)
        if k <= len(probe) <= 64 * want:
            return probe
    size = min(want, len(approx))
    cut = np.partition(approx, len(approx) - size)[len(approx) - size]
    return np.flatnonzero((approx >= cut) & live)
