"""One schema source: every operation's real answers, edge cases included (budget cuts, limits,
nothing found, no path, unknown files), validated against the schemas graphctx publishes: the
OpenAPI document of the HTTP API, the answer models of the Python API (graphctx.answers) and the
CLI's --json. MCP's output schemas are checked on every call in test_mcp.py. Every declared object is
closed for the check, so an answer field the models do not declare fails."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from graphctx import api, registry
from graphctx.answers import ANSWERS, RecallAnswer, parse, schema_of
from graphctx.auth import Principal
from graphctx.cli import app as cli_app
from graphctx.envelope import dumps
from graphctx.scope import shared_scope
from graphctx.service import ContextService
from graphctx.settings import Settings
from graphctx.transports.http import create_app
from tests.code.ops_graph import load_code
from tests.conftest import TENANT_A, fixed_clock, make_settings
from tests.service.memory_data import load
from tests.transports.live import LiveServer
from tests.transports.schemas import check

PRINCIPAL = Principal("agent-a", "tenant-a", ("default", "scratch"), ("code-a",))
CODE = {"graph_id": "code-a"}
SCRATCH = {"namespace": "scratch"}
DIFF = "--- a/shop/cart.py\n+++ b/shop/cart.py\n@@ -30 +30 @@\n-x\n+y\n"
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("recall", {"query": "who owns checkout", "depth": 2}),
    ("recall", {"query": "checkout payments redis api team incident", "depth": 2, "max_tokens": 300}),
    ("recall", {"query": "PAY-502-UPSTREAM", "include_ids": True, "as_of": "2020-01-01"}),
    ("recall", {"query": "zzzz-nothing-matches"}),
    ("explain", {"name": "checkout-api", "include_ids": True}),
    ("explain", {"name": "checkout-api", "max_tokens": 256}),
    ("neighbourhood", {"name": "checkout-api", "depth": 2, "include_ids": True}),
    ("neighbourhood", {"name": "checkout-api", "depth": 2, "limit": 2}),
    ("path", {"source": "redis-sessions", "target": "Payments Team", "include_ids": True}),
    ("path", {"source": "redis-sessions", "target": "checkout-api", "max_depth": 1}),
    ("search", {"query": "Cart.total", "include_ids": True, **CODE}),
    ("search", {"query": "qqqq-nothing", **CODE}),
    ("symbol", {"name": "shop/cart.py::Cart.total", "limit": 1, "include_ids": True, **CODE}),
    ("callers", {"name": "shop.tax.rate", "depth": 2, "max_tokens": 400, **CODE}),
    ("callers", {"name": "shop.tax.rate", "depth": 2, "limit": 1, **CODE}),
    ("callees", {"name": "shop.cart.Cart.add", "depth": 2, **CODE}),
    ("impact", {"diff": DIFF, "files": ["x.py"], **CODE}),
    ("impact", {"files": ["shop/tax.py"], "limit": 1, "depth": 2, **CODE}),
    ("remember", {"entities": [{"id": "s1", "name": "scratch-svc"}, {"id": "s2", "name": "scratch-team"}],
                  "facts": [{"subject_id": "s1", "predicate": "owned_by", "object_id": "s2"}], **SCRATCH}),
    ("remember", {"facts": [{"subject_id": "s1", "predicate": "owned_by", "object_id": "s1"}], **SCRATCH}),
    ("forget", {"entity_ids": ["s1", "s2"], **SCRATCH}),
    ("reconcile", SCRATCH),
    ("status", {}),
]  # fmt: skip


def test_every_operation_is_exercised():
    assert {op for op, _ in CALLS} == set(api.OPERATIONS) == set(ANSWERS)


@dataclass
class World:
    settings: Settings
    service: ContextService
    url: str
    token: str


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    settings = make_settings(tmp_path_factory.mktemp("schemas") / "data")
    with ContextService.open(settings, clock=fixed_clock) as service:
        load(service, TENANT_A, "MARKER-A")
        load_code(service, shared_scope("code-a"))
        keys = registry.factory("keys", settings.key_store_backend)(settings)
        token = keys.create(PRINCIPAL).token
        try:
            with LiveServer(create_app(service, keys, settings)) as server:
                yield World(settings, service, server.url, token)
        finally:
            keys.close()


@pytest.fixture(scope="module")
def openapi(world: World) -> dict[str, Any]:
    with httpx.Client(base_url=world.url, timeout=30.0) as http:
        return dict(http.get("/openapi.json").json())


def published(openapi: dict[str, Any], op: str) -> dict[str, Any]:
    """The OpenAPI document as a JSON schema of one operation's 200 answer (refs resolve inside it)."""
    content = openapi["paths"][f"/v1/{op}"]["post"]["responses"]["200"]["content"]["application/json"]
    return {"$ref": content["schema"]["$ref"], "components": openapi["components"]}


