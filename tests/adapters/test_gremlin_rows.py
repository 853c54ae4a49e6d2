"""Bulk writes as bound rows (graphctx.adapters.gremlin.batch): request sizes, batch boundaries, a
request that fails mid-batch, a batch split under the budget, and the per-item fallback.

The size and packing tests need no server. Tests marked with a live store run against the TinkerPop
Gremlin Server (GRAPHCTX_TEST_GREMLIN_URL) and HugeGraph (GRAPHCTX_TEST_HUGEGRAPH_URL); without them
they skip, saying so (with GRAPHCTX_REQUIRE_SERVERS=1 they fail instead).
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from gremlin_python.process.graph_traversal import GraphTraversal
from gremlin_python.statics import long
from gremlin_python.structure.io.graphsonV3d0 import GraphSONWriter

from graphctx.adapters.gremlin import ConnectionConfig, GremlinDialect, GremlinGraphStore, batch
from graphctx.adapters.gremlin.connection import ServerError
from graphctx.adapters.hugegraph import HugeGraphSettings, HugeGraphStore
from graphctx.contracts import datasets
from graphctx.kernel import templates as t
from graphctx.model import Entity, Fact
from graphctx.scope import Scope
from tests.adapters.gremlin_requests import require_server

GREMLIN_URL = os.environ.get("GRAPHCTX_TEST_GREMLIN_URL", "")
HUGEGRAPH_URL = os.environ.get("GRAPHCTX_TEST_HUGEGRAPH_URL", "")
HUGEGRAPH_GREMLIN_URL = os.environ.get("GRAPHCTX_TEST_HUGEGRAPH_GREMLIN_URL", "ws://127.0.0.1:18182/gremlin")
BUDGET = 16 * 1024


# ---- sizes and packing (no server) -------------------------------------------------------------

VALUES: list[Any] = [
    *datasets.INJECTION_PAYLOADS,
    "",
    "é" * 300,
    "\U0001f600 emoji",
    "\x00\x1f control",
    0,
    -1,
    2**31,
    long(2**62),
    long(-(2**63)),
    0.1,
    -1e300,
    True,
    False,
    None,
    ["a", long(1), 2.5, ["nested"]],
    {"k": "v", "n": long(5), "list": [{"id": "x", "alias_value": "y"}]},
]


@pytest.mark.parametrize("value", VALUES, ids=range(len(VALUES)))
def test_encoded_size_bounds_what_the_writer_sends(value: Any) -> None:
    """The bound is never below the GraphSON gremlinpython writes, and not wildly above it."""
    actual = len(GraphSONWriter().write_object(value))
    bound = batch.encoded_size(value)
    assert actual <= bound <= 2 * actual + 64, (actual, bound)


def test_encoded_size_of_a_row_of_every_field() -> None:
    scope = Scope("t" * 50, "n" * 50, "g" * 50)
    dialect = GremlinDialect()
    when = datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=UTC)
    e = Entity(
        id="é\u2028" * 40, name="n", aliases=("a\"b", "c\\d"), summary="s" * 500, qualified_name="q",
        path="p", line_start=1, line_end=10**9, signature="sig", created_at=when, updated_at=when,
    )  # fmt: skip
    from graphctx.adapters.gremlin import codec

    row = {k: v for k, v in codec.entity_props(e, scope, dialect).items() if v is not None}
    row |= dialect.alias_fields(scope, e.id, codec.alias_keys(e.aliases))
    assert len(GraphSONWriter().write_object(row)) <= batch.encoded_size(row)


def _rows(sizes: list[tuple[str, int]]) -> list[batch.Row]:
    return [batch.Row(leg=leg, data={"v": "x" * n}) for leg, n in sizes]


def test_row_runs_keep_each_run_under_the_budget_and_every_row_once() -> None:
    rows = _rows([("a", 500)] * 40 + [("b", 900)] * 30 + [("a", 100)] * 10)
    runs = list(batch.row_runs(rows, 8 * 1024, lambda leg: 700))
    assert sorted(id(r) for run in runs for r in run) == sorted(id(r) for r in rows)
    for run in runs:
        legs = {r.leg for r in run}
        used = sum(r.size for r in run) + len(legs) * (700 + 64)
        assert used <= 8 * 1024 - 1024
    # grouped by leg, in first-seen order: all of a's rows come before b's
    flat = [r.leg for run in runs for r in run]
    assert flat == sorted(flat)


def test_row_runs_send_a_lone_oversized_row_alone() -> None:
    rows = _rows([("a", 100), ("a", 20_000), ("a", 100)])
    runs = list(batch.row_runs(rows, 8 * 1024, lambda leg: 500))
    assert [len(run) for run in runs] == [1, 1, 1]
    assert runs[1][0].data["v"] == "x" * 20_000


def test_row_runs_count_a_rows_extra_bytes() -> None:
    rows = [batch.Row(leg="a", data={"v": "x"}, extra=3000) for _ in range(5)]
    runs = list(batch.row_runs(rows, 8 * 1024, lambda leg: 100))
    assert all(sum(r.size for r in run) <= 8 * 1024 - 1024 for run in runs)
    assert len(runs) == 3


# ---- what goes out: sizes, rows, the per-item fallback (no server) ------------------------------


class _Measuring(GremlinGraphStore):
    """Records every request instead of sending it; answers as an empty graph in which every fact
    endpoint exists."""

    def __init__(self, budget: int, dialect: GremlinDialect | None = None) -> None:
        config = ConnectionConfig(url="ws://unused.invalid/gremlin", max_request_bytes=budget)
        super().__init__(config, dialect=dialect)
        self.sent: list[dict[str, Any]] = []
        self.endpoints: list[str] = []

    def submit(self, traversal: Any, b: Any, what: str, *, idempotent: bool) -> list[Any]:
        bytecode = b.finish(traversal).bytecode
        text = GraphSONWriter().write_object(bytecode)
        self.sent.append({"what": what, "size": len(text), "json": json.loads(text)})
        last = bytecode.step_instructions[-1][0]
        if last == "values":
            return list(self.endpoints)
        return [1] if last == "count" else []

    def rows_sent(self, what: str) -> list[dict[str, Any]]:
        """The rows of every write of `what`."""
        writes = [r for r in self.sent if r["what"] == what and r["json"]["@value"]["step"][-1] == ["count"]]
        return [row for request in writes for row in rows_in(request)]


def rows_in(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows of one request: the values of its bindings that are lists of maps."""
    out: list[dict[str, Any]] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict) and value.get("@type") == "g:Binding":
            bound = value["@value"]["value"]
            if isinstance(bound, dict) and bound.get("@type") == "g:List":
                items = bound["@value"]
                if items and all(isinstance(i, dict) and i.get("@type") == "g:Map" for i in items):
                    out.extend(dict(zip(i["@value"][::2], i["@value"][1::2], strict=True)) for i in items)
            return
        if isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(request["json"])
    return out


