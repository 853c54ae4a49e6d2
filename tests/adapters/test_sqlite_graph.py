"""The embedded SQLite graph store, driven through the public GraphStore interface."""

from __future__ import annotations

import random
import sqlite3
import threading
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from graphctx import bounds, deadlines
from graphctx.adapters.sqlite import SqliteGraphStore, create_graph_store
from graphctx.errors import (
    BackendError,
    BackendUnavailable,
    InputError,
    NotFound,
    ScopeError,
    UnsupportedTemplate,
)
from graphctx.kernel import templates as t
from graphctx.kernel import walk
from graphctx.kernel.ports import GraphStore
from graphctx.model import Entity, Fact
from graphctx.scope import Scope
from graphctx.settings import Settings

T0 = datetime(2025, 1, 1, tzinfo=UTC)
A = Scope("tenant-a", "default")
B = Scope("tenant-b", "default")


class Clock:
    """A pinned, steppable clock: timestamps are asserted by value, never by elapsed time."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now

    def step(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(clock: Clock) -> Any:
    s = SqliteGraphStore(":memory:", clock=clock)
    s.ensure_schema()
    yield s
    s.close()


def ent(i: str, name: str | None = None, **kw: Any) -> Entity:
    return Entity(id=i, name=name or i.upper(), **kw)


def edge(s: str, o: str, predicate: str = "calls", **kw: Any) -> Fact:
    return Fact(subject_id=s, predicate=predicate, object_id=o, **kw)


def upsert(store: GraphStore, scope: Scope, *entities: Entity) -> t.UpsertResult:
    return store.run(t.ENTITY_UPSERT, scope, t.EntityUpsertParams(entities=entities))


def add_facts(store: GraphStore, scope: Scope, *facts: Fact) -> t.UpsertResult:
    return store.run(t.FACT_UPSERT, scope, t.FactUpsertParams(facts=facts))


def get(store: GraphStore, scope: Scope, *ids: str) -> list[Entity]:
    return list(store.run(t.ENTITY_GET, scope, t.EntityGetParams(ids=ids)).entities)


def find(store: GraphStore, scope: Scope, *values: str, **kw: Any) -> list[tuple[str, str, str]]:
    result = store.run(t.ENTITY_FIND_EXACT, scope, t.EntityFindExactParams(values=values, **kw))
    return [(m.entity.id, m.field, m.value) for m in result.matches]


def hood(store: GraphStore, scope: Scope, *roots: str, **kw: Any) -> t.Subgraph:
    return store.run(t.NEIGHBOURHOOD, scope, t.NeighbourhoodParams(roots=roots, **kw))


def path(store: GraphStore, scope: Scope, source: str, target: str, **kw: Any) -> list[str]:
    result = store.run(t.SHORTEST_PATH, scope, t.ShortestPathParams(source=source, target=target, **kw))
    return [n.id for n in result.nodes]


def from_roots(store: GraphStore, scope: Scope, *roots: str, **kw: Any) -> t.FactList:
    return store.run(t.FACTS_FROM_ROOTS, scope, t.FactsFromRootsParams(roots=roots, **kw))


def pairs(facts: Any) -> list[tuple[str, str | None]]:
    return [(f.subject_id, f.object_id) for f in facts]


def nodes(sub: t.Subgraph) -> list[tuple[str, int]]:
    return [(n.entity.id, n.depth) for n in sub.nodes]


# ---- port, lifecycle, factories -------------------------------------------------------------------


def test_implements_the_port_with_every_catalogue_template(store: SqliteGraphStore) -> None:
    assert isinstance(store, GraphStore)
    assert store.name == "sqlite"
    assert store.capabilities.templates == frozenset(t.CATALOG)
    assert store.capabilities.durable is False  # ":memory:"


def test_factory_creates_the_data_dir_and_a_durable_wal_file(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "nested" / "data")
    store = create_graph_store(settings)
    try:
        assert store.capabilities.durable
        assert upsert(store, A, ent("a")).created == 1
    finally:
        store.close()
    db = tmp_path / "nested" / "data" / "graph.sqlite"
    assert db.is_file()
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_ensure_schema_is_idempotent_and_refuses_another_version(tmp_path: Path) -> None:
    db = tmp_path / "g.sqlite"
    store = SqliteGraphStore(db)
    store.ensure_schema()
    store.ensure_schema()
    store.close()
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE schema_version SET version = 999")
    store = SqliteGraphStore(db)
    with pytest.raises(BackendError, match="schema version 999"):
        store.ensure_schema()
    store.close()


def test_durable_across_close_and_reopen(tmp_path: Path) -> None:
    db = tmp_path / "g.sqlite"
    store = SqliteGraphStore(db)
    store.ensure_schema()
    upsert(store, A, ent("a", aliases=("alpha",)), ent("b"))
    add_facts(store, A, edge("a", "b"))
    store.close()
    reopened = SqliteGraphStore(db)
    reopened.ensure_schema()
    try:
        assert [e.id for e in get(reopened, A, "a", "b")] == ["a", "b"]
        assert find(reopened, A, "ALPHA") == [("a", "alias", "ALPHA")]
        assert pairs(from_roots(reopened, A, "a").facts) == [("a", "b")]
    finally:
        reopened.close()


def test_closed_store_raises_backend_unavailable(clock: Clock) -> None:
    store = SqliteGraphStore(":memory:", clock=clock)
    store.ensure_schema()
    store.close()
    store.close()  # idempotent
    with pytest.raises(BackendUnavailable):
        get(store, A, "a")


def test_unknown_template_and_wrong_inputs_are_typed_errors(store: SqliteGraphStore) -> None:
    fake = t.Template("entity.frobnicate", 1, t.EntityGetParams, t.EntityList, "not in the catalogue")
    with pytest.raises(UnsupportedTemplate):
        store.run(fake, A, t.EntityGetParams(ids=("a",)))
    wrong_version = t.Template("entity.get_by_ids", 99, t.EntityGetParams, t.EntityList, "future")
    with pytest.raises(UnsupportedTemplate):
        store.run(wrong_version, A, t.EntityGetParams(ids=("a",)))
    with pytest.raises(InputError):
        store.run(t.ENTITY_GET, A, t.EntityDeleteParams(ids=("a",)))
    with pytest.raises(ScopeError):
        store.run(t.ENTITY_GET, {"tenant_id": "tenant-a"}, t.EntityGetParams(ids=("a",)))  # type: ignore[arg-type]


# ---- entities ----------------------------------------------------------------------------------


def test_entity_upsert_counts_and_keeps_created_at(store: SqliteGraphStore, clock: Clock) -> None:
    assert upsert(store, A, ent("a"), ent("b")) == t.UpsertResult(created=2)
    clock.step(hours=1)
    result = upsert(store, A, ent("a"), ent("b", summary="changed"), ent("c"))
    assert result == t.UpsertResult(created=1, updated=1, unchanged=1)
    a, b, c = get(store, A, "a", "b", "c")
    assert a.created_at == a.updated_at == T0  # unchanged: not rewritten
    assert b.created_at == T0
    assert b.updated_at == T0 + timedelta(hours=1)
    assert b.summary == "changed"
    assert c.created_at == T0 + timedelta(hours=1)
    assert all(e.created_at and e.created_at.tzinfo is not None for e in (a, b, c))


def test_entity_upsert_uses_given_timestamps_and_fills_scope(store: SqliteGraphStore) -> None:
    given = datetime(2020, 5, 6, 7, 8, 9, tzinfo=timezone(timedelta(hours=2)))
    upsert(store, A, ent("a", created_at=given, updated_at=given + timedelta(days=1)))
    (a,) = get(store, A, "a")
    assert a.created_at == given
    assert a.created_at.utcoffset() == timedelta(0)  # returned in UTC
    assert a.updated_at == given + timedelta(days=1)
    assert (a.tenant_id, a.namespace, a.graph_id) == ("tenant-a", "default", "")


def test_naive_timestamps_are_read_as_utc(store: SqliteGraphStore) -> None:
    upsert(store, A, ent("a", created_at=datetime(2021, 1, 1, 12)))
    assert get(store, A, "a")[0].created_at == datetime(2021, 1, 1, 12, tzinfo=UTC)


def test_entity_upsert_rewrites_aliases(store: SqliteGraphStore) -> None:
    upsert(store, A, ent("a", aliases=("old", "both")))
    upsert(store, A, ent("a", aliases=("both", "new")))
    assert find(store, A, "old") == []
    assert find(store, A, "new") == [("a", "alias", "new")]
    assert get(store, A, "a")[0].aliases == ("both", "new")


def test_entity_carrying_another_scope_is_refused(store: SqliteGraphStore) -> None:
    with pytest.raises(ScopeError):
        upsert(store, A, ent("a", tenant_id="tenant-b"))
    assert get(store, A, "a") == []
    upsert(store, A, ent("a", tenant_id="tenant-a", namespace="default", graph_id=""))
    assert len(get(store, A, "a")) == 1


def test_get_by_ids_keeps_order_drops_missing_and_duplicates(store: SqliteGraphStore) -> None:
    upsert(store, A, ent("a"), ent("b"), ent("c"))
    assert [e.id for e in get(store, A, "c", "missing", "a", "c", "b", "a")] == ["c", "a", "b"]
    assert get(store, A) == []


def test_an_entity_read_back_carries_the_hash_of_its_fields(store: SqliteGraphStore) -> None:
    """The stored content hash is given to the entity read back (not computed again): it is the
    hash its fields give, with and without a search text, before and after a replacement."""
    first = ent("h1", summary="one", aliases=["x"], search_text="body words")
    upsert(store, A, first, ent("h2", qualified_name="m.h2", line_start=3, line_end=9))
    upsert(store, A, first.model_copy(update={"summary": "two"}))
    for got in get(store, A, "h1", "h2"):
        rebuilt = Entity.model_validate(got.model_dump())
        assert got.content_hash == rebuilt.content_hash
        assert got.model_copy(update={"summary": "other"}).content_hash != got.content_hash
    assert get(store, A, "h1")[0].content_hash == first.model_copy(update={"summary": "two"}).content_hash


def test_find_exact_fields_ranks_and_casefolding(store: SqliteGraphStore) -> None:
    upsert(
        store,
        A,
        ent("m1", "Straße", qualified_name="pkg.Mod.run"),
        ent("m2", "other", aliases=("STRASSE",)),
        ent("Straße", "x"),
        ent("m0", "strasse"),
    )
    # id is exact: "STRASSE" is not the id "Straße"; names and aliases compare casefolded
    assert find(store, A, "STRASSE") == [
        ("m0", "name", "STRASSE"),
        ("m1", "name", "STRASSE"),
        ("m2", "alias", "STRASSE"),
    ]
    assert find(store, A, "Straße") == [
        ("Straße", "id", "Straße"),
        ("m0", "name", "Straße"),
        ("m1", "name", "Straße"),
        ("m2", "alias", "Straße"),
    ]
    # qualified names are case-sensitive identifiers
    assert find(store, A, "pkg.Mod.run") == [("m1", "qualified_name", "pkg.Mod.run")]
    assert find(store, A, "PKG.MOD.RUN") == []


def test_find_exact_lists_an_entity_once_under_its_best_field(store: SqliteGraphStore) -> None:
    upsert(store, A, ent("dup", "dup", aliases=("dup",), qualified_name="dup"))
    assert find(store, A, "dup") == [("dup", "id", "dup")]
    assert find(store, A, "DUP") == [("dup", "name", "DUP")]
    assert find(store, A, "DUP", "dup", "Dup", fields=("alias",)) == [("dup", "alias", "DUP")]


def test_find_exact_honours_fields_and_limit(store: SqliteGraphStore) -> None:
    upsert(store, A, *(ent(f"e{i:02d}", "same", aliases=("al",)) for i in range(30)), ent("same", "zzz"))
    assert find(store, A, "same", fields=("name",), limit=3) == [
        ("e00", "name", "same"),
        ("e01", "name", "same"),
        ("e02", "name", "same"),
    ]
    got = find(store, A, "same", limit=2)
    assert got == [("same", "id", "same"), ("e00", "name", "same")]
    assert len(find(store, A, "same", "al")) == 31
    assert find(store, A, "al", fields=("id", "name")) == []


def test_find_exact_values_that_cannot_be_stored_match_nothing(store: SqliteGraphStore) -> None:
    upsert(store, A, ent("a"))
    assert find(store, A, "a\x00", "\ud800", "") == []


def test_entity_delete_removes_aliases_and_touching_facts(store: SqliteGraphStore) -> None:
    upsert(store, A, ent("a", aliases=("al",)), ent("b"), ent("c"))
    add_facts(
        store,
        A,
        edge("a", "b"),
        edge("c", "a"),
        edge("b", "c"),
        Fact(subject_id="a", predicate="note", value="v"),
    )
    result = store.run(t.ENTITY_DELETE, A, t.EntityDeleteParams(ids=("a", "a", "missing")))
    assert result == t.DeleteResult(deleted=1, facts_removed=3)
    assert get(store, A, "a") == []
    assert find(store, A, "al") == []
    assert pairs(from_roots(store, A, "b", "c").facts) == [("b", "c")]


def test_entity_hashes_pages_in_id_order(store: SqliteGraphStore) -> None:
    entities = [ent(i, summary=f"s{i}") for i in ("d", "b", "a", "c", "e")]
    upsert(store, A, *entities)
    expected = sorted((e.id, e.content_hash) for e in entities)
    page1 = store.run(t.ENTITY_HASHES, A, t.EntityHashesParams(limit=2)).items
    page2 = store.run(t.ENTITY_HASHES, A, t.EntityHashesParams(after=page1[-1].id, limit=2)).items
    page3 = store.run(t.ENTITY_HASHES, A, t.EntityHashesParams(after=page2[-1].id, limit=2)).items
    assert [(h.id, h.content_hash) for h in (*page1, *page2, *page3)] == expected
    assert store.run(t.ENTITY_HASHES, A, t.EntityHashesParams(after="e")).items == ()


# ---- facts ----------------------------------------------------------------------------------


def test_fact_upsert_needs_both_endpoints_in_scope(store: SqliteGraphStore) -> None:
    upsert(store, A, ent("a"), ent("b"))
    with pytest.raises(NotFound, match="ghost") as info:
        add_facts(store, A, edge("a", "b"), edge("a", "ghost"))
    assert info.value.details["entity_id"] == "ghost"
    with pytest.raises(NotFound, match="nobody"):
        add_facts(store, A, edge("nobody", "a"))
    with pytest.raises(NotFound, match="nobody"):
        add_facts(store, A, Fact(subject_id="nobody", predicate="note", value="v"))
    # the failing batch wrote nothing, not even its valid first fact
    assert from_roots(store, A, "a").facts == ()


def test_fact_upsert_counts_and_keeps_created_at(store: SqliteGraphStore, clock: Clock) -> None:
    upsert(store, A, ent("a"), ent("b"))
    first = edge("a", "b", id="f1")
    assert add_facts(
        store, A, first, Fact(subject_id="a", predicate="note", value="literal")
    ) == t.UpsertResult(created=2)
    clock.step(minutes=5)
    result = add_facts(store, A, first, edge("a", "b", id="f1", confidence=0.5))
    assert result == t.UpsertResult(updated=1, unchanged=1)
    (f1,) = [f for f in from_roots(store, A, "a").facts if f.id == "f1"]
    assert f1.confidence == 0.5
    assert f1.created_at == T0
    assert f1.updated_at == T0 + timedelta(minutes=5)
    assert (f1.tenant_id, f1.namespace, f1.graph_id) == ("tenant-a", "default", "")


def test_fact_invalidate_keeps_rows_and_only_shortens_validity(store: SqliteGraphStore) -> None:
    upsert(store, A, ent("a"), ent("b"), ent("c"))
    add_facts(store, A, edge("a", "b", id="ab"), edge("a", "c", id="ac"))
    end = T0 - timedelta(days=1)
    params = t.FactInvalidateParams(ids=("ab", "ab", "missing"), valid_to=end)
    assert store.run(t.FACT_INVALIDATE, A, params).count == 1
    assert store.run(t.FACT_INVALIDATE, A, params).count == 0
    later = t.FactInvalidateParams(ids=("ab",), valid_to=T0 + timedelta(days=9))
    assert store.run(t.FACT_INVALIDATE, A, later).count == 0
    assert [f.id for f in from_roots(store, A, "a").facts] == ["ac"]
    kept = from_roots(store, A, "a", include_invalid=True).facts
    assert [(f.id, f.valid_to) for f in kept] == [("ab", end), ("ac", None)]
    assert [f.id for f in from_roots(store, A, "a", as_of=end - timedelta(hours=1)).facts] == ["ab", "ac"]


def test_facts_from_roots_direction_predicates_validity_and_order(store: SqliteGraphStore) -> None:
    upsert(store, A, *(ent(i) for i in "abcdr"))
    future = T0 + timedelta(days=30)
    add_facts(
        store,
        A,
        edge("r", "c", "calls"),
        edge("r", "b", "imports"),
        edge("r", "a", "calls"),
        edge("d", "r", "calls"),
        edge("a", "r", "uses"),
        edge("r", "d", "calls", valid_from=future),
        edge("b", "c", "calls"),
        Fact(subject_id="r", predicate="note", value="a literal"),
    )
    assert pairs(from_roots(store, A, "r", direction="out").facts) == [
        ("r", "a"),
        ("r", "c"),
        ("r", "b"),
        ("r", None),
    ]
    assert pairs(from_roots(store, A, "r", direction="in").facts) == [("a", "r"), ("d", "r")]
    assert pairs(from_roots(store, A, "r").facts) == [
        ("a", "r"),
        ("d", "r"),
        ("r", "a"),
        ("r", "c"),
        ("r", "b"),
        ("r", None),
    ]
    assert pairs(from_roots(store, A, "r", predicates=("calls",)).facts) == [
        ("d", "r"),
        ("r", "a"),
        ("r", "c"),
    ]
    assert ("r", "d") in pairs(from_roots(store, A, "r", as_of=future).facts)
    assert ("r", "d") in pairs(from_roots(store, A, "r", include_invalid=True).facts)
    cut = from_roots(store, A, "r", limit=2)
    assert (pairs(cut.facts), cut.truncated) == ([("a", "r"), ("d", "r")], True)
    assert from_roots(store, A, "r", direction="in").truncated is False


# ---- neighbourhood ----------------------------------------------------------------------------


@pytest.fixture
def tree(store: SqliteGraphStore) -> SqliteGraphStore:
    """r -> a, b, c;  a -> a1, a2;  b -> b1;  x -> r;  r -[imports]-> m;  an expired r -> old."""
    upsert(store, A, *(ent(i) for i in ("r", "a", "b", "c", "a1", "a2", "b1", "x", "m", "old", "lonely")))
    add_facts(
        store,
        A,
        edge("r", "a"),
        edge("r", "b"),
        edge("r", "c"),
        edge("a", "a1"),
        edge("a", "a2"),
        edge("b", "b1"),
        edge("x", "r", "uses"),
        edge("r", "m", "imports"),
        edge("r", "old", valid_to=T0 - timedelta(days=1)),
        Fact(subject_id="r", predicate="note", value="no object: never an edge"),
    )
    return store


def test_neighbourhood_depth_one_and_two(tree: SqliteGraphStore) -> None:
    one = hood(tree, A, "r")
    assert nodes(one) == [("r", 0), ("a", 1), ("b", 1), ("c", 1), ("m", 1), ("x", 1)]
    assert pairs(one.edges) == [("r", "a"), ("r", "b"), ("r", "c"), ("r", "m"), ("x", "r")]
    assert (one.truncated, one.omitted) == (False, 0)
    two = hood(tree, A, "r", depth=2, direction="out")
    assert nodes(two) == [("r", 0), ("a", 1), ("b", 1), ("c", 1), ("m", 1), ("a1", 2), ("a2", 2), ("b1", 2)]


def test_neighbourhood_edge_allowlist_direction_and_missing_roots(tree: SqliteGraphStore) -> None:
    assert nodes(hood(tree, A, "r", edge_types=("imports", "uses"))) == [("r", 0), ("m", 1), ("x", 1)]
    assert nodes(hood(tree, A, "r", direction="in")) == [("r", 0), ("x", 1)]
    assert nodes(hood(tree, A, "a1", direction="in", depth=2)) == [("a1", 0), ("a", 1), ("r", 2)]
    assert nodes(hood(tree, A, "ghost", "lonely")) == [("lonely", 0)]
    assert hood(tree, A, "ghost").nodes == ()


def test_neighbourhood_respects_as_of(tree: SqliteGraphStore) -> None:
    past = T0 - timedelta(days=2)
    assert ("old", 1) in nodes(hood(tree, A, "r", as_of=past))
    assert ("old", 1) not in nodes(hood(tree, A, "r"))


def test_neighbourhood_limits_are_reported(tree: SqliteGraphStore) -> None:
    per_dir = hood(tree, A, "r", direction="out", per_direction_limit=2)
    assert nodes(per_dir) == [("r", 0), ("a", 1), ("b", 1)]
    assert (per_dir.truncated, per_dir.omitted) == (True, 2)  # r -> c and r -> m were not followed
    total = hood(tree, A, "r", depth=2, direction="out", limit=4)
    # roots do not count; at each hop the smallest new ids are kept
    assert nodes(total) == [("r", 0), ("a", 1), ("b", 1), ("c", 1), ("m", 1)]
    assert (total.truncated, total.omitted) == (True, 3)
    assert pairs(total.edges) == [("r", "a"), ("r", "b"), ("r", "c"), ("r", "m")]


def _reference_hop(facts: list[Fact], ids: set[str], p: t.NeighbourhoodParams) -> Any:
    """The catalogue's hop in plain Python: edges valid now, in the allowlist, between entities of
    the scope; per frontier node and direction the first `per_direction_limit` in catalogue order."""

    def hop(frontier: Any) -> walk.Hop:
        edges = [
            f
            for f in facts
            if f.object_id in ids and f.subject_id in ids and f.is_valid_at(T0)
            and (not p.edge_types or f.predicate in p.edge_types)
        ]  # fmt: skip
        steps, cut = [], 0
        for near in frontier:
            out = sorted(
                (f for f in edges if f.subject_id == near), key=lambda f: (f.predicate, f.object_id, f.id)
            )
            inn = sorted(
                (f for f in edges if f.object_id == near), key=lambda f: (f.subject_id, f.predicate, f.id)
            )
            for way, found in (("out", out), ("in", inn)):
                if p.direction in (way, "both"):
                    cut += max(0, len(found) - p.per_direction_limit)
                    for f in found[: p.per_direction_limit]:
                        steps.append(walk.Step(near, f.object_id if way == "out" else f.subject_id, f))
        return walk.Hop(sorted(steps, key=walk.step_order), cut)

    return hop


@pytest.mark.parametrize("seed", range(12))
def test_neighbourhood_matches_a_plain_python_walk(store: SqliteGraphStore, seed: int) -> None:
    """Random graphs (expired edges, edges to other scopes, parallel edges) and parameters: nodes,
    edges and omitted counts equal the catalogue's hop and walk written out in Python, whichever
    way the store reads a hop (past a node limit it reads most of the second hop thin)."""
    rng = random.Random(seed)
    ids = [f"n{i:02d}" for i in range(rng.randint(5, 40))]
    upsert(store, A, *(ent(i) for i in ids))
    upsert(store, B, *(ent(i) for i in ids[:5]))
    facts = [
        edge(rng.choice(ids), rng.choice(ids), rng.choice(("calls", "imports")),
             valid_to=T0 - timedelta(days=1) if rng.random() < 0.1 else None)
        for _ in range(rng.randint(0, 150))
    ]  # fmt: skip
    add_facts(store, A, *facts)
    add_facts(store, B, edge(ids[0], ids[1]), edge(ids[1], ids[2]))
    stored = list({f.id: f for f in facts}.values())  # a repeated edge is one fact (its id)
    for _ in range(25):
        p = t.NeighbourhoodParams(
            roots=tuple(rng.sample(ids, rng.randint(1, 5))),
            depth=rng.choice((1, 2)),
            limit=rng.choice((1, 3, 10, 200)),
            per_direction_limit=rng.choice((1, 2, 50)),
            direction=rng.choice(("out", "in", "both")),
            edge_types=rng.choice(((), ("calls",))),
        )
        want = walk.neighbourhood(
            p.roots, depth=p.depth, limit=p.limit, hop=_reference_hop(stored, set(ids), p),
            hydrate=lambda found: [ent(i) for i in found],
        )  # fmt: skip
        got = hood(store, A, *p.roots, **p.model_dump(exclude={"roots", "as_of"}))
        assert nodes(got) == nodes(want), p
        assert [f.id for f in got.edges] == [f.id for f in want.edges], p
        assert (got.truncated, got.omitted) == (want.truncated, want.omitted), p


def test_neighbourhood_clamps_depth_and_limits(store: SqliteGraphStore) -> None:
    chain = [f"n{i}" for i in range(6)]
    upsert(store, A, *(ent(i) for i in chain))
    add_facts(store, A, *(edge(s, o) for s, o in pairwise(chain)))
    deep = hood(store, A, "n0", depth=99, per_direction_limit=10_000, limit=10_000)
    assert nodes(deep) == [("n0", 0), ("n1", 1), ("n2", 2)]
    assert deep.truncated is False
    assert nodes(hood(store, A, "n0", depth=0, limit=0, per_direction_limit=0)) == [("n0", 0), ("n1", 1)]


def test_neighbourhood_is_deterministic_whatever_the_insertion_order(clock: Clock) -> None:
    ids = [f"k{i:02d}" for i in range(20)]
    facts = [edge(ids[i], ids[(i * 7 + 3) % 20]) for i in range(20)] + [edge("k00", i) for i in ids[1:]]
    results = []
    for order in (1, -1):
        s = SqliteGraphStore(":memory:", clock=clock)
        s.ensure_schema()
        upsert(s, A, *(ent(i) for i in ids[::order]))
        add_facts(s, A, *facts[::order])
        results.append(hood(s, A, "k00", "k05", depth=2, per_direction_limit=3, limit=8))
        results.append(hood(s, A, "k00", "k05", depth=2, per_direction_limit=3, limit=8))
        s.close()
    assert all(r == results[0] for r in results)
    sub = results[0]
    assert [n.depth for n in sub.nodes] == sorted(n.depth for n in sub.nodes)
    assert list(sub.edges) == sorted(sub.edges, key=lambda f: (f.subject_id, f.predicate, f.object_id, f.id))


# ---- shortest path ----------------------------------------------------------------------------


def test_shortest_path_prefers_the_smallest_id_sequence(store: SqliteGraphStore) -> None:
    upsert(store, A, *(ent(i) for i in ("s", "b", "a", "d", "c", "t", "z")))
    add_facts(store, A, edge("s", "b"), edge("b", "t"), edge("s", "a"), edge("a", "d"), edge("d", "t"))
    add_facts(store, A, edge("s", "c"), edge("c", "t"), edge("s", "z"), edge("z", "t"))
    result = store.run(t.SHORTEST_PATH, A, t.ShortestPathParams(source="s", target="t"))
    assert [n.id for n in result.nodes] == ["s", "b", "t"]
    assert pairs(result.edges) == [("s", "b"), ("b", "t")]
    assert all(n.tenant_id == "tenant-a" for n in result.nodes)


def test_shortest_path_direction_validity_and_bounds(store: SqliteGraphStore) -> None:
    chain = [f"p{i}" for i in range(6)]
    upsert(store, A, *(ent(i) for i in chain), ent("alone"))
    add_facts(store, A, *(edge(s, o) for s, o in pairwise(chain)))
    assert path(store, A, "p0", "p4") == chain[:5]
    assert path(store, A, "p0", "p5") == []  # 5 hops > PATH_MAX_DEPTH (max_depth=99 clamps to 4)
    assert path(store, A, "p0", "p5", max_depth=99) == []
    assert path(store, A, "p0", "p2", max_depth=1) == []
    assert path(store, A, "p2", "p0", direction="out") == []
    assert path(store, A, "p2", "p0", direction="in") == ["p2", "p1", "p0"]
    assert path(store, A, "p2", "p0") == ["p2", "p1", "p0"]
    assert path(store, A, "p1", "p1") == ["p1"]
    assert path(store, A, "p0", "alone") == []
    assert path(store, A, "p0", "ghost") == []
    assert path(store, A, "ghost", "ghost") == []
    store.run(t.FACT_INVALIDATE, A, t.FactInvalidateParams(ids=(edge("p1", "p2").id,), valid_to=T0))
    assert path(store, A, "p0", "p2") == []
    assert path(store, A, "p0", "p2", as_of=T0 - timedelta(seconds=1)) == ["p0", "p1", "p2"]


def test_shortest_path_edge_allowlist(store: SqliteGraphStore) -> None:
    upsert(store, A, *(ent(i) for i in "sabt"))
    add_facts(
        store,
        A,
        edge("s", "a", "calls"),
        edge("a", "t", "calls"),
        edge("s", "b", "uses"),
        edge("b", "t", "uses"),
    )
    assert path(store, A, "s", "t") == ["s", "a", "t"]
    assert path(store, A, "s", "t", edge_types=("uses",)) == ["s", "b", "t"]
    assert path(store, A, "s", "t", edge_types=("owns",)) == []


# ---- scope statistics and clear ---------------------------------------------------------------


def test_scope_stats_and_clear(store: SqliteGraphStore) -> None:
    upsert(store, A, ent("a", type="service"), ent("b", type="service"), ent("c", type="team"))
    add_facts(store, A, edge("a", "b"), edge("c", "a", "owns", valid_to=T0 - timedelta(days=1)))
    stats = store.run(t.SCOPE_STATS, A, t.NoParams())
    assert stats == t.ScopeStats(entities=3, facts=2, valid_facts=1, by_type={"service": 2, "team": 1})
    assert store.run(t.SCOPE_CLEAR, A, t.NoParams()).count == 5
    assert store.run(t.SCOPE_STATS, A, t.NoParams()) == t.ScopeStats()
    assert find(store, A, "a") == []


# ---- isolation --------------------------------------------------------------------------------

TWINS = (
    Scope("tenant-a"),
    Scope("tenant-b"),
    Scope("tenant-a", "other-ns"),
    Scope("tenant-a", "default", "graph-1"),
)


def seed_twin(store: GraphStore, scope: Scope) -> None:
    """Identical ids, names, aliases and facts in every scope; only the summary tells them apart."""
    tag = f"{scope.tenant_id}/{scope.namespace}/{scope.graph_id}"
    upsert(
        store,
        scope,
        *(ent(i, f"Name {i}", aliases=(f"alias-{i}",), qualified_name=f"q.{i}", summary=tag) for i in "abc"),
    )
    add_facts(store, scope, edge("a", "b", id="ab"), edge("b", "c", id="bc"))


def only(scope: Scope, entities: Any) -> bool:
    tag = f"{scope.tenant_id}/{scope.namespace}/{scope.graph_id}"
    entities = list(entities)
    return bool(entities) and all(
        (e.tenant_id, e.namespace, e.graph_id, e.summary)
        == (scope.tenant_id, scope.namespace, scope.graph_id, tag)
        for e in entities
    )


@pytest.mark.parametrize("victim", TWINS[1:], ids=lambda s: f"{s.tenant_id}-{s.namespace}-{s.graph_id}")
def test_twin_scopes_never_see_each_other(store: SqliteGraphStore, victim: Scope) -> None:
    me = TWINS[0]
    seed_twin(store, me)
    seed_twin(store, victim)
    assert only(me, get(store, me, "a", "b", "c"))
    values = ("a", "q.b", "name c", "ALIAS-A")
    matches = store.run(t.ENTITY_FIND_EXACT, me, t.EntityFindExactParams(values=values)).matches
    assert [(m.entity.id, m.field) for m in matches] == [("a", "id"), ("b", "qualified_name"), ("c", "name")]
    assert only(me, (m.entity for m in matches))
    assert len(store.run(t.ENTITY_HASHES, me, t.EntityHashesParams()).items) == 3
    facts = from_roots(store, me, "a", "b", "c").facts
    assert [f.id for f in facts] == ["ab", "bc"]
    assert all(
        (f.tenant_id, f.namespace, f.graph_id) == (me.tenant_id, me.namespace, me.graph_id) for f in facts
    )
    sub = hood(store, me, "a", depth=2)
    assert only(me, (n.entity for n in sub.nodes))
    assert len(sub.nodes) == 3
    assert only(me, store.run(t.SHORTEST_PATH, me, t.ShortestPathParams(source="a", target="c")).nodes)
    assert store.run(t.SCOPE_STATS, me, t.NoParams()).entities == 3

    # writes in one scope never touch the twin
    store.run(t.FACT_INVALIDATE, me, t.FactInvalidateParams(ids=("ab",), valid_to=T0))
    assert [f.id for f in from_roots(store, victim, "a").facts] == ["ab"]
    assert store.run(t.ENTITY_DELETE, me, t.EntityDeleteParams(ids=("b",))) == t.DeleteResult(
        deleted=1, facts_removed=2
    )
    assert only(victim, get(store, victim, "a", "b", "c"))
    assert path(store, victim, "a", "c") == ["a", "b", "c"]
    assert store.run(t.SCOPE_CLEAR, me, t.NoParams()).count == 2
    assert store.run(t.SCOPE_STATS, victim, t.NoParams()) == t.ScopeStats(
        entities=3, facts=2, valid_facts=2, by_type={"thing": 3}
    )


def test_a_fact_cannot_reach_an_entity_of_another_scope(store: SqliteGraphStore) -> None:
    upsert(store, A, ent("a"), ent("shared"))
    upsert(store, B, ent("b"))
    with pytest.raises(NotFound, match="shared"):
        add_facts(store, B, edge("b", "shared"))
    assert from_roots(store, B, "b").facts == ()


def test_a_tenant_only_in_another_scope_finds_nothing(store: SqliteGraphStore) -> None:
    seed_twin(store, A)
    empty = Scope("tenant-c")
    assert get(store, empty, "a") == []
    assert find(store, empty, "a", "Name a", "alias-a", "q.a") == []
    assert hood(store, empty, "a").nodes == ()
    assert from_roots(store, empty, "a").facts == ()
    assert path(store, empty, "a", "c") == []
    assert store.run(t.ENTITY_HASHES, empty, t.EntityHashesParams()).items == ()
    assert store.run(t.ENTITY_DELETE, empty, t.EntityDeleteParams(ids=("a",))) == t.DeleteResult()
    assert store.run(t.FACT_INVALIDATE, empty, t.FactInvalidateParams(ids=("ab",), valid_to=T0)).count == 0
    assert store.run(t.SCOPE_CLEAR, empty, t.NoParams()).count == 0
    assert store.run(t.SCOPE_STATS, A, t.NoParams()).entities == 3


# ---- injection payloads -----------------------------------------------------------------------

PAYLOADS = [
    "'; DROP TABLE entities; --",
    '" OR 1=1 --',
    "' OR '1'='1",
    "g.V().drop()",
    "g.V().hasLabel('entity').drop().iterate()",
    "x'); DELETE FROM facts WHERE ('1'='1",
    "%s %d {0} ?1 :name $1",
    "tab\tnew\nline\rcr\x01\x1f\x7f",
    "ünïcödé ß 𝔘𝔫𝔦 😀 中文 \u202e",
    '["json", {"k": 1}]',
    "\\'\\\"\\\\",
    "é" * 512,  # 1 KiB of UTF-8
]


@pytest.mark.parametrize("payload", PAYLOADS, ids=range(len(PAYLOADS)))
def test_injection_payloads_are_stored_and_found_literally(store: SqliteGraphStore, payload: str) -> None:
    # ids are bounded at 512 bytes, names at 1 KiB: the longest payload is a name, its prefix the id
    pid = payload if len(payload.encode()) <= bounds.ID_BYTES else payload[:100]
    other_alias = "!" + payload[1:]
    upsert(store, A, ent("bystander"))
    upsert(store, B, ent("other-tenant"))
    e = Entity(id=pid, name=payload, aliases=(payload, other_alias), qualified_name=payload, summary=payload)
    assert upsert(store, A, e).created == 1
    assert upsert(store, A, e).unchanged == 1
    (back,) = get(store, A, pid)
    assert (back.id, back.name, back.aliases, back.qualified_name, back.summary) == (
        pid,
        payload,
        e.aliases,
        payload,
        payload,
    )
    assert back.content_hash == e.content_hash
    best = "id" if pid == payload else "qualified_name"
    assert find(store, A, payload) == [(pid, best, payload)]
    assert find(store, A, payload, fields=("name",)) == [(pid, "name", payload)]
    assert find(store, A, other_alias, fields=("alias",)) == [(pid, "alias", other_alias)]
    note = Fact(id=pid, subject_id=pid, predicate="note", object_id="bystander", value=payload)
    add_facts(store, A, note)
    (fact,) = from_roots(store, A, pid).facts
    assert (fact.id, fact.value) == (pid, payload)
    assert nodes(hood(store, A, pid)) == [(pid, 0), ("bystander", 1)]
    assert path(store, A, "bystander", pid) == ["bystander", pid]
    # nothing was interpreted: both tables and the other tenant are intact
    assert store.run(t.SCOPE_STATS, A, t.NoParams()).entities == 2
    assert [x.id for x in get(store, B, "other-tenant")] == ["other-tenant"]
    assert find(store, A, "x" + payload) == []
    assert store.run(t.ENTITY_DELETE, A, t.EntityDeleteParams(ids=(pid,))) == t.DeleteResult(
        deleted=1, facts_removed=1
    )
    assert [x.id for x in get(store, A, "bystander")] == ["bystander"]


def test_lookup_payloads_do_not_widen_the_match(store: SqliteGraphStore) -> None:
    upsert(store, A, ent("a"), ent("b"))
    for payload in PAYLOADS[:7]:
        assert find(store, A, payload) == []
        assert get(store, A, payload) == []
        assert hood(store, A, payload).nodes == ()
    assert store.run(t.ENTITY_HASHES, A, t.EntityHashesParams(after="' OR 1=1 --")).items != ()
    with pytest.raises(InputError):
        store.run(t.ENTITY_HASHES, A, t.EntityHashesParams(after="\ud800"))


# ---- sharing one store between threads --------------------------------------------------------


@dataclass
class _Failure:
    error: BaseException | None = None


def test_one_store_shared_by_threads(tmp_path: Path) -> None:
    store = SqliteGraphStore(tmp_path / "g.sqlite")
    store.ensure_schema()
    failure = _Failure()

    def work(n: int) -> None:
        try:
            scope = Scope(f"tenant-{n % 2}")
            for i in range(25):
                upsert(store, scope, ent(f"t{n}-{i}"))
                get(store, scope, f"t{n}-{i}")
                find(store, scope, f"T{n}-{i}")
        except BaseException as exc:  # pragma: no cover - reported below
            failure.error = exc

    threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    try:
        assert failure.error is None
        assert store.run(t.SCOPE_STATS, Scope("tenant-0"), t.NoParams()).entities == 75
        assert store.run(t.SCOPE_STATS, Scope("tenant-1"), t.NoParams()).entities == 75
    finally:
        store.close()


def test_another_writer_holding_the_database_costs_a_write_its_deadline_not_the_busy_timeout(
    tmp_path: Path, clock: Clock
) -> None:
    """Another process holds the write lock (here: a second connection in a write transaction). With
    a 600 s busy timeout, a write inside a 1 s operation deadline gives up at the deadline with a typed
    backend_unavailable; outside any operation it waits for the lock as before."""
    path = tmp_path / "graph.db"
    store = SqliteGraphStore(path, timeout_s=600.0, clock=clock)
    store.ensure_schema()
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    upsert = t.EntityUpsertParams(entities=(Entity(id="a", name="a"),))
    outcome: list[BaseException] = []

    def write() -> None:
        with deadlines.within(1.0):
            try:
                store.run(t.ENTITY_UPSERT, A, upsert)
            except BaseException as exc:  # reported below
                outcome.append(exc)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    writer.join(timeout=120)  # the busy timeout would hold it 600 s: only the deadline ends it sooner
    assert not writer.is_alive(), "the write waited past its deadline for the other writer's lock"
    assert len(outcome) == 1 and isinstance(outcome[0], BackendUnavailable)
    assert "locked by another writer" in outcome[0].message
    threading.Timer(0.5, other.execute, args=("COMMIT",)).start()  # the other writer finishes soon
    assert store.run(t.ENTITY_UPSERT, A, upsert).created == 1
    other.close()
    store.close()


def test_readers_outnumbering_the_read_connections_wait_their_turn_not_fail(tmp_path: Path) -> None:
    """More reading threads than pooled read connections, beside a writer: a reader waits for a
    connection another thread of this process holds (queueing, bounded by the operation's deadline
    only), it is never told the store is unavailable. The busy timeout (a lock held by another
    process) is tiny here so a wait bounded by it would give up at once."""
    path = tmp_path / "graph.db"
    store = SqliteGraphStore(path, timeout_s=0.001, read_connections=2)
    store.ensure_schema()
    upsert(store, A, ent("seed"))
    failures: list[BaseException] = []

    def read(n: int) -> None:
        try:
            for i in range(60):
                assert [e.id for e in get(store, A, "seed")] == ["seed"]
                find(store, A, f"R{n}-{i}")
        except BaseException as exc:  # reported below
            failures.append(exc)

    def write() -> None:
        try:
            for i in range(60):
                upsert(store, A, ent(f"w{i}"))
        except BaseException as exc:  # reported below
            failures.append(exc)

    threads = [threading.Thread(target=read, args=(n,)) for n in range(12)]
    threads.append(threading.Thread(target=write))
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    try:
        assert failures == []
        assert store.run(t.SCOPE_STATS, A, t.NoParams()).entities == 61
    finally:
        store.close()


# ---- reads decode only what they answer (issue 14 item 3) ---------------------------------------


class Decoded:
    """Counts the stored rows a read decodes into models (Entity.from_store / Fact.from_store)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.entities: list[str] = []
        self.facts: list[str] = []
        for model, seen in ((Entity, self.entities), (Fact, self.facts)):
            real = model.from_store

            def counted(real: Any = real, seen: list[str] = seen, **fields: Any) -> Any:
                seen.append(fields["id"])
                return real(**fields)

            monkeypatch.setattr(model, "from_store", counted)


