"""Backends are found by name through entry points, so core never imports an adapter and
third-party adapters plug in the same way ours do."""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

from graphctx.errors import ConfigError

GROUPS = {
    "graph": "graphctx.graph_stores",
    "lexical": "graphctx.lexical_indexes",
    "vector": "graphctx.vector_indexes",
    "embedder": "graphctx.embedders",
    "journal": "graphctx.journals",
    "keys": "graphctx.key_stores",
    "token_counter": "graphctx.token_counters",
}


def available(kind: str) -> list[str]:
    return sorted(ep.name for ep in entry_points(group=GROUPS[kind]))


def factory(kind: str, name: str) -> Callable[..., Any]:
    matches = [ep for ep in entry_points(group=GROUPS[kind]) if ep.name == name]
    if not matches:
        raise ConfigError(
            f"no {kind} backend named {name!r}; available: {', '.join(available(kind)) or 'none'}"
        )
    try:
        loaded: Callable[..., Any] = matches[0].load()
    except ImportError as exc:
        raise ConfigError(
            f"{kind} backend {name!r} needs a package that is not installed ({exc.name}); "
            f"install the matching extra, for example `pip install 'graphctx[{name}]'`"
        ) from exc
    return loaded
