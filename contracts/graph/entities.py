"""The entity templates: entity.upsert, entity.get_by_ids, entity.find_exact, entity.delete and
entity.hashes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from graphctx.contracts import datasets
from graphctx.contracts._markers import requires
from graphctx.contracts.graph._common import (
    DELETE,
    FACTS,
    FIND,
    FROM_ROOTS,
    GET,
    HASHES,
    UPSERT,
    _GraphSubject,
    _matches,
    all_hashes,
    code,
    delete_entities,
    edge,
    ent,
    entity_view,
    expected_entity,
    expected_from_roots,
    find_exact,
    from_roots,
    get_entities,
    hash_page,
    ids,
    load,
    memory,
    modified,
    upsert_entities,
    utc,
)
from graphctx.kernel import templates as t
from graphctx.kernel.ports import GraphStore
from graphctx.scope import Scope

# ---- entity.upsert ----------------------------------------------------------------------------


class EntityUpsertTests(_GraphSubject):
    """entity.upsert: insert or replace by id; created_at kept on replace."""

    @requires(UPSERT)
    def test_entity_upsert_reports_created(self, graph_store: GraphStore, scope: Scope) -> None:
        """Upserting new entities reports each one as created."""
        entities, _ = memory()
        assert upsert_entities(graph_store, scope, entities) == t.UpsertResult(created=len(entities))

    @requires(UPSERT, GET)
    def test_entity_upsert_visible_to_next_run(self, graph_store: GraphStore, scope: Scope) -> None:
        """An upserted entity is returned by the very next run(), every field equal, the scope filled in."""
        entities = datasets.memory_entities() + datasets.code_entities()
        upsert_entities(graph_store, scope, entities)
        got = get_entities(graph_store, scope, ids(entities))
        assert [entity_view(e) for e in got] == [expected_entity(e, scope) for e in entities]

    @requires(UPSERT, GET)
    def test_entity_upsert_replace_reports_updated(self, graph_store: GraphStore, scope: Scope) -> None:
        """Upserting an existing id with changed content replaces every field and reports it as updated."""
        entities, _ = code()
        upsert_entities(graph_store, scope, entities)
        changed = modified(entities[2], name="Basket", summary="renamed", line_end=70, signature=None)
        assert upsert_entities(graph_store, scope, [changed]) == t.UpsertResult(updated=1)
        (got,) = get_entities(graph_store, scope, [changed.id])
        assert entity_view(got) == expected_entity(changed, scope)

    @requires(UPSERT)
    def test_entity_upsert_identical_reports_unchanged(self, graph_store: GraphStore, scope: Scope) -> None:
        """Re-upserting entities equal in every field but timestamps reports them unchanged."""
        entities, _ = memory()
        upsert_entities(graph_store, scope, entities)
        again = [e.model_copy(update={"updated_at": datasets.T_NOW}) for e in entities]
        assert upsert_entities(graph_store, scope, again) == t.UpsertResult(unchanged=len(entities))

    @requires(UPSERT)
    def test_entity_upsert_counts_a_mixed_batch(self, graph_store: GraphStore, scope: Scope) -> None:
        """A batch of new, changed and identical entities is counted as created, updated and unchanged."""
        upsert_entities(graph_store, scope, [ent("a"), ent("b")])
        result = upsert_entities(graph_store, scope, [ent("a"), ent("b", summary="changed"), ent("c")])
        assert result == t.UpsertResult(created=1, updated=1, unchanged=1)

    @requires(UPSERT, GET)
    def test_entity_upsert_keeps_created_at_on_replace(self, graph_store: GraphStore, scope: Scope) -> None:
        """A replace keeps the stored created_at, even when the new version carries another one."""
        upsert_entities(graph_store, scope, [ent("given", created_at=datasets.T0), ent("stamped")])
        (given, stamped) = get_entities(graph_store, scope, ["given", "stamped"])
        assert utc(given.created_at) == datasets.T0
        assert stamped.created_at is not None
        upsert_entities(
            graph_store,
            scope,
            [ent("given", summary="v2", created_at=datasets.T_NOW), ent("stamped", summary="v2")],
        )
        (given2, stamped2) = get_entities(graph_store, scope, ["given", "stamped"])
        assert (given2.summary, stamped2.summary) == ("v2", "v2")
        assert utc(given2.created_at) == datasets.T0
        assert utc(stamped2.created_at) == utc(stamped.created_at)

    @requires(UPSERT, GET)
    def test_entity_upsert_sets_updated_at(self, graph_store: GraphStore, scope: Scope) -> None:
        """Every stored entity has an updated_at, no earlier than its created_at, also after a replace."""
        upsert_entities(graph_store, scope, [ent("a"), ent("b")])
        upsert_entities(graph_store, scope, [ent("a", summary="changed")])
        for e in get_entities(graph_store, scope, ["a", "b"]):
            assert e.updated_at is not None and e.created_at is not None, e.id
            assert utc(e.updated_at) >= utc(e.created_at), e.id  # type: ignore[operator]

    @requires(UPSERT, GET)
    def test_entity_upsert_timestamps_follow_the_rules(self, graph_store: GraphStore, scope: Scope) -> None:
        """A new entity keeps the created_at and updated_at it is given; a replace keeps the stored
        created_at and takes the updated_at it is given (or the current time); an unchanged entity
        keeps both. Since 1.5.0."""

        def stamps() -> tuple[datetime | None, datetime | None]:
            (got,) = get_entities(graph_store, scope, ["a"])
            return utc(got.created_at), utc(got.updated_at)

        first = ent("a", summary="v1", created_at=datasets.T0, updated_at=datasets.T0)
        assert upsert_entities(graph_store, scope, [first]) == t.UpsertResult(created=1)
        assert stamps() == (datasets.T0, datasets.T0)
        changed = ent("a", summary="v2", created_at=datasets.T_NOW, updated_at=datasets.T_CHANGE)
        assert upsert_entities(graph_store, scope, [changed]) == t.UpsertResult(updated=1)
        assert stamps() == (datasets.T0, datasets.T_CHANGE), "a replace takes the updated_at it is given"
        same = ent("a", summary="v2", created_at=datasets.T_NOW, updated_at=datasets.T_NOW)
        assert upsert_entities(graph_store, scope, [same]) == t.UpsertResult(unchanged=1)
        assert stamps() == (datasets.T0, datasets.T_CHANGE), "an unchanged entity keeps its timestamps"
        before = datetime.now(UTC) - timedelta(minutes=5)
        assert upsert_entities(graph_store, scope, [ent("a", summary="v3")]) == t.UpsertResult(updated=1)
        created, updated = stamps()
        assert created == datasets.T0
        assert updated is not None and updated >= before, "a replace without updated_at is stamped now"

    @requires(UPSERT, GET, HASHES)
    def test_entity_upsert_batch_repeating_an_id_applies_in_order(
        self, graph_store: GraphStore, scope: Scope
    ) -> None:
        """A batch that names one id several times applies its versions in order: each is counted
        against what the one before it left (created, then updated or unchanged), the last one is
        stored, and it stays one entity. Since 1.5.0."""
        v1, v2 = ent("a", summary="v1", aliases=("one",)), ent("a", summary="v2")
        assert upsert_entities(graph_store, scope, [v1, v2, ent("b"), v2]) == t.UpsertResult(
            created=2, updated=1, unchanged=1
        )
        assert [entity_view(e) for e in get_entities(graph_store, scope, ["a"])] == [
            expected_entity(v2, scope)
        ]
        assert upsert_entities(graph_store, scope, [v2, v1]) == t.UpsertResult(updated=1, unchanged=1)
        assert [entity_view(e) for e in get_entities(graph_store, scope, ["a"])] == [
            expected_entity(v1, scope)
        ]
        assert [i for i, _ in all_hashes(graph_store, scope)] == ["a", "b"]

    @requires(UPSERT, GET, FIND)
    def test_entity_upsert_visible_to_reads_made_before(self, graph_store: GraphStore, scope: Scope) -> None:
        """An entity read before a replace comes back in its new version from the next read."""
        upsert_entities(graph_store, scope, [ent("a", summary="v1", aliases=("old",))])
        assert [e.summary for e in get_entities(graph_store, scope, ["a"])] == ["v1"]
        assert [m.entity.summary for m in find_exact(graph_store, scope, ["a", "old"])] == ["v1"]
        upsert_entities(graph_store, scope, [ent("a", summary="v2", aliases=("new",))])
        assert [(e.summary, e.aliases) for e in get_entities(graph_store, scope, ["a"])] == [("v2", ("new",))]
        assert [m.entity.summary for m in find_exact(graph_store, scope, ["a"])] == ["v2"]
        assert find_exact(graph_store, scope, ["old"]) == []

    @requires(UPSERT, GET, FIND)
    def test_entity_upsert_replaces_aliases(self, graph_store: GraphStore, scope: Scope) -> None:
        """A replace drops aliases the new version lacks: they no longer find the entity."""
        upsert_entities(graph_store, scope, [ent("a", aliases=("old", "both"))])
        upsert_entities(graph_store, scope, [ent("a", aliases=("both", "new"))])
        assert find_exact(graph_store, scope, ["old"]) == []
        assert [(m.entity.id, m.field) for m in find_exact(graph_store, scope, ["new", "both"])] == [
            ("a", "alias")
        ]
        assert get_entities(graph_store, scope, ["a"])[0].aliases == ("both", "new")

    @requires(UPSERT, GET, HASHES)
    def test_entity_upsert_of_reordered_aliases_is_an_update(
        self, graph_store: GraphStore, scope: Scope
    ) -> None:
        """Aliases are a sequence: a version that only reorders them changes the content hash, is
        reported updated and reads back in its new order (compared as a set, the store would keep the
        old order and a hash that reconcile finds stale on every pass). Since 1.6.0."""
        first, second = ent("a", aliases=("one", "two")), ent("a", aliases=("two", "one"))
        upsert_entities(graph_store, scope, [first])
        assert upsert_entities(graph_store, scope, [second]) == t.UpsertResult(updated=1)
        assert get_entities(graph_store, scope, ["a"])[0].aliases == ("two", "one")
        assert hash_page(graph_store, scope) == [("a", second.content_hash)]

    @requires(UPSERT, GET, FIND)
    def test_entity_upsert_keeps_aliases_that_differ_only_in_case(
        self, graph_store: GraphStore, scope: Scope
    ) -> None:
        """Aliases that differ only in letter case (`PayGW`, `paygw`) are stored as given, and an exact
        lookup in any case finds the entity once (an alias key that folds case must not refuse the
        second one). Since 1.6.0."""
        pg = ent("pg", "Payment gateway", aliases=("PayGW", "paygw"))
        assert upsert_entities(graph_store, scope, [pg]) == t.UpsertResult(created=1)
        assert get_entities(graph_store, scope, ["pg"])[0].aliases == ("PayGW", "paygw")
        assert [(m.entity.id, m.field) for m in find_exact(graph_store, scope, ["PAYGW"])] == [
            ("pg", "alias")
        ]

    @requires(UPSERT, GET)
    def test_entity_upsert_accepts_entities_read_back(self, graph_store: GraphStore, scope: Scope) -> None:
        """Entities read from the store (carrying their scope) can be written back unchanged."""
        entities, _ = code()
        upsert_entities(graph_store, scope, entities)
        read = get_entities(graph_store, scope, ids(entities))
        assert upsert_entities(graph_store, scope, read) == t.UpsertResult(unchanged=len(entities))
        assert [entity_view(e) for e in get_entities(graph_store, scope, ids(entities))] == [
            entity_view(e) for e in read
        ]

    @requires(UPSERT, HASHES)
    def test_entity_upsert_empty_batch_changes_nothing(self, graph_store: GraphStore, scope: Scope) -> None:
        """An empty batch reports zero counts and leaves the scope as it was."""
        upsert_entities(graph_store, scope, [ent("a")])
        before = all_hashes(graph_store, scope)
        assert upsert_entities(graph_store, scope, []) == t.UpsertResult()
        assert all_hashes(graph_store, scope) == before


# ---- entity.get_by_ids ------------------------------------------------------------------------


class GetByIdsTests(_GraphSubject):
    """entity.get_by_ids: hydration in the order given; missing ids absent."""

    @requires(UPSERT, GET)
    def test_get_by_ids_follows_given_order(self, graph_store: GraphStore, scope: Scope) -> None:
        """Entities come back in the order of the ids given, not in id or insertion order."""
        entities, _ = memory()
        upsert_entities(graph_store, scope, entities)
        wanted = ["team-pay", "adr-12", "svc-checkout", "db-redis", "svc-pay"]
        assert ids(get_entities(graph_store, scope, wanted)) == wanted
        assert ids(get_entities(graph_store, scope, reversed(wanted))) == wanted[::-1]

    @requires(UPSERT, GET)
    def test_get_by_ids_omits_missing(self, graph_store: GraphStore, scope: Scope) -> None:
        """Ids that do not exist in the scope are absent from the answer, not an error."""
        entities, _ = memory()
        upsert_entities(graph_store, scope, entities)
        got = get_entities(graph_store, scope, ["missing-1", "svc-pay", "missing-2", "team-com"])
        assert ids(got) == ["svc-pay", "team-com"]
        assert get_entities(graph_store, scope, ["missing-1"]) == []

    @requires(UPSERT, GET)
    def test_get_by_ids_lists_duplicates_once(self, graph_store: GraphStore, scope: Scope) -> None:
        """An id given twice is returned once, at its first position."""
        upsert_entities(graph_store, scope, [ent("a"), ent("b"), ent("c")])
        assert ids(get_entities(graph_store, scope, ["c", "a", "c", "b", "a"])) == ["c", "a", "b"]

    @requires(UPSERT, GET)
    def test_get_by_ids_empty_ids_returns_nothing(self, graph_store: GraphStore, scope: Scope) -> None:
        """No ids, no entities (never the whole scope)."""
        upsert_entities(graph_store, scope, [ent("a")])
        assert get_entities(graph_store, scope, []) == []

    @requires(UPSERT, GET)
    def test_get_by_ids_ids_are_exact(self, graph_store: GraphStore, scope: Scope) -> None:
        """Ids compare exactly: another case, a prefix or surrounding space does not match."""
        upsert_entities(graph_store, scope, [ent("svc-Pay")])
        assert get_entities(graph_store, scope, ["svc-pay", "SVC-PAY", "svc-", " svc-Pay", "svc-Pay "]) == []
        assert ids(get_entities(graph_store, scope, ["svc-Pay"])) == ["svc-Pay"]


class FindExactTests(_GraphSubject):
    """entity.find_exact: equality on id, qualified name, name and alias."""

    @requires(UPSERT, FIND)
    def test_find_exact_by_each_field(self, graph_store: GraphStore, scope: Scope) -> None:
        """Each identifier field finds its entity, reported under that field with the value given."""
        load(graph_store, scope, *code())
        load(graph_store, scope, *memory())
        assert _matches(find_exact(graph_store, scope, ["m-add"])) == [("m-add", "id", "m-add")]
        assert _matches(find_exact(graph_store, scope, ["shop.cart.Cart"])) == [
            ("cls-cart", "qualified_name", "shop.cart.Cart")
        ]
        assert _matches(find_exact(graph_store, scope, ["payment-gateway"])) == [
            ("svc-pay", "name", "payment-gateway")
        ]
        assert _matches(find_exact(graph_store, scope, ["pgw"])) == [("svc-pay", "alias", "pgw")]

    @requires(UPSERT, FIND)
    def test_find_exact_returns_whole_entity(self, graph_store: GraphStore, scope: Scope) -> None:
        """A match carries the entity with every field, in the caller's scope."""
        entities, _ = code()
        upsert_entities(graph_store, scope, entities)
        (match,) = find_exact(graph_store, scope, ["shop.cart.Cart.add_item"])
        assert entity_view(match.entity) == expected_entity(entities[3], scope)

    @requires(UPSERT, FIND)
    def test_find_exact_names_and_aliases_casefolded(self, graph_store: GraphStore, scope: Scope) -> None:
        """Names and aliases compare casefolded (ß equals SS), and the given spelling is reported."""
        upsert_entities(graph_store, scope, [ent("m1", "Straße"), ent("m2", "other", aliases=("STRASSE",))])
        assert _matches(find_exact(graph_store, scope, ["strasse"])) == [
            ("m1", "name", "strasse"),
            ("m2", "alias", "strasse"),
        ]
        assert _matches(find_exact(graph_store, scope, ["sTRAßE"])) == [
            ("m1", "name", "sTRAßE"),
            ("m2", "alias", "sTRAßE"),
        ]

    @requires(UPSERT, FIND)
    def test_find_exact_ids_and_qualified_names_case_sensitive(
        self, graph_store: GraphStore, scope: Scope
    ) -> None:
        """Ids and qualified names compare exactly: another case does not match them."""
        upsert_entities(graph_store, scope, [ent("Node-A", "zzz", qualified_name="pkg.Mod.run")])
        assert find_exact(graph_store, scope, ["node-a", "NODE-A", "PKG.MOD.RUN", "pkg.mod.run"]) == []
        assert _matches(find_exact(graph_store, scope, ["Node-A", "pkg.Mod.run"])) == [
            ("Node-A", "id", "Node-A")
        ]

    @requires(UPSERT, FIND)
    def test_find_exact_orders_by_field_rank_then_id(self, graph_store: GraphStore, scope: Scope) -> None:
        """Id matches come first, then qualified names, names, aliases; within a field, by entity id."""
        upsert_entities(
            graph_store,
            scope,
            [
                ent("b-alias", "zzz", aliases=("x",)),
                ent("a-alias", "zzz", aliases=("X",)),
                ent("b-name", "x"),
                ent("a-name", "X"),
                ent("z-qn", "zzz", qualified_name="x"),
                ent("x", "zzz"),
            ],
        )
        assert _matches(find_exact(graph_store, scope, ["x"])) == [
            ("x", "id", "x"),
            ("z-qn", "qualified_name", "x"),
            ("a-name", "name", "x"),
            ("b-name", "name", "x"),
            ("a-alias", "alias", "x"),
            ("b-alias", "alias", "x"),
        ]

    @requires(UPSERT, FIND)
    def test_find_exact_lists_entity_once_under_best_field(
        self, graph_store: GraphStore, scope: Scope
    ) -> None:
        """An entity matching several fields or values is listed once, under its best-ranked field."""
        upsert_entities(
            graph_store, scope, [ent("dup", "dup", aliases=("dup", "DUP2"), qualified_name="dup")]
        )
        assert _matches(find_exact(graph_store, scope, ["dup"])) == [("dup", "id", "dup")]
        assert [(e, f) for e, f, _ in _matches(find_exact(graph_store, scope, ["DUP", "dup2"]))] == [
            ("dup", "name")
        ]

    @requires(UPSERT, FIND)
    def test_find_exact_reports_the_first_given_value_that_matched(
        self, graph_store: GraphStore, scope: Scope
    ) -> None:
        """`value` is the first of the given values that matched the entity under its field, in the
        spelling given: not a later one, not the stored one, not the last spelling of a casefold key.
        Since 1.5.0."""
        upsert_entities(
            graph_store,
            scope,
            [
                ent("k", "Kettle", aliases=("kay", "kilo")),
                ent("p", "zzz", aliases=("pa",)),
                ent("q", "yyy", aliases=("qa",)),
            ],
        )
        assert _matches(find_exact(graph_store, scope, ["nothing", "KILO", "kay", "kilo"])) == [
            ("k", "alias", "KILO")
        ]
        assert _matches(find_exact(graph_store, scope, ["kay", "KILO"])) == [("k", "alias", "kay")]
        assert _matches(find_exact(graph_store, scope, ["KETTLE", "kettle", "kay"])) == [
            ("k", "name", "KETTLE")
        ]
        assert _matches(find_exact(graph_store, scope, ["qa", "PA", "pa"])) == [
            ("p", "alias", "PA"),
            ("q", "alias", "qa"),
        ]
        assert _matches(find_exact(graph_store, scope, ["Kettle", "k"], fields=("id", "name"))) == [
            ("k", "id", "k")
        ]

    @requires(UPSERT, FIND)
    def test_find_exact_honours_fields(self, graph_store: GraphStore, scope: Scope) -> None:
        """Only the fields asked for are compared."""
        upsert_entities(graph_store, scope, [ent("x", "x", aliases=("x",), qualified_name="x")])
        for field in ("id", "qualified_name", "name", "alias"):
            assert _matches(find_exact(graph_store, scope, ["x"], fields=(field,))) == [("x", field, "x")]
        upsert_entities(graph_store, scope, [ent("y", "other", aliases=("al",))])
        assert find_exact(graph_store, scope, ["al"], fields=("id", "name", "qualified_name")) == []

    @requires(UPSERT, FIND)
    def test_find_exact_honours_limit(self, graph_store: GraphStore, scope: Scope) -> None:
        """A limit keeps the first matches of the full order."""
        upsert_entities(graph_store, scope, [ent(f"e{i:02d}", "same", aliases=("al",)) for i in range(12)])
        upsert_entities(graph_store, scope, [ent("same", "zzz")])
        full = _matches(find_exact(graph_store, scope, ["same", "al"], limit=100))
        assert len(full) == 13
        assert full[:2] == [("same", "id", "same"), ("e00", "name", "same")]
        for limit in (1, 2, 5, 12, 13):
            assert _matches(find_exact(graph_store, scope, ["same", "al"], limit=limit)) == full[:limit]

    @requires(UPSERT, FIND)
    def test_find_exact_limit_fills_from_later_fields(self, graph_store: GraphStore, scope: Scope) -> None:
        """When the entities a later field finds first were already listed under a better field, the
        page is still filled from that field's further matches, up to `limit`. Since 1.5.0."""
        upsert_entities(
            graph_store,
            scope,
            [ent(i, "x" if i < "c" else "zzz", aliases=("X",)) for i in ("a", "b", "c", "d", "e")],
        )
        full = [
            ("a", "name", "x"),
            ("b", "name", "x"),
            ("c", "alias", "x"),
            ("d", "alias", "x"),
            ("e", "alias", "x"),
        ]
        for limit in range(1, 7):
            assert _matches(find_exact(graph_store, scope, ["x"], limit=limit)) == full[:limit], limit

    @requires(UPSERT, FIND)
    def test_find_exact_is_not_a_pattern_match(self, graph_store: GraphStore, scope: Scope) -> None:
        """Prefixes, substrings, wildcards and regular expressions match nothing."""
        load(graph_store, scope, *memory())
        probes = [
            "checkout",
            "checkout-ap",
            "heckout-api",
            "checkout%",
            "checkout*",
            "check_ut-api",
            ".*",
            "%",
            "*",
        ]
        assert _matches(find_exact(graph_store, scope, probes)) == [("svc-checkout", "alias", "checkout")]

    @requires(UPSERT, FIND)
    def test_find_exact_no_match_returns_empty(self, graph_store: GraphStore, scope: Scope) -> None:
        """Values that match nothing give an empty answer, not an error."""
        load(graph_store, scope, *memory())
        assert find_exact(graph_store, scope, ["no-such-thing", "svc-nope"]) == []