def _big_batch() -> tuple[Scope, list[Entity], list[Fact]]:
    scope = Scope("t" * 100, "n" * 100, "g" * 100)
    entities = [
        Entity(id=f"{i:04d}" + "x" * 400, name=f"n{i}", aliases=tuple(f"alias {j} {i}" for j in range(20)),
               summary="s" * 3000, qualified_name="q" * 500)
        for i in range(120)
    ]  # fmt: skip
    # over either budget alone: 16 KiB of indexed-only text, each character six bytes of JSON
    entities.append(Entity(id="huge", name="h", summary="s" * 4000, search_text="é" * 8000))
    facts = [
        Fact(subject_id=entities[i].id, predicate=p, object_id=entities[i + 1].id, source="x" * 900)
        for i in range(119)
        for p in ("relates_to", "depends_on")
    ] + [Fact(subject_id="huge", predicate="note", value="v" * 4000)]
    return scope, entities, facts


@pytest.mark.parametrize("budget", [16 * 1024, 48 * 1024])
def test_an_oversized_batch_is_split_under_the_budget_and_every_item_is_sent_once(budget: int) -> None:
    store = _Measuring(budget)
    scope, entities, facts = _big_batch()
    store.endpoints = [e.id for e in entities]
    assert store.run(t.ENTITY_UPSERT, scope, t.EntityUpsertParams(entities=tuple(entities))).created == 121
    assert store.run(t.FACT_UPSERT, scope, t.FactUpsertParams(facts=tuple(facts))).created == len(facts)
    writes = [r for r in store.sent if r["json"]["@value"]["step"][-1] == ["count"]]
    assert len(writes) > 10
    oversized = [r for r in writes if r["size"] > budget]
    assert [[r["entity_id"] for r in rows_in(request)] for request in oversized] == [["huge"]]  # alone
    sent_entities = [r["entity_id"] for r in store.rows_sent("entity.upsert")]
    assert sorted(sent_entities) == sorted(e.id for e in entities)
    sent_facts = [r["fact_id"] for r in store.rows_sent("fact.upsert")]
    assert sorted(sent_facts) == sorted(f.id for f in facts)


