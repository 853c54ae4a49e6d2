"""Broken on purpose: the per-direction cut keeps each node's edges in the order of their far end's id,
whatever their predicate (an `ORDER BY other_end` in the hop's window). With one predicate per hub --
what the clamp tests load -- that is the catalogue order; with several, a node keeps other edges than
it should (outgoing edges go by (predicate, object, id)).
"""

from __future__ import annotations

from _shared import HookedTraversal, InMemorySqlite, TestControlHookedTraversal, graph_factory  # noqa: F401

from graphctx.contracts.graph import GraphStoreContract


class CutByFarId(HookedTraversal):
    name = "sqlite-cut-by-far-id"

    def hop_sql(self, direction: str) -> str:
        order = "f.object_id, f.id" if direction == "out" else "f.subject_id, f.id"
        sql = super().hop_sql(direction)
        for catalogue in ("f.predicate, f.object_id, f.id", "f.subject_id, f.predicate, f.id"):
            sql = sql.replace(f"ORDER BY {catalogue}", f"ORDER BY {order}")  # the bug
        return sql


class TestBrokenCutByFarId(InMemorySqlite, GraphStoreContract):
    store_class = CutByFarId


create_graph_store = graph_factory(CutByFarId)