# ---- entity.delete ----------------------------------------------------------------------------


class EntityDeleteTests(_GraphSubject):
    """entity.delete: removes entities and every fact that touches them."""

    @requires(UPSERT, DELETE, GET, FIND, HASHES)
    def test_entity_delete_removes_entity(self, graph_store: GraphStore, scope: Scope) -> None:
        """A deleted entity is gone from hydration, exact lookup (aliases included) and hash pages."""
        entities, facts = memory()
        load(graph_store, scope, entities, facts)
        result = delete_entities(graph_store, scope, ["svc-pay"])
        assert result.deleted == 1
        assert get_entities(graph_store, scope, ["svc-pay"]) == []
        assert find_exact(graph_store, scope, ["svc-pay", "payment-gateway", "pgw", "PAY-502-UPSTREAM"]) == []
        assert [i for i, _ in all_hashes(graph_store, scope)] == sorted(
            e.id for e in entities if e.id != "svc-pay"
        )

    @requires(UPSERT, FACTS, DELETE, FROM_ROOTS)
    def test_entity_delete_removes_touching_facts(self, graph_store: GraphStore, scope: Scope) -> None:
        """Every fact with the entity as subject or object is removed and counted once."""
        entities, facts = memory()
        load(graph_store, scope, entities, facts)
        touching = [f for f in facts if "svc-checkout" in (f.subject_id, f.object_id)]
        result = delete_entities(graph_store, scope, ["svc-checkout"])
        assert result == t.DeleteResult(deleted=1, facts_removed=len(touching))
        rest = [e.id for e in entities if e.id != "svc-checkout"]
        left = from_roots(graph_store, scope, rest, include_invalid=True).facts
        assert ids(left) == ids(expected_from_roots([f for f in facts if f not in touching], rest))

    @requires(UPSERT, FACTS, DELETE, FROM_ROOTS)
    def test_entity_delete_counts_fact_between_deleted_once(
        self, graph_store: GraphStore, scope: Scope
    ) -> None:
        """A fact between two deleted entities is counted once."""
        load(graph_store, scope, [ent("a"), ent("b"), ent("c")], [edge("a", "b"), edge("b", "c")])
        assert delete_entities(graph_store, scope, ["a", "b"]) == t.DeleteResult(deleted=2, facts_removed=2)
        assert from_roots(graph_store, scope, ["c"], include_invalid=True).facts == ()

    @requires(UPSERT, FACTS, DELETE, HASHES, FROM_ROOTS)
    def test_entity_delete_missing_ids_changes_nothing(self, graph_store: GraphStore, scope: Scope) -> None:
        """Deleting ids that do not exist reports zero and leaves every entity and fact in place."""
        entities, facts = memory()
        load(graph_store, scope, entities, facts)
        before = all_hashes(graph_store, scope)
        assert delete_entities(graph_store, scope, ["missing", "svc-"]) == t.DeleteResult()
        assert all_hashes(graph_store, scope) == before
        assert len(from_roots(graph_store, scope, ids(entities), include_invalid=True).facts) == len(facts)

    @requires(UPSERT, FACTS, DELETE, HASHES, FROM_ROOTS)
    def test_entity_delete_of_no_ids_deletes_nothing(self, graph_store: GraphStore, scope: Scope) -> None:
        """`delete([])` reports zero and leaves the scope as it was (a query builder that adds its
        `id IN (...)` filter only for a non-empty list deletes the whole scope). Since 1.6.0."""
        entities, facts = memory()
        load(graph_store, scope, entities, facts)
        before = all_hashes(graph_store, scope)
        assert delete_entities(graph_store, scope, []) == t.DeleteResult()
        assert all_hashes(graph_store, scope) == before
        assert len(from_roots(graph_store, scope, ids(entities), include_invalid=True).facts) == len(facts)

    @requires(UPSERT, DELETE, GET)
    def test_entity_delete_then_recreate(self, graph_store: GraphStore, scope: Scope) -> None:
        """A deleted id can be created again, as a new entity with the new content."""
        upsert_entities(graph_store, scope, [ent("a", aliases=("old",))])
        delete_entities(graph_store, scope, ["a"])
        assert upsert_entities(graph_store, scope, [ent("a", summary="again")]) == t.UpsertResult(created=1)
        (got,) = get_entities(graph_store, scope, ["a"])
        assert (got.summary, got.aliases) == ("again", ())

    @requires(UPSERT, DELETE, GET, FIND, HASHES)
    def test_entity_delete_visible_to_reads_made_before(self, graph_store: GraphStore, scope: Scope) -> None:
        """Entities read before a delete are gone from the next read: no answer is served from before it."""
        entities, _ = memory()
        upsert_entities(graph_store, scope, entities)
        gone = ["svc-pay", "team-com"]
        assert ids(get_entities(graph_store, scope, gone)) == gone
        assert {m.entity.id for m in find_exact(graph_store, scope, ["pgw", "commerce"])} == set(gone)
        assert {i for i, _ in all_hashes(graph_store, scope)} >= set(gone)
        delete_entities(graph_store, scope, gone)
        assert get_entities(graph_store, scope, gone) == []
        assert ids(get_entities(graph_store, scope, ["svc-pay", "svc-inv", "team-com"])) == ["svc-inv"]
        assert find_exact(graph_store, scope, ["pgw", "commerce", "svc-pay", "team-com"]) == []
        assert not {i for i, _ in all_hashes(graph_store, scope)} & set(gone)


