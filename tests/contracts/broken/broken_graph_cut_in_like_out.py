"""Broken on purpose: the per-direction cut orders incoming edges as it orders outgoing ones, by
(predicate, far end, id), where the catalogue orders them by (subject, predicate, id): one ORDER BY
written for both directions. A node with incoming edges of several predicates keeps the wrong ones.
"""

from __future__ import annotations

from _shared import HookedTraversal, InMemorySqlite, TestControlHookedTraversal, graph_factory  # noqa: F401

from graphctx.contracts.graph import GraphStoreContract


class CutInLikeOut(HookedTraversal):
    name = "sqlite-cut-in-like-out"

    def hop_sql(self, direction: str) -> str:
        sql = super().hop_sql(direction)
        return sql.replace(
            "ORDER BY f.subject_id, f.predicate, f.id", "ORDER BY f.predicate, f.subject_id, f.id"
        )


class TestBrokenCutInLikeOut(InMemorySqlite, GraphStoreContract):
    store_class = CutInLikeOut


create_graph_store = graph_factory(CutInLikeOut)
