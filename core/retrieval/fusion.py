"""Reciprocal rank fusion: score = sum over legs of 1 / (k + rank), ranks starting at 1."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from graphctx.bounds import RRF_K


@dataclass(frozen=True)
class Fused:
    entity_id: str
    score: float
    ranks: dict[str, int] = field(default_factory=dict)


def rrf(legs: Mapping[str, Sequence[str]], k: int = RRF_K) -> list[Fused]:
    """Fuse ranked id lists. Ties are broken by id so the order is deterministic."""
    scores: dict[str, float] = {}
    ranks: dict[str, dict[str, int]] = {}
    for leg in sorted(legs):
        for rank, entity_id in enumerate(dict.fromkeys(legs[leg]), start=1):
            scores[entity_id] = scores.get(entity_id, 0.0) + 1.0 / (k + rank)
            ranks.setdefault(entity_id, {})[leg] = rank
    order = sorted(scores, key=lambda i: (-scores[i], i))
    return [Fused(i, scores[i], ranks[i]) for i in order]
