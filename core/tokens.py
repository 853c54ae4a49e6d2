"""Counting an answer's tokens with a real tokenizer, beside the documented bytes/4 estimate.

Packing always uses ceil(bytes / 4) (the design's estimator: cheap, monotonic, tokenizer-neutral). With
`GRAPHCTX_TOKEN_COUNTER` set, each answer also reports what a pinned tokenizer that ships inside a
dependency counts for the same JSON (`budget.counted`), so a caller can see how far the estimate is
from the tokens its model will pay. Counters are found by name (entry points `graphctx.token_counters`).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class TokenCounter(Protocol):
    name: str
    """The tokenizer and the package version it comes from, e.g. `llama-2@wordllama-0.4.0.post1`."""

    def count(self, text: str) -> int: ...
