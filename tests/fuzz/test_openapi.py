"""Schemathesis against the published OpenAPI document, on every graph backend: requests generated from
the schema (ones that fit it and ones that do not) to every route; no 5xx, every error in the
documented shape, nothing of the machine in any answer.

The schema's strategies are driven by hypothesis directly: schemathesis' pytest loader for fixtures
does not run on pytest 9.2 (it sets a node attribute pytest no longer has)."""

from __future__ import annotations

from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error

from tests.fuzz.conftest import Served, examples
from tests.fuzz.test_requests import no_leak, still_serving


@pytest.fixture(scope="module")
def api_schema(served: Served) -> Any:
    return schemathesis.openapi.from_asgi("/openapi.json", served.http_app())


def _operations(schema: Any) -> list[Any]:
    return [result.ok() for result in schema.get_all_operations()]


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE], ids=str)
def test_the_published_api_answers_every_generated_request_without_a_5xx(
    api_schema: Any, served: Served, mode: GenerationMode
) -> None:
    operations = _operations(api_schema)
    assert len(operations) >= 15  # every /v1 operation, /healthz and /readyz
    if mode == GenerationMode.NEGATIVE:  # a GET without parameters has no request that misfits it
        operations = [op for op in operations if op.method.upper() == "POST"]
    for operation in operations:

        @settings(
            max_examples=examples(4),
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(case=operation.as_strategy(generation_mode=mode))
        def run(case: Any) -> None:
            response = case.call(headers=served.headers)
            case.validate_response(response, checks=[not_a_server_error])
            if response.status_code >= 400:
                body = response.json()
                assert set(body) == {"error", "request_id"}, body
                assert set(body["error"]) <= {"code", "message", "details"}
                assert body["error"]["code"] != "internal_error" and body["error"]["message"]
            no_leak(response.text, served)

        run()
    still_serving(served)
