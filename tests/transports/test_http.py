"""The HTTP API against a real uvicorn server on loopback, driven by a real HTTP client (httpx):
every operation, tenant isolation under colliding data, input bounds and errors, authentication,
request ids, OpenAPI, health, parity with the Python API, and concurrent reads and writes."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from graphctx import api, registry
from graphctx.auth import Principal, new_key
from graphctx.envelope import dumps
from graphctx.errors import AmbiguousName
from graphctx.scope import Scope, shared_scope
from graphctx.service import ContextService
from graphctx.transports.http import create_app
from tests.code.ops_graph import load_code
from tests.conftest import TENANT_A, TENANT_B, fixed_clock, make_settings
from tests.service.memory_data import load
from tests.transports.live import LiveServer

MIB = 1024 * 1024
B_PRIVATE_NS = Scope("tenant-b", "b-private")
B_GRAPH = shared_scope("b-graph")  # the one shared copy b-key may read
CODE_A = shared_scope("code-a")  # a shared code graph a-key may read
B_SECRETS = ("MARKER-B", "b-only-secret", "SECRET-OF-B")
B_ONLY = [
    {"id": "b-only-secret", "name": "b-only-secret", "type": "service", "summary": "SECRET-OF-B MARKER-B"},
    {"id": "dup-b-1", "name": "dup-b", "type": "service", "summary": "first MARKER-B"},
    {"id": "dup-b-2", "name": "dup-b", "type": "service", "summary": "second MARKER-B"},
]
A_EXTRA = [
    {"id": "api-1", "name": "api", "type": "service", "summary": "public api MARKER-A"},
    {"id": "api-2", "name": "api", "type": "service", "summary": "internal api MARKER-A"},
]
A_ENTITIES = 6 + len(A_EXTRA)


class Stack:
    def __init__(self, service: ContextService, url: str, tokens: dict[str, str], revoked: str) -> None:
        self.service, self.url, self.tokens, self.revoked = service, url, tokens, revoked

    def client(self, who: str | None = "a", **headers: str) -> httpx.Client:
        auth = {"Authorization": f"Bearer {self.tokens[who]}"} if who else {}
        return httpx.Client(base_url=self.url, headers={**auth, **headers}, timeout=30.0)


@pytest.fixture(scope="module")
def stack(tmp_path_factory) -> Iterator[Stack]:
    settings = make_settings(tmp_path_factory.mktemp("http") / "data")
    with ContextService.open(settings, clock=fixed_clock) as service:
        load(service, TENANT_A, "MARKER-A")
        service.remember(TENANT_A, A_EXTRA)
        load(service, TENANT_B, "MARKER-B")
        service.remember(TENANT_B, B_ONLY)
        load(service, B_PRIVATE_NS, "MARKER-B")
        load(service, B_GRAPH, "MARKER-B")
        load_code(service, CODE_A)
        keys = registry.factory("keys", settings.key_store_backend)(settings)
        tokens = {
            "a": keys.create(Principal("agent-a", "tenant-a", ("default", "scratch"), ("code-a",))).token,
            "b": keys.create(Principal("agent-b", "tenant-b", ("default", "b-private"), ("b-graph",))).token,
            "c": keys.create(Principal("agent-c", "tenant-c")).token,
        }
        gone = keys.create(Principal("agent-gone", "tenant-a"))
        keys.revoke(gone.key_id)
        try:
            with LiveServer(create_app(service, keys, settings)) as server:
                yield Stack(service, server.url, tokens, gone.token)
        finally:
            keys.close()


def post(client: httpx.Client, op: str, body: Any = None, **kw: Any) -> httpx.Response:
    return client.post(f"/v1/{op}", json=body if body is not None else {}, **kw)


def error_of(response: httpx.Response) -> dict[str, Any]:
    data = response.json()
    assert set(data) == {"error", "request_id"}, data
    assert data["request_id"] == response.headers["x-request-id"]
    return data["error"]


def comparable(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in ("timings_ms", "as_of")}


# -- every operation ----------------------------------------------------------------------------

EVERY_OPERATION = {
    "recall": {"query": "who owns checkout", "depth": 2},
    "explain": {"name": "checkout-api"},
    "neighbourhood": {"name": "checkout-api", "depth": 2, "direction": "out"},
    "path": {"source": "redis-sessions", "target": "Payments Team"},
    "remember": {
        "namespace": "scratch",
        "entities": [{"id": "tmp-1", "name": "tmp-one", "type": "service"}],
        "facts": [{"subject_id": "tmp-1", "predicate": "depends_on", "object_id": "tmp-1"}],
    },
    "forget": {"namespace": "scratch", "entity_ids": ["tmp-1"]},
    "reconcile": {"namespace": "scratch"},
    "status": {},
    "search": {"query": "Cart.total", "graph_id": "code-a"},
    "symbol": {"name": "shop.cart.Cart.total", "graph_id": "code-a"},
    "callers": {"name": "shop.tax.rate", "depth": 2, "limit": 3, "graph_id": "code-a"},
    "callees": {"name": "shop.cart.Cart.add", "graph_id": "code-a"},
    "impact": {"diff": "--- a/shop/cart.py\n+++ b/shop/cart.py\n@@ -5 +5 @@\n-x\n+y\n", "graph_id": "code-a"},
}


def test_every_operation_answers_over_http(stack):
    assert set(EVERY_OPERATION) == set(api.OPERATIONS), "a new operation needs an HTTP test"
    with stack.client() as c:
        answers = {}
        for op, body in EVERY_OPERATION.items():
            r = post(c, op, body)
            assert r.status_code == 200, (op, r.text)
            assert r.headers["content-type"].startswith("application/json")
            answers[op] = r.json()
    assert answers["recall"]["items"] and answers["recall"]["op"] == "recall"
    assert answers["explain"]["subject"]["name"] == "checkout-api"
    assert answers["neighbourhood"]["nodes"]
    assert answers["path"]["found"] is True
    assert answers["remember"]["entities"]["created"] == 1 and answers["remember"]["facts"]["created"] == 1
    assert answers["forget"]["entities_deleted"] == 1
    assert answers["reconcile"]["lexical_repaired"] == 0
    assert answers["status"]["graph"]["entities"] == A_ENTITIES
    assert "data_dir" not in answers["status"] and "pending_index_work" not in answers["status"]
    assert "memory" not in answers["status"] and "group_commit" not in answers["status"]  # the host's
    assert answers["search"]["items"][0]["qualified_name"] == "shop.cart.Cart.total"
    assert answers["symbol"]["callers"] and answers["symbol"]["subject"]["at"] == "shop/cart.py:20-35"
    assert sum(1 for c in answers["callers"]["callers"] if c["depth"] == 1) == 3  # limit 3 per direction
    assert {"limit", "at_least"} <= set(answers["callers"]["omissions"][0])
    assert answers["callees"]["callees"][0]["lines"] == [44]
    assert [a["name"] for a in answers["impact"]["affected"]] == ["shop.cart.helper"]


def test_bodyless_operations_accept_an_empty_body(stack):
    with stack.client() as c:
        assert c.post("/v1/status").status_code == 200
        assert c.post("/v1/reconcile", json={"namespace": "scratch"}).status_code == 200


def test_the_same_query_gives_the_same_envelope_as_the_python_api(stack):
    s = stack.service
    cases = [
        ("recall", {"query": "who owns checkout", "depth": 2},
         lambda: s.recall(TENANT_A, "who owns checkout", depth=2)),
        ("recall", {"query": "PAY-502-UPSTREAM", "include_ids": True},
         lambda: s.recall(TENANT_A, "PAY-502-UPSTREAM", include_ids=True)),
        ("recall", {"query": "redis evictions", "max_tokens": 300},
         lambda: s.recall(TENANT_A, "redis evictions", max_tokens=300)),
        ("explain", {"name": "svc-checkout", "include_history": False},
         lambda: s.explain(TENANT_A, "svc-checkout", include_history=False)),
        ("neighbourhood", {"name": "checkout-api", "depth": 2, "limit": 3},
         lambda: s.neighbourhood(TENANT_A, "checkout-api", depth=2, limit=3)),
        ("path", {"source": "redis-sessions", "target": "Commerce Platform"},
         lambda: s.path(TENANT_A, "redis-sessions", "Commerce Platform")),
        ("symbol", {"name": "shop/cart.py::Cart.total", "limit": 1, "graph_id": "code-a"},
         lambda: s.symbol(CODE_A, "shop/cart.py::Cart.total", limit=1)),
        ("callers", {"name": "shop.tax.rate", "depth": 2, "max_tokens": 400, "graph_id": "code-a"},
         lambda: s.callers(CODE_A, "shop.tax.rate", depth=2, max_tokens=400)),
        ("impact", {"files": ["shop/tax.py", "gone.py"], "graph_id": "code-a"},
         lambda: s.impact(CODE_A, ["shop/tax.py", "gone.py"])),
        ("search", {"query": "tax rate", "graph_id": "code-a"}, lambda: s.search(CODE_A, "tax rate")),
    ]  # fmt: skip
    with stack.client() as c:
        for op, body, local in cases:
            r = post(c, op, body)
            assert r.status_code == 200, r.text
            assert comparable(r.json()) == comparable(local()), (op, body)
        status = post(c, "status").json()
    local_status = s.status(TENANT_A)
    for key in (
        "data_dir",
        "pending_index_work",
        "mode",
        "writer_pid",
        "exposed",
        "group_commit",
        "index_flush",
        "memory",
    ):
        local_status.pop(key)
    assert comparable(status) == comparable(local_status)


def test_an_ambiguous_name_lists_candidates_like_every_transport(stack):
    with stack.client() as c:
        r = post(c, "explain", {"name": "api"})
        code = post(c, "symbol", {"name": "helper", "graph_id": "code-a"})
    assert r.status_code == 409
    err = error_of(r)
    assert err["code"] == "ambiguous_name"
    assert sorted(x["identity"] for x in err["details"]["candidates"]) == ["api-1", "api-2"]
    assert "MARKER-B" not in r.text
    assert code.status_code == 409
    with pytest.raises(AmbiguousName) as raised:
        stack.service.symbol(CODE_A, "helper")
    assert error_of(code) == raised.value.to_dict()


# -- tenant isolation ---------------------------------------------------------------------------


def _assert_clean(response: httpx.Response) -> None:
    for secret in B_SECRETS:
        assert secret not in response.text, (secret, response.text[:400])


@pytest.mark.parametrize(
    ("field", "foreign", "nonexistent"),
    [("tenant_id", "tenant-b", "tenant-zz"), ("namespace", "b-private", "no-such-ns"),
     ("graph_id", "b-graph", "no-such-graph")],
)  # fmt: skip
def test_a_foreign_selector_is_refused_alike_whether_or_not_it_exists(stack, field, foreign, nonexistent):
    with stack.client() as c:
        for op, example in EVERY_OPERATION.items():
            body = {k: v for k, v in example.items() if k != "namespace"}
            answers = [post(c, op, {**body, field: value}) for value in (foreign, nonexistent)]
            for r in answers:
                assert r.status_code == 403, (op, r.text)
                assert error_of(r)["code"] == "scope_denied"
                _assert_clean(r)
            assert error_of(answers[0]) == error_of(answers[1]), op  # no existence oracle


def test_names_that_exist_only_in_another_tenant_are_unknown_alike(stack):
    with stack.client() as c:
        for name in ("b-only-secret", "dup-b", "never-existed-anywhere"):
            for op, body in (
                ("explain", {"name": name}),
                ("neighbourhood", {"name": name}),
                ("path", {"source": name, "target": "checkout-api"}),
                ("path", {"source": "checkout-api", "target": name}),
            ):
                r = post(c, op, body)
                assert r.status_code == 404, (op, name, r.text)
                err = error_of(r)
                assert err == {
                    "code": "not_found",
                    "message": f"no entity named {name!r} in this scope",
                    "details": {"name": name},
                }
        for query in ("b-only-secret", "SECRET-OF-B", "dup-b", "tenant_id:tenant-b", "MARKER-B"):
            r = post(c, "recall", {"query": query, "depth": 2, "include_ids": True})
            assert r.status_code == 200
            _assert_clean(r)
            assert all(item["name"] not in ("b-only-secret", "dup-b") for item in r.json()["items"])


def test_headers_never_choose_the_scope(stack):
    crafted = {
        "X-Tenant-ID": "tenant-b",
        "X-Graphctx-Tenant": "tenant-b",
        "X-Namespace": "b-private",
        "X-Graph-ID": "b-graph",
        "Forwarded": "for=tenant-b",
    }
    with stack.client(**crafted) as c, stack.client() as plain:
        for op in ("recall", "explain", "neighbourhood", "path", "status"):
            r, ref = post(c, op, EVERY_OPERATION[op]), post(plain, op, EVERY_OPERATION[op])
            assert r.status_code == 200
            assert r.json()["scope"]["tenant_id"] == "tenant-a"
            assert comparable(r.json()) == comparable(ref.json())
            _assert_clean(r)


def test_writes_cannot_reach_another_tenant(stack):
    with stack.client() as a, stack.client("b") as b:
        before_b = comparable(post(b, "status").json())
        r = post(a, "remember", {"entities": [{"id": "x-1", "name": "x", "type": "service",
                                              "tenant_id": "tenant-b"}]})  # fmt: skip
        assert r.status_code == 403 and error_of(r)["code"] == "scope_denied"
        r = post(a, "remember", {"facts": [{"subject_id": "b-only-secret", "predicate": "depends_on",
                                           "object_id": "svc-pay", "namespace": "b-private"}]})  # fmt: skip
        assert r.status_code == 403
        r = post(a, "forget", {"entity_ids": ["b-only-secret", "dup-b-1"], "fact_ids": ["nope"]})
        assert r.status_code == 200
        assert r.json() == {"entities_deleted": 0, "facts_removed": 0, "facts_invalidated": 0}
        assert comparable(post(b, "status").json()) == before_b
        assert post(b, "explain", {"name": "b-only-secret"}).json()["subject"]["summary"].startswith("SECRET")


def test_counts_seen_by_a_do_not_move_when_b_writes(stack):
    with stack.client() as a, stack.client("b") as b:
        before = [comparable(post(a, op).json()) for op in ("status", "reconcile")]
        extra = [{"id": f"b-more-{i}", "name": f"b-more-{i}", "type": "service"} for i in range(5)]
        assert post(b, "remember", {"entities": extra}).status_code == 200
        after = [comparable(post(a, op).json()) for op in ("status", "reconcile")]
        assert post(b, "forget", {"entity_ids": [e["id"] for e in extra]}).json()["entities_deleted"] == 5
    assert before == after
    assert after[0]["graph"]["entities"] == A_ENTITIES
    assert after[1]["graph_entities"] == A_ENTITIES


def test_b_key_sees_its_own_selectors_and_never_a(stack):
    with stack.client("b") as b:
        for body in ({"namespace": "b-private"}, {"graph_id": "b-graph"}, {"tenant_id": "tenant-b"}):
            r = post(b, "recall", {"query": "checkout-api", **body})
            assert r.status_code == 200, r.text
            assert "MARKER-B" in r.text and "MARKER-A" not in r.text
        assert post(b, "status", {"tenant_id": "tenant-a"}).status_code == 403


# -- bad input: clear 4xx, and the server keeps serving ----------------------------------------


def _still_serving(stack: Stack) -> None:
    with stack.client() as c:
        assert c.get("/healthz").status_code == 200
        r = post(c, "recall", {"query": "checkout-api"})
        assert r.status_code == 200 and r.json()["items"][0]["name"] == "checkout-api"


def test_an_oversized_body_is_refused_with_413(stack):
    big = b'{"query": "' + b"x" * (6 * MIB) + b'"}'
    with stack.client() as c:
        r = c.post("/v1/recall", content=big, headers={"Content-Type": "application/json"})
        assert r.status_code == 413
        err = error_of(r)
        assert err["code"] == "bound_exceeded" and err["details"]["bound"] == "request body"
        assert err["details"]["limit"] == 5 * MIB and err["details"]["actual"] == len(big)

        def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it streams
            yield b'{"query": "'
            for _ in range(6):
                yield b"x" * MIB
            yield b'"}'

        r = c.post("/v1/recall", content=chunks(), headers={"Content-Type": "application/json"})
        assert "content-length" not in r.request.headers
        assert r.status_code == 413
        assert error_of(r)["details"]["bound"] == "request body"
    _still_serving(stack)


def test_a_body_just_under_the_bound_is_read(stack):
    body = {"entities": [], "facts": [], "namespace": "scratch"}
    text = json.dumps(body)
    padded = text[:-1] + " " * (5 * MIB - len(text) - 1) + "}"
    with stack.client() as c:
        r = c.post("/v1/remember", content=padded, headers={"Content-Type": "application/json"})
    assert r.status_code == 200, r.text


@pytest.mark.parametrize(
    ("body", "status", "code", "field"),
    [
        ({"query": "x" * (5 * 1024)}, 413, "bound_exceeded", "query"),
        ({"query": ""}, 422, "invalid_input", "query"),
        ({"query": 5}, 422, "invalid_input", "query"),
        ({"query": "a", "depth": "2"}, 422, "invalid_input", "depth"),
        ({"query": "a", "depth": 3}, 422, "invalid_input", "depth"),
        ({"query": "a", "max_tokens": "lots"}, 422, "invalid_input", "max_tokens"),
        ({"query": "a", "include_ids": "yes"}, 422, "invalid_input", "include_ids"),
        ({"query": "a", "bogus": 1}, 422, "invalid_input", "bogus"),
        ({"query": "a", "tenant_id": 7}, 422, "invalid_input", "tenant_id"),
        ({}, 422, "invalid_input", "query"),
        ([1, 2], 422, "invalid_input", "body"),
        ("just a string", 422, "invalid_input", "body"),
    ],
)
def test_bad_recall_bodies_get_a_clear_4xx_naming_the_problem(stack, body, status, code, field):
    with stack.client() as c:
        r = c.post("/v1/recall", json=body)
    assert r.status_code == status, r.text
    err = error_of(r)
    assert err["code"] == code
    assert (err["details"].get("field") or err["details"].get("bound")) == field
    assert field in err["message"]


@pytest.mark.parametrize(
    ("op", "body", "field"),
    [
        ("explain", {"name": "x" * 5000}, "name"),
        ("neighbourhood", {"name": "checkout-api", "direction": "sideways"}, "direction"),
        ("neighbourhood", {"name": "checkout-api", "edge_types": "depends_on"}, "edge_types"),
        ("neighbourhood", {"name": "checkout-api", "edge_types": ["not_an_edge"]}, "edge_types"),
        ("path", {"source": "checkout-api"}, "target"),
        ("remember", {"entities": [{"id": "e", "name": "e", "type": "service", "colour": 1}]}, "colour"),
        ("remember", {"entities": "nope"}, "entities"),
        ("forget", {"entity_ids": ["x"] * 1001}, "entity_ids"),
        ("status", {"verbose": True}, "verbose"),
    ],
)
def test_bad_bodies_of_other_operations_name_the_field(stack, op, body, field):
    with stack.client() as c:
        r = post(c, op, body)
    assert 400 <= r.status_code < 500, r.text
    err = error_of(r)
    assert err["code"] in ("invalid_input", "bound_exceeded")
    assert field in err["message"], err


def test_malformed_json_and_wrong_content_type(stack):
    with stack.client() as c:
        r = c.post("/v1/recall", content=b'{"query": ', headers={"Content-Type": "application/json"})
        assert r.status_code == 422
        assert error_of(r)["message"].startswith("the request body is not valid JSON")
        r = c.post("/v1/recall", content=b'{"query": "a"}', headers={"Content-Type": "text/plain"})
        assert r.status_code == 422 and "Content-Type: application/json" in error_of(r)["message"]
        r = c.post("/v1/recall", content=b"\xff\xfe\x00garbage", headers={"Content-Type": "application/json"})
        assert r.status_code in (400, 422) and error_of(r)["code"] == "invalid_input"
        r = c.post("/v1/recall", content=b"", headers={"Content-Type": "application/json"})
        assert (
            r.status_code == 422 and error_of(r)["message"] == "the request body is required: a JSON object"
        )
    _still_serving(stack)


def test_unknown_routes_and_methods_keep_the_error_shape(stack):
    with stack.client() as c:
        r = c.post("/v1/drop_everything", json={})
        assert r.status_code == 404 and error_of(r)["code"] == "not_found"
        r = c.get("/v1/recall")
        assert r.status_code == 405 and error_of(r)["code"] == "method_not_allowed"
        assert "POST" in r.headers["allow"]
        r = c.get("/nowhere")
        assert r.status_code == 404 and error_of(r)["code"] == "not_found"


# -- authentication -----------------------------------------------------------------------------


def test_keys_are_required_and_checked(stack):
    unknown = new_key().token
    cases = {
        "none": {},
        "garbage": {"Authorization": "Bearer not-a-key"},
        "unknown": {"Authorization": f"Bearer {unknown}"},
        "revoked": {"Authorization": f"Bearer {stack.revoked}"},
        "unknown x-api-key": {"X-API-Key": unknown},
        "basic": {"Authorization": f"Basic {stack.tokens['a']}"},
        "two keys": {"Authorization": f"Bearer {stack.tokens['a']}", "X-API-Key": stack.tokens["b"]},
    }
    messages = {}
    with httpx.Client(base_url=stack.url, timeout=30.0) as c:
        for label, headers in cases.items():
            r = c.post("/v1/recall", json={"query": "checkout-api"}, headers=headers)
            assert r.status_code == 401, label
            assert r.headers["www-authenticate"] == "Bearer"
            err = error_of(r)
            assert err["code"] == "unauthenticated"
            messages[label] = err["message"]
            _assert_clean(r)
        # authentication comes before the body is read: a bad body without a key is still a 401
        r = c.post("/v1/recall", content=b"{nope", headers={"Content-Type": "application/json"})
        assert r.status_code == 401
        ok = c.post("/v1/recall", json={"query": "checkout-api"}, headers={"X-API-Key": stack.tokens["a"]})
        assert ok.status_code == 200 and ok.json()["scope"]["tenant_id"] == "tenant-a"
    # an unknown key, a revoked one and a malformed one are indistinguishable
    assert messages["garbage"] == messages["unknown"] == messages["revoked"] == messages["unknown x-api-key"]
    _still_serving(stack)


# -- request ids, OpenAPI, health ---------------------------------------------------------------


def test_request_ids_are_echoed_or_generated(stack):
    with stack.client() as c:
        r = post(c, "explain", {"name": "nothing-here"}, headers={"X-Request-ID": "agent-7.call_42"})
        assert r.headers["x-request-id"] == "agent-7.call_42"
        assert r.json()["request_id"] == "agent-7.call_42"
        r = post(c, "recall", {"query": "checkout-api"}, headers={"X-Request-ID": "agent-7.call_43"})
        assert r.status_code == 200 and r.headers["x-request-id"] == "agent-7.call_43"
        generated = set()
        for bad in ("has space", "x" * 129, "semi;colon", ""):
            r = post(c, "status", headers={"X-Request-ID": bad})
            rid = r.headers["x-request-id"]
            assert rid != bad and len(rid) == 32 and rid.isalnum()
            generated.add(rid)
        generated.add(c.get("/healthz").headers["x-request-id"])
        assert len(generated) == 5
        r = c.post("/v1/recall", content=b"x" * (6 * MIB), headers={"X-Request-ID": "big-one"})
        assert r.status_code == 413 and r.json()["request_id"] == "big-one"


def test_openapi_documents_every_operation(stack):
    with httpx.Client(base_url=stack.url, timeout=30.0) as c:
        doc = c.get("/openapi.json").json()
    schemas = doc["components"]["schemas"]
    for name, op in api.OPERATIONS.items():
        route = doc["paths"][f"/v1/{name}"]["post"]
        assert route["operationId"] == name and route["summary"] == op.summary
        assert op.request.__name__ in json.dumps(route["requestBody"])
        assert set(op.request.model_fields) == set(schemas[op.request.__name__]["properties"])
        assert {"200", "401", "403", "413", "422"} <= set(route["responses"])
        assert route["security"]
    assert schemas["RecallRequest"]["additionalProperties"] is False
    assert {"HTTPBearer", "APIKeyHeader"} <= set(doc["components"]["securitySchemes"])
    assert "/healthz" in doc["paths"] and "/readyz" in doc["paths"]


def test_health_and_readiness(stack):
    with httpx.Client(base_url=stack.url, timeout=30.0) as c:
        assert c.get("/healthz").json() == {"status": "ok"}
        r = c.get("/readyz")
    assert r.status_code == 200
    body = r.json()
    assert body["status"] == "ready"
    assert set(body["backends"]) == {"graph", "lexical", "vector", "keys"}
    assert all(b["status"] == "ok" for b in body["backends"].values())


class _Broken:
    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __getattr__(self, item: str) -> Any:
        return getattr(self.inner, item)

    def search(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("lexical index at /secret/path is on fire")


def test_readiness_fails_with_503_naming_the_backend_and_no_internals(tmp_path):
    settings = make_settings(tmp_path / "data")
    with ContextService.open(settings) as service:
        keys = registry.factory("keys", "sqlite")(settings)
        service.stores.lexical = _Broken(service.stores.lexical)
        try:
            with LiveServer(create_app(service, keys, settings)) as server:
                r = httpx.get(server.url + "/readyz", timeout=30.0)
                health = httpx.get(server.url + "/healthz", timeout=30.0)
        finally:
            service.stores.lexical = service.stores.lexical.inner
            keys.close()
    assert r.status_code == 503
    assert r.json()["status"] == "unavailable"
    assert r.json()["backends"]["lexical"] == {"status": "error", "error": "RuntimeError"}
    assert r.json()["backends"]["graph"]["status"] == "ok"
    assert "/secret/path" not in r.text
    assert health.status_code == 200


def test_an_unexpected_exception_is_a_500_without_internals(tmp_path):
    settings = make_settings(tmp_path / "data")
    with ContextService.open(settings) as service:
        keys = registry.factory("keys", "sqlite")(settings)
        token = keys.create(Principal("t", "tenant-a")).token
        service.stores.lexical = _Broken(service.stores.lexical)
        try:
            with (
                LiveServer(create_app(service, keys, settings)) as server,
                httpx.Client(base_url=server.url, headers={"X-API-Key": token}, timeout=30.0) as c,
            ):
                r = c.post("/v1/recall", json={"query": "anything"}, headers={"X-Request-ID": "boom-1"})
                assert c.get("/healthz").status_code == 200
        finally:
            service.stores.lexical = service.stores.lexical.inner
            keys.close()
    assert r.status_code == 500
    err = error_of(r)
    assert err["code"] == "internal_error" and "boom-1" in err["message"]
    assert "fire" not in r.text and "/secret/path" not in r.text and "Traceback" not in r.text


# -- concurrency --------------------------------------------------------------------------------

THREADS, ROUNDS = 8, 20


def test_concurrent_mixed_reads_and_writes_keep_the_store_consistent(stack):
    errors: list[str] = []
    created: dict[int, list[str]] = {t: [] for t in range(THREADS)}
    deleted: dict[int, list[str]] = {t: [] for t in range(THREADS)}

    def worker(t: int) -> None:
        try:
            rounds(t)
        except Exception as exc:  # a client-side failure is an error too, not a silent thread death
            errors.append(f"worker {t}: {type(exc).__name__}: {exc}")

    def rounds(t: int) -> None:
        with stack.client("c") as c:
            for i in range(ROUNDS):
                kind = i % 5
                if kind in (0, 3):
                    eid = f"w{t}-e{i}"
                    facts = (
                        [{"subject_id": eid, "predicate": "depends_on", "object_id": created[t][-1]}]
                        if created[t]
                        else []
                    )
                    body = {
                        "entities": [{"id": eid, "name": f"worker {t} entity {i}", "type": "service",
                                      "summary": f"written by worker {t} in round {i}"}],
                        "facts": facts,
                    }  # fmt: skip
                    r = post(c, "remember", body)
                    if r.status_code == 200:
                        created[t].append(eid)
                elif kind == 1:
                    r = post(c, "recall", {"query": f"worker {t} entity", "depth": 2})
                elif kind == 2 and created[t]:
                    r = post(c, "explain", {"name": created[t][-1]})
                elif kind == 4 and len(created[t]) > 1:
                    victim = created[t][0]
                    r = post(c, "forget", {"entity_ids": [victim]})
                    if r.status_code == 200 and r.json()["entities_deleted"] == 1:
                        deleted[t].append(created[t].pop(0))
                else:
                    r = post(c, "status")
                if r.status_code != 200:
                    errors.append(f"worker {t} round {i}: {r.status_code} {r.text[:200]}")

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(120)
    assert not any(th.is_alive() for th in threads), "a worker did not finish within 120 s"
    assert not errors, errors[:5]
    alive = sum(len(ids) for ids in created.values())
    assert alive > 0 and sum(len(ids) for ids in deleted.values()) > 0
    with stack.client("c") as c:
        status = post(c, "status").json()
        assert status["graph"]["entities"] == alive
        assert status["lexical_docs"] == alive and status["vectors"] == alive
        repaired = post(c, "reconcile").json()
        assert repaired == {"lexical_repaired": 0, "vector_repaired": 0, "removed_from_indexes": 0,
                            "graph_entities": alive, "vector_skipped": 0}  # fmt: skip
        for t in range(THREADS):
            if created[t]:
                assert post(c, "explain", {"name": created[t][-1]}).status_code == 200
            for gone in deleted[t]:
                assert post(c, "explain", {"name": gone}).status_code == 404
    stack.service.flush()  # the last writes' entries are completed by their index flush
    assert stack.service.stores.journal.count_pending() == 0
    assert "tenant-c" not in dumps(stack.service.status(TENANT_A))


class _WhereVerified:
    """A key store that records whether each verify ran in the event loop or in a worker thread."""

    def __init__(self, inner: Any, in_loop: object) -> None:
        self.inner, self.seen = inner, []
        if in_loop is not None:
            self.verify_in_loop = in_loop

    def verify(self, token: str) -> Principal:
        try:
            asyncio.get_running_loop()
            self.seen.append("event loop")
        except RuntimeError:
            self.seen.append("worker thread")
        return self.inner.verify(token)

    def __getattr__(self, name: str) -> Any:
        if name == "verify_in_loop":  # what this double says, never its inner store's
            raise AttributeError(name)
        return getattr(self.inner, name)


@pytest.mark.parametrize(
    ("in_loop", "where"),
    [(True, "event loop"), (None, "worker thread"), (False, "worker thread"), (1, "worker thread")],
)
def test_a_key_store_is_checked_in_the_event_loop_only_when_it_says_it_never_waits(
    tmp_path, in_loop: object, where: str
) -> None:
    """KeyStore.verify_in_loop: a store that may wait (a remote one, or one that does not say) is
    checked in a worker thread, never in the loop that serves every other request."""
    settings = make_settings(tmp_path / "data")
    with ContextService.open(settings, clock=fixed_clock) as service:
        inner = registry.factory("keys", settings.key_store_backend)(settings)
        keys = _WhereVerified(inner, in_loop)
        token = inner.create(Principal("agent-a", "tenant-a")).token
        try:
            with (
                LiveServer(create_app(service, keys, settings)) as server,
                httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {token}"}) as http,
            ):
                assert post(http, "recall", {"query": "anything"}).status_code == 200
                unknown = {"Authorization": f"Bearer {new_key().token}"}
                assert post(http, "recall", {"query": "x"}, headers=unknown).status_code == 401
        finally:
            inner.close()
        assert keys.seen == [where, where]
