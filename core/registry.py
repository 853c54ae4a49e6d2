"""Backends are found by name through entry points, so core never imports an adapter and
third-party adapters plug in the same way ours do."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from importlib.metadata import EntryPoints, entry_points
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


@cache
def _installed() -> Any:
    """Every installed distribution's entry points, read once per process: each scan reads every
    distribution's metadata (~7 ms, five of them to open the stores). EntryPoints, or on Python 3.11
    SelectableGroups, which selects a group the same way."""
    return entry_points()


def declared(group: str) -> EntryPoints:
    """The installed entry points of one group."""
    selected: EntryPoints = _installed().select(group=group)
    return selected


def available(kind: str) -> list[str]:
    return sorted(ep.name for ep in declared(GROUPS[kind]))


def factory(kind: str, name: str) -> Callable[..., Any]:
    matches = [ep for ep in declared(GROUPS[kind]) if ep.name == name]
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
