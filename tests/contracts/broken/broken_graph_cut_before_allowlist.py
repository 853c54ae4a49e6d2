"""Broken: the per-node cut numbers every edge of a node whatever its predicate; the edge allowlist
is a filter applied after the cut: disallowed edges eat per_direction_limit slots."""

from __future__ import annotations

from _shared import HookedTraversal, InMemorySqlite, TestControlHookedTraversal, graph_factory  # noqa: F401

from graphctx.adapters.sqlite import traversal
from graphctx.contracts.graph import GraphStoreContract

_ALLOW = "AND (?5 = 0 OR f.predicate IN (SELECT value FROM json_each(?6)))"
_OUTER = ") WHERE rn <= ?8 AND (?5 = 0 OR predicate IN (SELECT value FROM json_each(?6)))"


def _move(sql: str) -> str:
    out = sql.replace(_ALLOW, "").replace(") WHERE rn <= ?8", _OUTER)
    assert out != sql and _ALLOW not in out
    return out


_SQL = {"out": _move(traversal._HOP_OUT), "in": _move(traversal._HOP_IN)}


class CutBeforeAllowlist(HookedTraversal):
    name = "sqlite-cut-before-allowlist"

    def hop_sql(self, direction: str) -> str:
        return _SQL[direction]


class TestBrokenCutBeforeAllowlist(InMemorySqlite, GraphStoreContract):
    store_class = CutBeforeAllowlist


create_graph_store = graph_factory(CutBeforeAllowlist)
