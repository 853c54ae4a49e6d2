"""The read trunk through ContextService on the real embedded stores."""

from __future__ import annotations

import copy

import pytest

from graphctx.envelope import dumps, size_bytes
from graphctx.errors import BoundExceeded, InputError
from graphctx.followups import calls_in
from tests.conftest import TENANT_A
from tests.service.memory_data import load


def _names(env):
    return [item["name"] for item in env["items"]]


def _stable(env):
    env = copy.deepcopy(env)
    env.pop("timings_ms")
    env.pop("as_of")
    return dumps(env)


@pytest.fixture
def loaded(service):
    load(service, TENANT_A, "alpha")
    return service


def test_a_name_inside_a_question_is_fused_and_still_wins_with_current_facts_only(loaded):
    env = loaded.recall(TENANT_A, "who owns checkout-api")
    top = env["items"][0]
    assert top["name"] == "checkout-api"
    # a name inside a longer question is a candidate of the mention leg, fused with BM25 and dense
    assert "exact" not in top["match"] and top["match"]["mention"] == 1 and top["match"]["bm25"] == 1
    owners = [f["object"] for f in top["facts"] if f["predicate"] == "owned_by"]
    assert owners == ["Commerce Platform"]  # the 2023-2025 owner is no longer valid on 2025-11-29
    assert env["legs"]["bm25"]["status"] == "ok" and env["legs"]["dense"]["status"] == "ok"
    assert env["isolation"] == {"rejected": 0}


def test_alias_and_error_code_are_exact_hits(loaded):
    env = loaded.recall(TENANT_A, "PAY-502-UPSTREAM")
    assert env["items"][0]["name"] == "payment-gateway"
    assert env["items"][0]["match"]["exact"] == "alias"


def test_approximate_legs_report_per_leg_ranks_and_fused_score(loaded):
    env = loaded.recall(TENANT_A, "latency spike evictions")
    assert env["items"], env
    item = env["items"][0]
    assert item["name"].startswith("INC-2041")
    assert "bm25" in item["match"] and item["match"]["score"] > 0


def test_envelope_has_provenance_coverage_timings_and_as_of(loaded):
    env = loaded.recall(TENANT_A, "checkout")
    assert env["provenance"]["graph"] == "sqlite"
    assert env["provenance"]["lexical"] == "tantivy"
    assert env["coverage"]["returned"] == len(env["items"])
    assert set(env["timings_ms"]) >= {"exact", "legs", "fuse", "hydrate", "expand", "budget", "total"}
    assert env["as_of"].startswith("2025-11-29T12:00:00")
    assert "id" not in env["items"][0]
    with_ids = loaded.recall(TENANT_A, "checkout", include_ids=True)
    assert with_ids["items"][0]["id"] == "svc-checkout"


def test_same_data_and_query_give_byte_identical_envelopes(loaded, tmp_path):
    from graphctx.service import ContextService
    from tests.conftest import fixed_clock, make_settings

    first = loaded.recall(TENANT_A, "checkout latency owner")
    again = loaded.recall(TENANT_A, "checkout latency owner")
    assert _stable(first) == _stable(again)
    with ContextService.open(make_settings(tmp_path / "other"), clock=fixed_clock) as other:
        load(other, TENANT_A, "alpha")
        assert _stable(other.recall(TENANT_A, "checkout latency owner")) == _stable(first)


def test_no_evidence_gives_empty_items_and_a_follow_up(loaded):
    env = loaded.recall(TENANT_A, "zzzqqq unrelated")
    assert env["items"] == []
    assert env["follow_up"]


@pytest.mark.parametrize("max_tokens", [256, 300, 500, 1500, 5000, 20000])
def test_the_json_answer_never_exceeds_its_budget(service, max_tokens):
    ents = [{"id": f"e{i}", "name": f"service-{i}", "summary": "checkout " * 40 + str(i)} for i in range(30)]
    facts = [
        {
            "subject_id": f"e{i}",
            "predicate": "depends_on",
            "object_id": f"e{(i + j) % 30}",
            "value": "checkout dependency " * 5,
        }
        for i in range(30)
        for j in range(1, 8)
    ]
    service.remember(TENANT_A, ents, facts)
    env = service.recall(TENANT_A, "checkout service", max_tokens=max_tokens)
    size = size_bytes(env)
    assert size <= min(max_tokens * 4, 32 * 1024)
    assert env["budget"]["used_tokens"] * 4 >= size
    assert len(env["items"]) <= 8
    assert sum(len(i.get("facts", [])) for i in env["items"]) <= 80
    if env["truncated"]:
        assert env["omissions"]


def test_budget_is_normalised_and_reported(loaded):
    assert loaded.recall(TENANT_A, "checkout", max_tokens=5)["budget"]["max_tokens"] == 256
    assert loaded.recall(TENANT_A, "checkout", max_tokens=10**6)["budget"]["max_tokens"] == 20000
    assert loaded.recall(TENANT_A, "checkout")["budget"]["max_tokens"] == 1500


def test_recall_caps_entries_and_facts_and_names_the_cut(service):
    ents = [{"id": "hub", "name": "hub"}] + [{"id": f"n{i}", "name": f"hub node {i}"} for i in range(120)]
    facts = [{"subject_id": "hub", "predicate": "relates_to", "object_id": f"n{i}"} for i in range(120)]
    service.remember(TENANT_A, ents, facts)
    env = service.recall(TENANT_A, "hub", max_tokens=20000)
    assert len(env["items"]) <= 8
    assert sum(len(i.get("facts", [])) for i in env["items"]) <= 80
    assert size_bytes(env) <= 32 * 1024
    assert env["truncated"] and env["omissions"]


