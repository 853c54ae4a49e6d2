"""explain, neighbourhood, path, forget and ambiguity-safe names."""

from __future__ import annotations

import pytest

from graphctx.errors import AmbiguousName, InputError, NotFound
from graphctx.followups import calls_in
from tests.conftest import TENANT_A
from tests.service.memory_data import load


@pytest.fixture
def loaded(service):
    load(service, TENANT_A, "m")
    return service


def test_explain_lists_current_facts_before_history(loaded):
    env = loaded.explain(TENANT_A, "checkout-api")
    assert env["subject"]["name"] == "checkout-api"
    currents = [f["current"] for f in env["facts"]]
    assert currents == sorted(currents, reverse=True) and False in currents
    old = [(f["predicate"], f.get("object")) for f in env["facts"] if not f["current"]]
    assert ("owned_by", "Payments Team") in old
    current_only = loaded.explain(TENANT_A, "checkout-api", include_history=False)["facts"]
    assert current_only and all(f["current"] for f in current_only)


def test_names_resolve_by_id_alias_and_name(loaded):
    for name in ("svc-checkout", "co-api", "checkout-api", "CHECKOUT-API"):
        assert loaded.explain(TENANT_A, name)["subject"]["name"] == "checkout-api"


def test_ambiguous_name_lists_ranked_candidates(loaded):
    loaded.remember(TENANT_A, [{"id": "svc-checkout-2", "name": "checkout-api", "type": "service"}])
    with pytest.raises(AmbiguousName) as info:
        loaded.explain(TENANT_A, "checkout-api")
    identities = [c["identity"] for c in info.value.candidates]
    assert sorted(identities) == ["svc-checkout", "svc-checkout-2"]
    assert info.value.exit_status == 4


def test_unknown_name_is_not_found(loaded):
    with pytest.raises(NotFound):
        loaded.explain(TENANT_A, "nothing-like-this")


def test_neighbourhood_is_bounded_and_ordered(loaded):
    env = loaded.neighbourhood(TENANT_A, "checkout-api", depth=2, limit=3)
    assert len(env["nodes"]) <= 3
    depths = [n["depth"] for n in env["nodes"]]
    assert depths == sorted(depths)
    assert loaded.neighbourhood(TENANT_A, "checkout-api", depth=9)["nodes"]  # clamped, not an error
    with pytest.raises(InputError):
        loaded.neighbourhood(TENANT_A, "checkout-api", edge_types=["not_an_edge"])


def test_path_uses_only_facts_valid_now(loaded):
    env = loaded.path(TENANT_A, "redis-sessions", "Commerce Platform")
    assert env["found"] is True
    # the direct redis -> checkout-api dependency ended in 2025-08, so the path goes through the incident
    assert [n["name"] for n in env["nodes"]] == [
        "redis-sessions",
        "INC-2041 checkout latency spike",
        "checkout-api",
        "Commerce Platform",
    ]
    assert [e["predicate"] for e in env["edges"]] == ["caused", "affected", "owned_by"]


def test_no_path_within_the_hop_limit(loaded):
    env = loaded.path(TENANT_A, "redis-sessions", "Commerce Platform", max_depth=2)
    assert env["found"] is False and env["follow_up"]
    [(op, args)] = calls_in(env["follow_up"])  # the complete call to make next
    assert op == "neighbourhood"
    assert loaded.neighbourhood(TENANT_A, **args)["subject"]["name"] == "redis-sessions"


def test_forget_invalidates_facts_and_deletes_entities(loaded):
    fact_id = loaded.explain(TENANT_A, "payment-gateway", include_ids=True)["facts"][0]["id"]
    assert loaded.forget(TENANT_A, fact_ids=[fact_id])["facts_invalidated"] == 1
    loaded.forget(TENANT_A, entity_ids=["svc-pay"])
    with pytest.raises(NotFound):
        loaded.explain(TENANT_A, "payment-gateway")
    assert all(
        i["name"] != "payment-gateway" for i in loaded.recall(TENANT_A, "payment-gateway pgw")["items"]
    )
