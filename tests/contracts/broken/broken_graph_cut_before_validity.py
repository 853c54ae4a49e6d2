"""Broken: the per-node cut (ROW_NUMBER window) numbers every edge of a node, valid or not; validity
at as_of is a filter applied after the cut: ended/future edges eat per_direction_limit slots."""

from __future__ import annotations

from _shared import HookedTraversal, InMemorySqlite, TestControlHookedTraversal, graph_factory  # noqa: F401

from graphctx.adapters.sqlite import traversal
from graphctx.contracts.graph import GraphStoreContract

_VALID = "AND (f.valid_from IS NULL OR f.valid_from <= ?7) AND (f.valid_to IS NULL OR f.valid_to > ?7)"
_OUTER = (
    ") WHERE rn <= ?8 AND (valid_from IS NULL OR valid_from <= ?7) AND (valid_to IS NULL OR valid_to > ?7)"
)


def _move(sql: str) -> str:
    out = sql.replace(_VALID, "").replace(") WHERE rn <= ?8", _OUTER)
    assert out != sql and _VALID not in out
    return out


_SQL = {"out": _move(traversal._HOP_OUT), "in": _move(traversal._HOP_IN)}


class CutBeforeValidity(HookedTraversal):
    name = "sqlite-cut-before-validity"

    def hop_sql(self, direction: str) -> str:
        return _SQL[direction]


class TestBrokenCutBeforeValidity(InMemorySqlite, GraphStoreContract):
    store_class = CutBeforeValidity


create_graph_store = graph_factory(CutBeforeValidity)
