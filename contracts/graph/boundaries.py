"""The edges of every promise: instants to the microsecond, texts exactly at their bounds (and the
model refusing one byte more), control characters kept literally, a scope larger than any page or
batch an adapter might use, and ties larger than any limit.

Troubleshooting: a store that keeps seconds only (a DATETIME column, an epoch in seconds), trims or
normalises text (strip, NFC, a collation), pages with a fixed size of its own (an `IN (...)` list cut
at 999, a scroll of 1,000) or orders a page by storage order fails here. Since 1.2.0.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from graphctx import bounds
from graphctx.contracts import datasets
from graphctx.contracts._markers import requires
from graphctx.contracts.graph._common import (
    CLEAR,
    FACTS,
    FIND,
    FROM_ROOTS,
    GET,
    HASHES,
    NEIGHBOURHOOD,
    STATS,
    UPSERT,
    _GraphSubject,
    all_hashes,
    clear,
    edge,
    ent,
    entity_view,
    expected_entity,
    expected_fact,
    fact_view,
    find_exact,
    from_roots,
    get_entities,
    ids,
    load,
    neighbourhood,
    node_ids,
    stats,
    upsert_entities,
    upsert_facts,
    utc,
)
from graphctx.errors import InputError
from graphctx.kernel import templates as t
from graphctx.kernel.ports import GraphStore
from graphctx.kernel.reads import stored_hashes
from graphctx.model import Entity, Fact
from graphctx.scope import Scope

MICRO = timedelta(microseconds=1)
T_MICRO = datasets.T_MICRO
CONTROL = datasets.CONTROL_CHARACTERS
LARGE = datasets.LARGE_SCOPE
TIES = datasets.LARGE_TIES
sized = datasets.sized
large_ids = datasets.large_ids


class BoundaryTests(_GraphSubject):
    """Values at the edges of what the model allows come back exactly (module docstring)."""

    @requires(UPSERT, FACTS, GET, FROM_ROOTS, NEIGHBOURHOOD)
    def test_instants_keep_microseconds(self, graph_store: GraphStore, scope: Scope) -> None:
        """created_at, valid_from and valid_to keep microseconds, and validity is half-open to the
        microsecond: valid at valid_from, not one microsecond before; not valid at valid_to."""
        start, end = T_MICRO, T_MICRO + timedelta(days=1, microseconds=3)
        load(
            graph_store,
            scope,
            [ent("a", created_at=T_MICRO - MICRO), ent("b")],
            [edge("a", "b", "uses", id="f", valid_from=start, valid_to=end)],
        )
        (a, _) = get_entities(graph_store, scope, ["a", "b"])
        assert utc(a.created_at) == T_MICRO - MICRO, f"created_at came back as {a.created_at}"
        (f,) = from_roots(graph_store, scope, ["a"], include_invalid=True).facts
        assert (utc(f.valid_from), utc(f.valid_to)) == (start, end), (f.valid_from, f.valid_to)
        for as_of, valid in ((start - MICRO, False), (start, True), (end - MICRO, True), (end, False)):
            assert ids(from_roots(graph_store, scope, ["a"], as_of=as_of).facts) == (
                ["f"] if valid else []
            ), as_of
            want = [(0, "a"), (1, "b")] if valid else [(0, "a")]
            assert node_ids(neighbourhood(graph_store, scope, ["a"], as_of=as_of)) == want, as_of

    @requires(UPSERT, FACTS, GET, FROM_ROOTS, FIND)
    def test_texts_at_their_bounds_round_trip(self, graph_store: GraphStore, scope: Scope) -> None:
        """Every text exactly at its bound (id 512 B, name and alias 1 KiB, 64 aliases, summary and
        fact value 4 KiB, selectors 4 KiB, indexed-only search text 16 KiB) comes back byte for byte
        and is found by equality."""
        big = Entity(
            id=sized(bounds.ID_BYTES),
            name=sized(bounds.NAME_BYTES, "名"),
            aliases=(
                *(
                    sized(bounds.ALIAS_BYTES - 2, f"{i:02d}") + "ü"
                    for i in range(bounds.ALIASES_PER_ENTITY - 1)
                ),
                sized(bounds.ALIAS_BYTES, "ß"),
            ),
            summary=sized(bounds.SUMMARY_BYTES),
            qualified_name=sized(bounds.SELECTOR_BYTES, "q"),
            path=sized(bounds.SELECTOR_BYTES, "/"),
            signature=sized(bounds.SELECTOR_BYTES, ")"),
            source=sized(bounds.SELECTOR_BYTES, "s"),
            search_text=sized(bounds.SEARCH_TEXT_BYTES, "t"),
        )
        other = ent("other")
        value = Fact(
            subject_id=big.id,
            predicate="note",
            value=sized(bounds.FACT_VALUE_BYTES),
            id=sized(bounds.ID_BYTES, "f"),
        )
        load(
            graph_store,
            scope,
            [big, other],
            [value, edge(big.id, "other", "uses", source=sized(bounds.SELECTOR_BYTES))],
        )
        (got,) = get_entities(graph_store, scope, [big.id])
        assert entity_view(got) == expected_entity(big, scope), (
            "a text at its bound did not come back exactly"
        )
        facts = from_roots(graph_store, scope, [big.id], include_invalid=True).facts
        by_id = {f.id: f for f in facts}
        assert fact_view(by_id[value.id]) == expected_fact(value, scope)
        for probe, field in (
            (big.name, "name"),
            (big.aliases[-1], "alias"),
            (big.qualified_name or "", "qualified_name"),
            (big.id, "id"),
        ):
            assert [(m.entity.id, m.field) for m in find_exact(graph_store, scope, [probe])] == [
                (big.id, field)
            ], field

    def test_texts_over_their_bounds_never_reach_the_store(self) -> None:
        """One byte over any bound is refused by the model, so no store ever has to hold it."""
        over = [
            lambda: ent(sized(bounds.ID_BYTES + 1)),
            lambda: ent("x", sized(bounds.NAME_BYTES + 1)),
            lambda: ent("x", aliases=(sized(bounds.ALIAS_BYTES + 1),)),
            lambda: ent("x", aliases=tuple(f"a{i}" for i in range(bounds.ALIASES_PER_ENTITY + 1))),
            lambda: ent("x", summary=sized(bounds.SUMMARY_BYTES + 1)),
            lambda: ent("x", qualified_name=sized(bounds.SELECTOR_BYTES + 1)),
            lambda: ent("x", search_text=sized(bounds.SEARCH_TEXT_BYTES + 1)),
            lambda: Fact(subject_id="x", predicate="note", value=sized(bounds.FACT_VALUE_BYTES + 1)),
            lambda: ent("x", "has\x00nul"),
        ]
        for build in over:
            with pytest.raises((ValueError, InputError)):
                build()

    @requires(UPSERT, FACTS, GET, FROM_ROOTS, FIND)
    def test_control_characters_are_kept_literally(self, graph_store: GraphStore, scope: Scope) -> None:
        """Control characters, separators, a BOM and zero-width spaces in every text field are stored
        and returned exactly, and a name holding them is found by that exact name only."""
        weird = ent(
            f"id{CONTROL}end",
            f"name{CONTROL}end",
            aliases=(f"alias{CONTROL}",),
            summary=f"summary{CONTROL}",
            qualified_name=f"q{CONTROL}",
            signature=f"def f({CONTROL})",
            source=f"src{CONTROL}",
        )
        fact = Fact(subject_id=weird.id, predicate="note", value=f"value{CONTROL}", source=f"src{CONTROL}")
        load(graph_store, scope, [weird, ent("nameend")], [fact])
        (got,) = get_entities(graph_store, scope, [weird.id])
        assert entity_view(got) == expected_entity(weird, scope)
        (got_fact,) = from_roots(graph_store, scope, [weird.id]).facts
        assert fact_view(got_fact) == expected_fact(fact, scope)
        assert [m.entity.id for m in find_exact(graph_store, scope, [weird.name])] == [weird.id]
        assert [m.entity.id for m in find_exact(graph_store, scope, ["nameend"])] == ["nameend"]
        assert [m.entity.id for m in find_exact(graph_store, scope, [f"alias{CONTROL}"])] == [weird.id]
        assert find_exact(graph_store, scope, ["name end", "alias"]) == []

    @requires(UPSERT, HASHES, GET)
    def test_large_scope_hash_scan_is_complete_and_in_id_order(
        self, graph_store: GraphStore, scope: Scope, other_scope: Scope
    ) -> None:
        """More entities than any page or batch (2,100, in two scopes interleaved): the id-ordered hash
        scan reconcile uses returns every one exactly once, in code-point order, whatever the page
        size; a prefix scan stops at the prefix; 1,000 ids hydrate at once, in the order given."""
        all_ids = large_ids(LARGE)
        mine = [ent(i, summary=f"mine {n}") for n, i in enumerate(all_ids)]
        theirs = [ent(i, summary=f"theirs {n}") for n, i in enumerate(all_ids[::2])] + [ent("a-theirs-only")]
        for start in range(0, LARGE, 700):  # interleaved writes in batches of another size
            upsert_entities(graph_store, other_scope, theirs[start // 2 : (start + 700) // 2])
            upsert_entities(graph_store, scope, mine[start : start + 700])
        want = sorted((e.id, e.content_hash) for e in mine)
        for page in (1000, 5000, 333):
            got = [(h.id, h.content_hash) for h in stored_hashes(graph_store, scope, page=page)]
            assert len(got) == len(want), f"page {page}: {len(got)} of {len(want)} entities scanned"
            assert got == want, f"page {page}: the scan is not every entity once in id order"
        prefix = [(i, h) for i, h in want if i.startswith("a00")]  # (no id is the prefix itself)
        assert [(h.id, h.content_hash) for h in stored_hashes(graph_store, scope, "a00", page=7)] == prefix
        wanted = all_ids[1000:2000][::-1]
        assert ids(get_entities(graph_store, scope, wanted)) == wanted, "1,000 ids must hydrate in one call"

    @requires(UPSERT, FACTS, CLEAR, STATS, HASHES)
    def test_large_scope_clear_removes_every_entity_and_fact(
        self, graph_store: GraphStore, scope: Scope, other_scope: Scope
    ) -> None:
        """A clear of more entities than any page or batch (2,100, and 1,050 facts) removes and counts
        them all, and nothing of another scope. Since 1.6.0."""
        all_ids = large_ids(LARGE)
        facts = [edge(all_ids[i], all_ids[i + 1]) for i in range(0, LARGE, 2)]
        for start in range(0, LARGE, 700):
            upsert_entities(graph_store, scope, [ent(i) for i in all_ids[start : start + 700]])
        for start in range(0, len(facts), 700):
            upsert_facts(graph_store, scope, facts[start : start + 700])
        upsert_entities(graph_store, other_scope, [ent(all_ids[0])])
        assert clear(graph_store, scope) == LARGE + len(facts)
        assert stats(graph_store, scope) == t.ScopeStats()
        assert all_hashes(graph_store, scope) == []
        assert [i for i, _ in all_hashes(graph_store, other_scope)] == [all_ids[0]]

    @requires(UPSERT, FIND)
    def test_ties_larger_than_the_limit_cut_by_id(self, graph_store: GraphStore, scope: Scope) -> None:
        """150 entities with the same name, written in a shuffled order: every limit keeps the first
        ids, and the whole answer never holds more than 100."""
        order = [(i * 37) % TIES for i in range(TIES)]
        upsert_entities(graph_store, scope, [ent(f"t{i:03d}", "tied name", aliases=("tied",)) for i in order])
        want = [f"t{i:03d}" for i in range(TIES)]
        for limit in (1, 7, 50, 99, 100, 150):
            got = [m.entity.id for m in find_exact(graph_store, scope, ["TIED NAME"], limit=limit)]
            assert got == want[: min(limit, 100)], limit
        got = find_exact(graph_store, scope, ["tied", "tied name"], fields=("alias",), limit=100)
        assert [m.entity.id for m in got] == want[:100]