def test_a_batch_costs_a_fixed_traversal_per_request_not_steps_per_item() -> None:
    """The steps of a write do not grow with its items: 10 and 100 entities (or facts) of one shape
    send the same steps, only longer bindings."""
    steps: dict[int, list[int]] = {}
    for n in (10, 100):
        store = _Measuring(10 * 1024 * 1024)
        scope = Scope("s")
        entities = [Entity(id=f"e{i}", name=f"n{i}", aliases=(f"a{i}",)) for i in range(n)]
        store.endpoints = [e.id for e in entities]
        store.run(t.ENTITY_UPSERT, scope, t.EntityUpsertParams(entities=tuple(entities)))
        facts = [Fact(subject_id=f"e{i}", predicate="relates_to", object_id="e0") for i in range(n)]
        store.run(t.FACT_UPSERT, scope, t.FactUpsertParams(facts=tuple(facts)))
        writes = [r for r in store.sent if r["json"]["@value"]["step"][-1] == ["count"]]
        steps[n] = [len(json.dumps(r["json"]["@value"]["step"]).split('"g:Binding"')) for r in writes]
    assert len(steps[10]) == len(steps[100]) == 2
    assert steps[10] == steps[100]


class _ItemDialect(GremlinDialect):
    """A third-party dialect that customises vertex creation without a row counterpart."""

    def new_vertex(self, b: Any, scope: Scope, entity_id: str) -> GraphTraversal:
        return super().new_vertex(b, scope, entity_id).property("created_by", b("me"))


class _ServerIds(GremlinDialect):
    def vertex_id(self, scope: Scope, entity_id: str) -> None:
        return None


@pytest.mark.parametrize("dialect", [_ItemDialect(), _ServerIds()], ids=["item-hook", "server-ids"])
def test_a_dialect_without_row_counterparts_keeps_the_per_item_writes(dialect: GremlinDialect) -> None:
    store = _Measuring(48 * 1024, dialect=dialect)
    scope = Scope("s")
    entities = [Entity(id=f"e{i}", name=f"n{i}") for i in range(5)]
    store.endpoints = [e.id for e in entities]
    store.run(t.ENTITY_UPSERT, scope, t.EntityUpsertParams(entities=tuple(entities)))
    store.run(
        t.FACT_UPSERT, scope, t.FactUpsertParams(facts=(Fact(subject_id="e0", predicate="note", value="v"),))
    )
    assert store.rows_sent("entity.upsert") == store.rows_sent("fact.upsert") == []
    assert GremlinDialect().writes_rows()


# ---- live: a failure mid-batch, a split batch read back ----------------------------------------


@pytest.fixture(params=["gremlin", "hugegraph"])
def small_budget_store(request: pytest.FixtureRequest) -> Iterator[GremlinGraphStore]:
    """A live store whose requests are split at 16 KiB, so a few hundred items take several."""
    store: GremlinGraphStore
    if request.param == "gremlin":
        url = require_server(GREMLIN_URL, "GRAPHCTX_TEST_GREMLIN_URL", "a Gremlin Server")
        store = GremlinGraphStore(ConnectionConfig(url=url, max_request_bytes=BUDGET, pool_size=2))
    else:
        url = require_server(HUGEGRAPH_URL, "GRAPHCTX_TEST_HUGEGRAPH_URL", "HugeGraph")
        settings = HugeGraphSettings(
            url=url, gremlin_url=HUGEGRAPH_GREMLIN_URL, pool_size=2, max_request_kib=16
        )
        store = HugeGraphStore(settings)
    store.ensure_schema()
    yield store
    store.close()


def _scope() -> Scope:
    return Scope(f"rows-{uuid.uuid4().hex[:10]}", "bulk")


WHEN = datetime(2024, 5, 1, 12, 30, 15, 123457, tzinfo=UTC)  # microseconds survive


