"""Bulk writes as bound rows: one traversal per request, whatever the number of items it writes.

Written item by item, a batch costs a copy of every step per item (a lookup, a drop, an add, a
`property()` per field, each value a binding of its own): ~3 KiB of GraphSON per entity and ~4 KiB per
fact, built and serialised in Python, parsed and translated again on the server. Here a request is
a fixed traversal per *leg* -- the rows that share one edge label and one set of present fields --
whose steps are constants of code, and every value of every item travels in one binding per leg: a
list of rows (plain maps from property keys, which are constants of code, to values). A leg unfolds
its rows, labels the row at hand `ROW`, and sets each field from it (`field(key)`), so a user value
still never becomes a step, a label or a key.

Requests stay under the connection's budget (`ConnectionConfig.max_request_bytes`): every row's
GraphSON size is bounded from above (`encoded_size`, no serialisation), each leg's fixed steps are
measured once, and `row_runs` packs rows greedily (a lone row over the budget goes alone, as the
per-item writes did).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Hashable, Iterator, Sequence
from typing import Any

from gremlin_python.process.graph_traversal import GraphTraversal, __
from gremlin_python.structure.io.graphsonV3d0 import GraphSONWriter

from . import keys

ROW = "row"
"""Step label of the row at hand inside a leg."""
ENDS = "ends"
"""Side-effect key: the request's vertices (entities it updates, or fact endpoints) by sort key."""
ELEMENT = "element"
"""Step label of the vertex a leg writes (its aliases are set from it)."""
ALIAS = "alias"
"""Step label of one alias inside a row's alias list."""
STEP_KEYS = (ROW, ENDS, ELEMENT, ALIAS)
"""The step labels and side-effect keys the row writes use (constants of code, never user values)."""

_ENVELOPE = 1024  # the request message around the traversal: ids, op, aliases, the start steps
_BINDING = 64  # {"@type":"g:Binding","@value":{"key":"b12","value": ... }}


def field(key: str) -> GraphTraversal:
    """Anonymous: the value of `key` in the row at hand (`key` is a constant of code)."""
    return __.select(ROW).select(key)


def rows(b: Any, data: list[dict[str, Any]]) -> GraphTraversal:
    """Anonymous: one traverser per row of `data` (bound as one value), labelled `ROW`. The list is
    unfolded inside a flatMap, so it never enters a traverser's path: a server that tracks whole paths
    (a key chosen by a traversal, `select(field(...))`, makes it) hashes each path many times per row,
    and a path holding every row made a request's cost grow with the square of its rows (measured on
    HugeGraph 1.5.0: 1,000 entities in one request took 20 s)."""
    return __.flat_map(__.constant(b(data)).unfold()).as_(ROW)


def lookup(vertices: GraphTraversal) -> GraphTraversal:
    """Anonymous, for a `side_effect()`: the side-effect map `ENDS` of `vertices` (a side effect, so
    they never enter the path of the rows either), keyed by `sort_key`, the hex of the entity id.

    Rows find their vertex with `select(ENDS).select(<key from the row>)`, and a key the map lacks (a
    new entity) is then looked up among the side effects and the path's step labels: keyed by the
    raw id, an entity named `row` or `ends` got the row or the map instead of nothing (measured on
    Gremlin Server 3.8.1). Hex keys ([0-9a-f]) can never equal a step label or side-effect key."""
    return vertices.group(ENDS).by(keys.SORT_KEY)


def encoded_size(value: Any) -> int:
    """An upper bound of the GraphSON v3 bytes gremlinpython writes for `value` (str, bool, int,
    float, None, and lists and str-keyed maps of them). Strings are exact (json escapes them as the
    writer does); typed numbers and containers add their wrappers, with a margin."""
    if isinstance(value, str):
        return len(json.dumps(value))
    if value is None or isinstance(value, bool):
        return 5
    if isinstance(value, int):
        return 32 + len(str(value))  # {"@type":"g:Int64","@value":N}
    if isinstance(value, float):
        return 34 + len(repr(value))  # {"@type":"g:Double","@value":X}
    if isinstance(value, list | tuple):
        return 32 + sum(encoded_size(v) + 1 for v in value)  # {"@type":"g:List","@value":[...]}
    if isinstance(value, dict):
        return 32 + sum(encoded_size(k) + encoded_size(v) + 2 for k, v in value.items())
    raise TypeError(f"no size bound for {type(value).__name__}")


@dataclasses.dataclass
class Row:
    """One item to write: the leg that writes it, its values, and what it adds to a request besides
    its row (ids bound elsewhere in the request, per-item side effects such as a drop)."""

    leg: Hashable
    data: dict[str, Any]
    extra: int = 0
    before: list[GraphTraversal] = dataclasses.field(default_factory=list)
    """Anonymous side effects to run before the request's legs (on the same request)."""
    ids: tuple[str, ...] = ()
    """The entities whose vertices the request looks up for this row."""

    @property
    def size(self) -> int:
        return encoded_size(self.data) + 1 + self.extra


def sized(piece: GraphTraversal) -> int:
    """The GraphSON bytes of an anonymous traversal, measured (for the few per-item pieces)."""
    return len(GraphSONWriter().write_object(piece.bytecode)) + 64


def row_runs(rows: Sequence[Row], budget: int, leg_cost: Callable[[Hashable], int]) -> Iterator[list[Row]]:
    """Runs of `rows`, grouped by leg (in first-seen order, each leg's rows in order), each within
    `budget` bytes: its rows, the fixed steps of each leg it holds (`leg_cost`) and the envelope."""
    order: dict[Hashable, list[Row]] = {}
    for row in rows:
        order.setdefault(row.leg, []).append(row)
    room = budget - _ENVELOPE
    run: list[Row] = []
    used = 0
    legs: set[Hashable] = set()
    for leg, members in order.items():
        for row in members:
            cost = row.size + (0 if leg in legs else leg_cost(leg) + _BINDING)
            if run and used + cost > room:
                yield run
                run, used, legs = [], 0, set()
                cost = row.size + leg_cost(leg) + _BINDING
            run.append(row)
            used += cost
            legs.add(leg)
    if run:
        yield run


def by_leg(run: Sequence[Row]) -> dict[Hashable, list[dict[str, Any]]]:
    """The run's rows as each leg binds them."""
    out: dict[Hashable, list[dict[str, Any]]] = {}
    for row in run:
        out.setdefault(row.leg, []).append(row.data)
    return out


def leg_costs(build: Callable[[Hashable], GraphTraversal]) -> Callable[[Hashable], int]:
    """`leg_cost` for row_runs: the serialised size of a leg's steps with no rows, measured once per leg."""
    cache: dict[Hashable, int] = {}

    def cost(leg: Hashable) -> int:
        if leg not in cache:
            cache[leg] = sized(build(leg))
        return cache[leg]

    return cost