# ---- entity.hashes ----------------------------------------------------------------------------


class EntityHashesTests(_GraphSubject):
    """entity.hashes: (id, content hash) pages in id order."""

    @requires(UPSERT, HASHES)
    def test_entity_hashes_in_id_order_with_content_hash(self, graph_store: GraphStore, scope: Scope) -> None:
        """The page lists every entity once, in id order, with Entity.content_hash."""
        entities = datasets.memory_entities() + datasets.code_entities()
        upsert_entities(graph_store, scope, entities)
        assert hash_page(graph_store, scope) == sorted((e.id, e.content_hash) for e in entities)

    @requires(UPSERT, HASHES)
    def test_entity_hashes_pages_cover_all_once(self, graph_store: GraphStore, scope: Scope) -> None:
        """Paging with `after` = the last id seen visits every entity exactly once."""
        entities = datasets.memory_entities() + datasets.code_entities()
        upsert_entities(graph_store, scope, entities)
        for size in (1, 3, 5):
            seen: list[tuple[str, str]] = []
            while True:
                page = hash_page(graph_store, scope, after=seen[-1][0] if seen else "", limit=size)
                assert len(page) <= size
                seen += page
                if len(page) < size:
                    break
            assert seen == sorted((e.id, e.content_hash) for e in entities), size

    @requires(UPSERT, HASHES)
    def test_entity_hashes_after_is_exclusive(self, graph_store: GraphStore, scope: Scope) -> None:
        """`after` starts strictly after the given id, which need not exist."""
        upsert_entities(graph_store, scope, [ent(i) for i in ("a", "b", "c", "d")])
        assert [i for i, _ in hash_page(graph_store, scope, after="b")] == ["c", "d"]
        assert [i for i, _ in hash_page(graph_store, scope, after="bb")] == ["c", "d"]
        assert hash_page(graph_store, scope, after="d") == []

    @requires(UPSERT, HASHES)
    def test_entity_hashes_follow_content_changes(self, graph_store: GraphStore, scope: Scope) -> None:
        """Changing what the indexes derive from (summary, aliases) changes the hash the store reports."""
        upsert_entities(graph_store, scope, [ent("a", summary="one"), ent("b", aliases=("x",))])
        before = dict(hash_page(graph_store, scope))
        new_a, new_b = ent("a", summary="two"), ent("b", aliases=("y",))
        upsert_entities(graph_store, scope, [new_a, new_b])
        after = dict(hash_page(graph_store, scope))
        assert after == {"a": new_a.content_hash, "b": new_b.content_hash}
        assert after["a"] != before["a"] and after["b"] != before["b"]