def _entities(n: int) -> list[Entity]:
    payloads = datasets.INJECTION_PAYLOADS[:-1]
    return [
        Entity(
            id=f"e{i:04d}",
            name=payloads[i % len(payloads)],
            aliases=(f"a{i}", payloads[(i + 1) % len(payloads)]),
            summary="s" * 200 + payloads[i % len(payloads)],
            qualified_name=f"q.e{i}" if i % 2 else None,
            line_start=i if i % 3 else None,
            created_at=WHEN,
            updated_at=WHEN,
        )
        for i in range(n)
    ]


def _out_facts(store: GremlinGraphStore, scope: Scope, roots: list[str]) -> list[Fact]:
    """Every fact leaving `roots` (a few per root), read 10 roots at a time (under the template's
    limit of 80 facts)."""
    out: list[Fact] = []
    for i in range(0, len(roots), 10):
        params = t.FactsFromRootsParams(roots=tuple(roots[i : i + 10]), direction="out", include_invalid=True)
        got = store.run(t.FACTS_FROM_ROOTS, scope, params)
        assert not got.truncated
        out.extend(got.facts)
    return out


def _fails_at(store: GremlinGraphStore, what: str, nth: int) -> list[int]:
    """Make the `nth` write of `what` fail as a server error before it is sent; returns the count of
    writes of `what` seen so far (a list, so the test can read it)."""
    original = store.write
    seen = [0]

    def write(traversal: Any, b: Any, name: str, *, idempotent: bool) -> list[Any]:
        if name == what and traversal.bytecode.step_instructions[-1][0] == "count":
            seen[0] += 1
            if seen[0] == nth:
                raise ServerError(f"injected failure of request {nth}")
        return original(traversal, b, name, idempotent=idempotent)

    store.write = write  # type: ignore[method-assign]
    return seen


def test_a_failure_mid_batch_leaves_whole_items_and_a_second_run_completes_it(
    small_budget_store: GremlinGraphStore,
) -> None:
    """Entities: the second request of a batch fails. What the first wrote is whole (every field),
    nothing of the failed request is half-written, and running the same batch again writes the rest
    (created) and reports the first request's items unchanged, their created_at kept. Facts: the same,
    with every fact one edge after the second run."""
    store, scope = small_budget_store, _scope()
    entities = _entities(150)
    original = store.write
    seen = _fails_at(store, "entity.upsert", 2)
    with pytest.raises(ServerError):
        store.run(t.ENTITY_UPSERT, scope, t.EntityUpsertParams(entities=tuple(entities)))
    assert seen[0] == 2
    got = store.run(t.ENTITY_GET, scope, t.EntityGetParams(ids=tuple(e.id for e in entities))).entities
    assert 0 < len(got) < len(entities)
    by_id = {e.id: e for e in entities}
    for stored in got:  # whole: every field as sent
        want = by_id[stored.id]
        assert stored.model_dump(exclude={"tenant_id", "namespace", "graph_id"}) == want.model_dump(
            exclude={"tenant_id", "namespace", "graph_id"}
        )
    store.write = original  # type: ignore[method-assign]
    later = [e.model_copy(update={"created_at": None, "updated_at": None}) for e in entities]
    again = store.run(t.ENTITY_UPSERT, scope, t.EntityUpsertParams(entities=tuple(later)))
    assert again == t.UpsertResult(created=len(entities) - len(got), unchanged=len(got))
    final = store.run(t.ENTITY_GET, scope, t.EntityGetParams(ids=tuple(e.id for e in entities))).entities
    assert len(final) == len(entities)
    assert all(e.created_at == WHEN for e in final if e.id in {g.id for g in got})

    facts = [
        Fact(subject_id=e.id, predicate=p, object_id=entities[(i + 7) % len(entities)].id, source="s" * 100,
             valid_from=WHEN)
        for i, e in enumerate(entities)
        for p in ("relates_to", "depends_on")
    ] + [Fact(subject_id=e.id, predicate="note", value=f"v{i}") for i, e in enumerate(entities)]  # fmt: skip
    seen = _fails_at(store, "fact.upsert", 3)
    with pytest.raises(ServerError):
        store.run(t.FACT_UPSERT, scope, t.FactUpsertParams(facts=tuple(facts)))
    store.write = original  # type: ignore[method-assign]
    roots = [e.id for e in entities]
    partial = _out_facts(store, scope, roots)
    assert 0 < len(partial) < len(facts)
    again = store.run(t.FACT_UPSERT, scope, t.FactUpsertParams(facts=tuple(facts)))
    assert again == t.UpsertResult(created=len(facts) - len(partial), unchanged=len(partial))
    final_facts = _out_facts(store, scope, roots)
    assert sorted(f.id for f in final_facts) == sorted(f.id for f in facts)  # one edge per fact
    assert all(f.valid_from == WHEN for f in final_facts if f.predicate != "note")
    store.run(t.SCOPE_CLEAR, scope, t.NoParams())