def test_a_traversal_decodes_each_fact_once_and_only_the_entities_it_answers(
    tree: SqliteGraphStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both directions, two hops: r -> a is met from r (out), from a (in) and again on the second
    hop; it is one fact, decoded once. The roots' check reads ids only: the entities decoded are
    the nodes answered, each once."""
    decoded = Decoded(monkeypatch)
    sub = hood(tree, A, "r", "a", depth=2)
    assert sorted(decoded.facts) == sorted({f.id for f in sub.edges}) and sub.edges
    assert sorted(decoded.entities) == sorted(n.entity.id for n in sub.nodes)
    decoded.facts.clear()
    found = tree.run(t.SHORTEST_PATH, A, t.ShortestPathParams(source="a1", target="x", direction="both"))
    assert [n.id for n in found.nodes] == ["a1", "a", "r", "x"]
    assert len(decoded.facts) == len(set(decoded.facts))


def test_facts_between_two_roots_are_decoded_once(
    tree: SqliteGraphStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    decoded = Decoded(monkeypatch)
    got = from_roots(tree, A, "r", "a", "x")  # r -> a and x -> r come back from both statements
    assert sorted(decoded.facts) == sorted(f.id for f in got.facts)
    assert ("r", "a") in pairs(got.facts) and ("x", "r") in pairs(got.facts)


def test_read_answers_equal_their_validated_form(tree: SqliteGraphStore) -> None:
    """Results are assembled from decoded models without validating them again: the same values a
    validating construction makes, with the same types (tuples), for every read the trunk makes."""
    facts = from_roots(tree, A, "r", "a")
    assert facts == t.FactList.model_validate(facts.model_dump()) and isinstance(facts.facts, tuple)
    hydrated = tree.run(t.ENTITY_GET, A, t.EntityGetParams(ids=("r", "a", "ghost")))
    assert hydrated == t.EntityList.model_validate(hydrated.model_dump())
    exact = tree.run(t.ENTITY_FIND_EXACT, A, t.EntityFindExactParams(values=("r", "A")))
    assert exact == t.ExactMatches.model_validate(exact.model_dump()) and len(exact.matches) == 2
    sub = hood(tree, A, "r", depth=2)
    assert sub == t.Subgraph.model_validate(sub.model_dump())
    found = tree.run(t.SHORTEST_PATH, A, t.ShortestPathParams(source="r", target="a1"))
    assert found == t.PathResult.model_validate(found.model_dump()) and len(found.nodes) == 3