def test_depth_two_lists_second_hop_neighbours(settings):
    from graphctx.kernel.stores import open_stores
    from graphctx.service import ContextService
    from tests.conftest import fixed_clock

    stores = open_stores(settings)
    stores.vector = None  # lexical + exact only, so the roots are exactly what the query names
    with ContextService(stores, settings, clock=fixed_clock) as service:
        names = ["alpha-root", "bravo-mid", "charlie-far", "delta-end"]
        chain = [{"id": f"c{i}", "name": name} for i, name in enumerate(names)]
        facts = [
            {"subject_id": f"c{i}", "predicate": "depends_on", "object_id": f"c{i + 1}"} for i in range(3)
        ]
        service.remember(TENANT_A, chain, facts)
        one = service.recall(TENANT_A, "alpha-root")
        two = service.recall(TENANT_A, "alpha-root", depth=2)
    assert [i["name"] for i in one["items"]] == ["alpha-root"]
    assert "related" not in one
    assert two["related"] == [
        {
            "name": "charlie-far",
            "type": "thing",
            "depth": 2,
            "via": "bravo-mid",
            "predicate": "depends_on",
            "direction": "out",
        }
    ]
    assert two["legs"]["dense"] == {"status": "disabled"}


@pytest.mark.parametrize("bad", ["x" * 4097, "", "a\x00b"])
def test_bad_queries_are_typed_errors(loaded, bad):
    with pytest.raises(InputError) as info:
        loaded.recall(TENANT_A, bad)
    if len(bad) > 4096:
        assert isinstance(info.value, BoundExceeded)


def test_a_budget_that_cuts_every_match_says_so(service):
    service.remember(TENANT_A, [{"id": "big", "name": "bigname-" + "x" * 1000, "aliases": ["y" * 1000]}])
    env = service.recall(TENANT_A, "bigname-" + "x" * 1000, max_tokens=256)
    assert env["items"] == []
    assert env["omissions"][0]["what"] == "items" and env["truncated"] is True
    assert "max_tokens 512" in env["follow_up"]  # the 1 KiB query is too long to repeat in the call


@pytest.mark.parametrize("query", ["checkout-api", "INC-2041 checkout latency spike", "payments"])
def test_depth_two_fits_the_default_budget_on_a_dense_graph(service, query):
    from graphctx.demo import sample_path

    with sample_path().open(encoding="utf-8") as fh:
        service.remember_jsonl(TENANT_A, fh)
    for tokens in (256, 400, 800, 1500):
        env = service.recall(TENANT_A, query, depth=2, max_tokens=tokens)
        assert size_bytes(env) <= tokens * 4
        assert all(o["count"] != 99999 for o in env["omissions"])


def test_neighbourhood_names_cut_edges_within_budget(service):
    from graphctx.demo import sample_path

    with sample_path().open(encoding="utf-8") as fh:
        service.remember_jsonl(TENANT_A, fh)
    for tokens in (256, 400, 800):
        env = service.neighbourhood(TENANT_A, "checkout-api", depth=2, max_tokens=tokens)
        assert size_bytes(env) <= tokens * 4 and env["truncated"]


def _sample(service):
    from graphctx.demo import sample_path

    with sample_path().open(encoding="utf-8") as fh:
        service.remember_jsonl(TENANT_A, fh)


def test_a_cut_recall_names_the_complete_call_that_shows_its_first_item(service):
    _sample(service)
    env = service.recall(TENANT_A, "who owns checkout-api", depth=2, max_tokens=700)
    assert env["omissions"] and env["items"]
    [(op, args)] = calls_in(env["follow_up"])
    assert op == "explain"
    assert service.explain(TENANT_A, **args)["subject"]["name"] == env["items"][0]["name"]


def test_the_follow_up_call_resolves_an_ambiguous_or_long_name_whole(service):
    long_name = "payments-" + "very-long-service-name-" * 3  # over the 48 characters once kept
    service.remember(
        TENANT_A,
        [
            {"id": "api-1", "name": long_name, "type": "service", "summary": "first " + "w " * 300},
            {"id": "api-2", "name": long_name, "type": "service", "summary": "second " + "w " * 300},
        ],
    )
    env = service.recall(TENANT_A, long_name, max_tokens=500)
    assert env["omissions"] and env["items"]
    [(op, args)] = calls_in(env["follow_up"])
    assert op == "explain" and len(args["name"]) < 48 <= len(long_name)  # the id, never a cut name
    explained = service.explain(TENANT_A, **args)  # the plain name would be ambiguous_name
    assert explained["subject"]["name"] == long_name
    assert explained["subject"]["summary"].startswith(env["items"][0]["summary"].rstrip("…"))


def test_a_recall_whose_every_match_was_cut_names_the_recall_to_retry(service):
    service.remember(
        TENANT_A, [{"id": "big", "name": "bigname", "summary": "x" * 4000, "aliases": ["y" * 900]}]
    )
    env = service.recall(TENANT_A, "bigname", max_tokens=256)
    assert env["items"] == [] and env["omissions"]
    [(op, args)] = calls_in(env["follow_up"])
    assert (op, args) == ("recall", {"query": "bigname", "max_tokens": 512})
    assert service.recall(TENANT_A, **args)["budget"]["max_tokens"] == 512