def test_a_split_batch_reads_back_whole_and_updates_in_rows(small_budget_store: GremlinGraphStore) -> None:
    """A batch over several requests reads back as sent; updating it (optional fields and aliases
    removed, facts moved to another object) leaves only the new versions, their created_at kept."""
    store, scope = small_budget_store, _scope()
    entities = _entities(120)
    store.run(t.ENTITY_UPSERT, scope, t.EntityUpsertParams(entities=tuple(entities)))
    facts = [
        Fact(id=f"f{i}", subject_id=e.id, predicate="relates_to", object_id=entities[(i + 1) % 120].id)
        for i, e in enumerate(entities)
    ]
    store.run(t.FACT_UPSERT, scope, t.FactUpsertParams(facts=tuple(facts)))
    bare = [
        e.model_copy(update={"aliases": (), "qualified_name": None, "line_start": None, "updated_at": None})
        for e in entities
    ]
    assert store.run(t.ENTITY_UPSERT, scope, t.EntityUpsertParams(entities=tuple(bare))).updated == 120
    got = {
        e.id: e
        for e in store.run(t.ENTITY_GET, scope, t.EntityGetParams(ids=tuple(e.id for e in entities))).entities
    }
    assert all(g.aliases == () and g.qualified_name is None and g.line_start is None for g in got.values())
    assert all(g.created_at == WHEN for g in got.values())
    exact = t.EntityFindExactParams(values=("a3",), fields=("alias",))
    assert store.run(t.ENTITY_FIND_EXACT, scope, exact).matches == ()
    moved = [f.model_copy(update={"object_id": entities[(i + 2) % 120].id}) for i, f in enumerate(facts)]
    assert store.run(t.FACT_UPSERT, scope, t.FactUpsertParams(facts=tuple(moved))).updated == 120
    final = _out_facts(store, scope, list(got))
    assert sorted((f.id, f.object_id) for f in final) == sorted((f.id, f.object_id) for f in moved)
    store.run(t.SCOPE_CLEAR, scope, t.NoParams())


def test_ids_named_like_the_row_writes_labels_are_plain_values(small_budget_store: GremlinGraphStore) -> None:
    """Entity ids (and fact ends) equal to the step labels, side-effect keys and row fields the row
    writes use are values like any other: a row looks its vertex up by the id's hex sort key, which
    can never name a label (keyed by the raw id, a new entity `row` or `ends` got the row or the map)."""
    from graphctx.adapters.gremlin.dialect import ROW_FIELDS

    store, scope = small_budget_store, _scope()
    ids = [*batch.STEP_KEYS, *ROW_FIELDS, "_b0", "_d0", "b0", "entity_id", "sort_key", "x"]
    entities = tuple(Entity(id=i, name=i, aliases=(i,)) for i in ids)
    assert store.run(t.ENTITY_UPSERT, scope, t.EntityUpsertParams(entities=entities)).created == len(ids)
    got = store.run(t.ENTITY_GET, scope, t.EntityGetParams(ids=tuple(ids))).entities
    assert [e.id for e in got] == ids
    facts = tuple(Fact(subject_id=i, predicate="relates_to", object_id=ids[0]) for i in ids) + tuple(
        Fact(subject_id=ids[0], predicate="note", value=i) for i in ids
    )
    assert store.run(t.FACT_UPSERT, scope, t.FactUpsertParams(facts=facts)).created == len(facts)
    assert store.run(t.FACT_UPSERT, scope, t.FactUpsertParams(facts=facts)).unchanged == len(facts)
    renamed = tuple(e.model_copy(update={"name": e.name + "!"}) for e in entities)
    assert store.run(t.ENTITY_UPSERT, scope, t.EntityUpsertParams(entities=renamed)).updated == len(ids)
    out = _out_facts(store, scope, ids)
    assert sorted(f.id for f in out) == sorted(f.id for f in facts)
    store.run(t.SCOPE_CLEAR, scope, t.NoParams())
