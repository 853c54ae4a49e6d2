"""The fuzz suite's served app, once per graph backend: SQLite always, Gremlin Server and HugeGraph when
their URLs are set (CI sets them and GRAPHCTX_REQUIRE_SERVERS=1, which turns a missing one into a
failure instead of a skip). Each backend's data lives under a tenant of its own, cleared at the end.

The run is bounded and deterministic: every property test is derandomized (the same examples each
run, no example database) with a small `max_examples`; GRAPHCTX_FUZZ_EXAMPLES=N runs N examples per
test instead, for a longer hunt by hand."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from starlette.testclient import TestClient

from graphctx import registry
from graphctx.auth import Principal
from graphctx.kernel import templates as t
from graphctx.scope import Scope
from graphctx.service import ContextService
from graphctx.transports.http import create_app
from graphctx.transports.mcp import mount_mcp
from tests.conftest import make_settings

REQUIRED = os.environ.get("GRAPHCTX_REQUIRE_SERVERS") == "1"
EXAMPLES = int(os.environ.get("GRAPHCTX_FUZZ_EXAMPLES", "0") or 0)
SEED_ENTITIES = [
    {"id": "svc-1", "name": "checkout-api", "aliases": ["checkout"], "summary": "Turns carts into orders."},
    {"id": "team-1", "name": "Commerce", "type": "team"},
]
SEED_FACTS = [{"subject_id": "svc-1", "predicate": "owned_by", "object_id": "team-1"}]
SERVERS = {"gremlin": "GRAPHCTX_TEST_GREMLIN_URL", "hugegraph": "GRAPHCTX_TEST_HUGEGRAPH_URL"}


def examples(default: int) -> int:
    return EXAMPLES or default


def _backends() -> list[Any]:
    out: list[Any] = ["sqlite"]
    for name, env in SERVERS.items():
        if os.environ.get(env) or REQUIRED:
            out.append(name)
        else:
            out.append(pytest.param(name, marks=pytest.mark.skip(reason=f"{env} is not set (no server)")))
    return out


@dataclass
class Served:
    backend: str
    service: ContextService
    app: FastAPI
    client: TestClient
    token: str
    scope: Scope
    keys: Any

    def http_app(self) -> FastAPI:
        """The HTTP API alone (a second app over the same service), for a client that runs its own
        lifespan (MCP's session manager runs once per app)."""
        return create_app(self.service, self.keys, self.service.settings)

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


@pytest.fixture(scope="module", params=_backends())
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    backend = request.param
    env = {}
    if backend == "gremlin":
        env["GRAPHCTX_GREMLIN_URL"] = os.environ.get(SERVERS["gremlin"], "")
    if backend == "hugegraph":
        env["GRAPHCTX_HUGEGRAPH_URL"] = os.environ.get(SERVERS["hugegraph"], "")
        env["GRAPHCTX_HUGEGRAPH_GREMLIN_URL"] = os.environ.get("GRAPHCTX_TEST_HUGEGRAPH_GREMLIN_URL", "")
    with pytest.MonkeyPatch.context() as mp:
        for key, value in env.items():
            mp.setenv(key, value)
        data = Path(tmp_path_factory.mktemp(f"fuzz-{backend}")) / "data"
        settings = make_settings(data, graph_backend=backend)
        service = ContextService.open(settings)
        keys = registry.factory("keys", settings.key_store_backend)(settings)
        tenant = f"fuzz-{uuid.uuid4().hex[:10]}"
        token = keys.create(Principal("fuzz", tenant, ("default", "other"))).token
        app = create_app(service, keys, settings)
        mount_mcp(app, service, keys)
        service.remember(Scope(tenant, "default"), SEED_ENTITIES, SEED_FACTS)
        try:
            with TestClient(app, raise_server_exceptions=False) as client:
                yield Served(backend, service, app, client, token, Scope(tenant, "default"), keys)
        finally:
            for namespace in ("default", "other"):
                service.stores.graph.run(t.SCOPE_CLEAR, Scope(tenant, namespace), t.NoParams())
            service.close()
            keys.close()