def test_openapi_publishes_every_answer_model_completely(openapi):
    schemas = openapi["components"]["schemas"]
    for op, model in ANSWERS.items():
        assert published(openapi, op)["$ref"] == f"#/components/schemas/{model.__name__}"
        assert set(schemas[model.__name__]["properties"]) == set(model.model_fields), op
    for part in ("Card", "CodeEntry", "FactLine", "Omission", "Changed", "Leg", "Counted"):
        assert part in schemas, part  # the code operations' and the envelopes' parts are all there


def test_http_answers_match_the_published_openapi_schemas(world, openapi):
    with httpx.Client(base_url=world.url, timeout=60.0, headers={"X-API-Key": world.token}) as http:
        for op, payload in CALLS:
            response = http.post(f"/v1/{op}", json=payload)
            assert response.status_code == 200, (op, response.text)
            check(published(openapi, op), response.json(), f"HTTP {op} {payload}")


def test_the_check_bites_on_an_undeclared_or_mistyped_field(world, openapi):
    symbol = next(payload for op, payload in CALLS if op == "symbol")
    answer = json.loads(dumps(api.execute(world.service, PRINCIPAL, "symbol", symbol)))
    check(published(openapi, "symbol"), answer, "as answered")
    for broken in (
        {**answer, "callers": [{**answer["callers"][0], "undeclared": 1}]},
        {**answer, "counts": {"callers": "one"}},
        {k: v for k, v in answer.items() if k != "subject"},
    ):
        with pytest.raises(AssertionError):
            check(published(openapi, "symbol"), broken, "broken")


def test_python_api_answers_match_the_models_and_parse_typed(world):
    for op, payload in CALLS:
        answer = json.loads(dumps(api.execute(world.service, PRINCIPAL, op, payload)))
        check(schema_of(ANSWERS[op]), answer, f"api {op} {payload}")
        assert isinstance(parse(op, answer), ANSWERS[op])
    # the facade's own answers carry the host's fields the transports leave out
    status = json.loads(dumps(world.service.status(TENANT_A)))
    check(schema_of(ANSWERS["status"]), status, "service.status")
    assert status["data_dir"] and status["mode"] == "write"
    repaired = json.loads(dumps(world.service.reconcile(TENANT_A)))
    check(schema_of(ANSWERS["reconcile"]), repaired, "service.reconcile")
    recall = parse("recall", world.service.recall(TENANT_A, "who owns checkout"))
    assert isinstance(recall, RecallAnswer) and recall.items[0].name == "checkout-api"


CLI_CALLS = [
    ("recall", ["recall", "who owns checkout", "--depth", "2"]),
    ("explain", ["explain", "checkout-api", "--ids"]),
    ("neighbourhood", ["neighbourhood", "checkout-api", "--depth", "2", "--limit", "2"]),
    ("path", ["path", "redis-sessions", "Payments Team"]),
    ("search", ["search", "Cart.total", "--graph", "code-a"]),
    ("symbol", ["symbol", "shop/cart.py::Cart.total", "--graph", "code-a"]),
    ("callers", ["callers", "shop.tax.rate", "--depth", "2", "--graph", "code-a"]),
    ("callees", ["callees", "shop.cart.Cart.add", "--graph", "code-a"]),
    ("impact", ["impact", "shop/tax.py", "--graph", "code-a"]),
    ("status", ["status"]),
]


def test_cli_json_answers_match_the_models(world, monkeypatch):
    monkeypatch.setenv("GRAPHCTX_DATA_DIR", str(world.settings.data_dir))
    monkeypatch.setenv("GRAPHCTX_EMBEDDER", "hashing")
    monkeypatch.setenv("GRAPHCTX_TENANT_ID", "tenant-a")
    runner = CliRunner()
    for op, argv in CLI_CALLS:  # read commands open the directory read-only beside the server
        result = runner.invoke(cli_app, [*argv, "--json"])
        assert result.exit_code == 0, (argv, result.output)
        check(schema_of(ANSWERS[op]), json.loads(result.stdout), f"CLI {argv}")
