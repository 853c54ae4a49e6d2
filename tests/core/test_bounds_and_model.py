from datetime import UTC, datetime

import pytest

from graphctx import bounds
from graphctx.errors import BoundExceeded, InputError, ScopeError
from graphctx.model import Entity, Fact
from graphctx.redact import redact
from graphctx.retrieval.exact import exact_candidates
from graphctx.scope import Scope


def test_query_bound_is_4_kib_in_utf8_bytes():
    bounds.check_query("a" * 4096)
    with pytest.raises(BoundExceeded) as info:
        bounds.check_query("é" * 2049)  # 4098 bytes
    assert info.value.details["bound"] == "query"
    assert info.value.details["limit"] == 4096


@pytest.mark.parametrize("bad", ["", "   ", "a\x00b", 12, None, b"bytes"])
def test_bad_queries_are_typed_errors(bad):
    with pytest.raises(InputError):
        bounds.check_query(bad)


def test_tokens_are_normalised_into_range():
    assert bounds.normalise_tokens(None, 1500) == 1500
    assert bounds.normalise_tokens(1, 1500) == 256
    assert bounds.normalise_tokens(10**9, 1500) == 20_000
    with pytest.raises(InputError):
        bounds.normalise_tokens("100", 1500)  # type: ignore[arg-type]


def test_scope_is_immutable_and_validated():
    scope = Scope("acme", "prod")
    with pytest.raises(AttributeError):
        scope.tenant_id = "other"  # type: ignore[misc]
    for bad in ["", "a b", "x' OR 1=1", "../etc", "t" * 200]:
        with pytest.raises(ScopeError):
            Scope(bad)
    assert scope.narrow("prod") is scope
    with pytest.raises(ScopeError):
        scope.narrow("other")


def test_entity_content_hash_changes_with_indexed_fields_only():
    a = Entity(id="e1", name="checkout", aliases=["co"])
    assert a.content_hash == Entity(id="e1", name="checkout", aliases=["co", "co"]).content_hash
    assert a.content_hash != Entity(id="e1", name="checkout", aliases=["co2"]).content_hash
    assert a.content_hash == a.model_copy(update={"source": "x"}).content_hash


def test_entity_bounds_are_enforced():
    with pytest.raises(BoundExceeded):
        Entity(id="e", name="n" * 1025)
    with pytest.raises(BoundExceeded):
        Entity(id="e", name="n", aliases=["a"] * 65)
    with pytest.raises(InputError):
        Entity(id="e", name="bad\x00name")


def test_fact_predicates_are_allowlisted_and_ids_are_derived():
    fact = Fact(subject_id="a", predicate="owns", object_id="b")
    assert fact.id.startswith("f_") and fact.id == Fact(subject_id="a", predicate="owns", object_id="b").id
    with pytest.raises(ValueError):
        Fact(subject_id="a", predicate="drop_everything", object_id="b")
    with pytest.raises(ValueError):
        Fact(subject_id="a", predicate="owns")


def test_secrets_are_redacted_from_summaries_and_values():
    entity = Entity(id="e", name="svc", summary="uses key AKIAABCDEFGHIJKLMNOP and password=hunter2!")
    assert "AKIA" not in entity.summary and "hunter2" not in entity.summary
    assert "[REDACTED]" in entity.summary
    assert redact("postgres://user:s3cret@db/x") == "postgres://[REDACTED]@db/x"
    fact = Fact(subject_id="a", predicate="note", value="token: ghp_" + "a" * 36)
    assert "ghp_" not in (fact.value or "")


def test_exact_candidates_pick_identifier_like_tokens():
    cands = exact_candidates('who owns checkout-api and "Payments Team" for PAY-502?')
    assert cands[0] == 'who owns checkout-api and "Payments Team" for PAY-502?'
    assert "checkout-api" in cands and "Payments Team" in cands and "PAY-502" in cands
    assert "who" not in cands


def test_a_facts_identity_includes_its_validity_start():
    from datetime import UTC, datetime

    from graphctx.model import Fact, stable_hash

    def shift(start: datetime | None) -> Fact:
        return Fact(subject_id="alice", predicate="on_call_for", object_id="checkout", valid_from=start)

    first = shift(datetime(2025, 1, 6, 9, tzinfo=UTC))
    second = shift(datetime(2025, 2, 3, 9, tzinfo=UTC))
    assert first.id != second.id  # two periods of one relation are two facts
    naive = shift(datetime(2025, 1, 6, 9))  # naive means UTC
    assert naive.id == first.id
    # a fact without a start keeps the id it had before validity was part of identity
    assert shift(None).id == "f_" + stable_hash("alice", "on_call_for", "checkout", None)
    # the end is not part of identity: ending a fact never changes what it is
    ended = first.model_copy(update={"valid_to": datetime(2025, 1, 13, tzinfo=UTC)})
    assert Fact(**{**ended.model_dump(), "id": ""}).id == first.id


def test_a_stored_record_is_rebuilt_exactly_as_it_was_validated():
    """from_store makes what validation made, field for field, without validating again; the fields
    it is not given keep their defaults, and no two records share a mutable part."""
    when = datetime(2025, 1, 2, tzinfo=UTC)
    entity = Entity(
        id="e1", name="pay", aliases=["p", "payments"], summary="s", created_at=when, tenant_id="t"
    )
    fields = {name: getattr(entity, name) for name in Entity.model_fields}
    again = Entity.from_store(**fields)
    assert (
        again == entity
        and again.model_dump() == entity.model_dump()
        and again.content_hash == entity.content_hash
    )
    assert again.model_fields_set == set(fields)
    assert Entity.from_store(id="e2", name="n") == Entity(id="e2", name="n")
    assert Entity.from_store(id="e2", name="n").model_fields_set == {"id", "name"}
    fact = Fact(subject_id="e1", predicate="owns", object_id="e2", value="v", valid_from=when, tenant_id="t")
    rebuilt = Fact.from_store(**{name: getattr(fact, name) for name in Fact.model_fields})
    assert rebuilt == fact and rebuilt.model_dump() == fact.model_dump() and hash(rebuilt) == hash(fact)
    assert Fact.from_store(id="f", subject_id="a", predicate="owns", object_id="b") == Fact(
        id="f", subject_id="a", predicate="owns", object_id="b"
    )
    one, two = Entity.from_store(id="a", name="a"), Entity.from_store(id="b", name="b")
    assert one.__dict__ is not two.__dict__ and (one.id, two.id) == ("a", "b")
    with pytest.raises(Exception, match="frozen"):
        one.name = "changed"  # type: ignore[misc]
