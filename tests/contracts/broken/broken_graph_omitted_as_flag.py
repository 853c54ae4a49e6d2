"""Broken on purpose: `graph.neighbourhood`'s `omitted` is a flag (1 when a limit cut anything, else 0)
instead of the number of steps the limits left out. `truncated` is right, so a test that only checks
`omitted >= 1` when cut passes.
"""

from __future__ import annotations

from _shared import HookedTraversal, InMemorySqlite, TestControlHookedTraversal, graph_factory  # noqa: F401

from graphctx.contracts.graph import GraphStoreContract


class OmittedAsFlag(HookedTraversal):
    name = "sqlite-omitted-as-flag"

    def omitted(self, cut: int, dropped: set[str], followed: set[str]) -> int:
        return 1 if cut or dropped - followed else 0  # the bug


class TestBrokenOmittedAsFlag(InMemorySqlite, GraphStoreContract):
    store_class = OmittedAsFlag


create_graph_store = graph_factory(OmittedAsFlag)
