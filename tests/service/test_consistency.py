"""Deleted and superseded entities never surface; a crash between graph and index is repaired."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from graphctx.envelope import dumps
from graphctx.errors import InputError
from graphctx.kernel.templates import ENTITY_DELETE, ENTITY_UPSERT, EntityDeleteParams, EntityUpsertParams
from graphctx.model import Entity
from graphctx.service import ContextService
from tests.conftest import TENANT_A, fixed_clock, make_settings
from tests.service.memory_data import load


def test_deleted_entity_never_appears_even_when_indexes_still_hold_it(service):
    load(service, TENANT_A, "m")
    # delete in the graph only: the indexes still hold the entity, as after a crash
    service.stores.graph.run(ENTITY_DELETE, TENANT_A, EntityDeleteParams(ids=("svc-pay",)))
    env = service.recall(TENANT_A, "payment-gateway idempotency processor")
    assert "payment-gateway" not in dumps(env)
    assert env["coverage"]["dropped_missing"] >= 1


def test_superseded_entity_version_never_appears(service):
    load(service, TENANT_A, "m")
    newer = Entity(
        id="db-redis",
        name="valkey-sessions",
        type="datastore",
        summary="Replaced redis.",
        tenant_id="tenant-a",
        namespace="default",
        graph_id="",
    )
    service.stores.graph.run(ENTITY_UPSERT, TENANT_A, EntityUpsertParams(entities=(newer,)))
    env = service.recall(TENANT_A, "redis-sessions decommissioned session store")
    assert "redis-sessions" not in [i["name"] for i in env["items"]]
    assert env["coverage"]["dropped_stale"] >= 1
    # after reconcile the index matches the graph and the new version is found
    report = service.reconcile(TENANT_A)
    assert report["lexical_repaired"] >= 1
    assert service.recall(TENANT_A, "valkey")["items"][0]["name"] == "valkey-sessions"


def test_writes_are_idempotent(service):
    first = load(service, TENANT_A, "m")
    second = load(service, TENANT_A, "m")
    assert first["entities"]["created"] == 6
    assert second["entities"]["unchanged"] == 6
    assert service.status(TENANT_A)["lexical_docs"] == 6


def test_bad_record_in_a_bulk_load_writes_nothing(service):
    lines = ['{"kind": "entity", "id": "ok", "name": "fine"}', '{"kind": "entity", "id": "bad"}']
    with pytest.raises(InputError, match="line 2"):
        service.remember_jsonl(TENANT_A, lines)
    assert service.status(TENANT_A)["graph"]["entities"] == 0


CRASH = textwrap.dedent(
    """
    import os, sys
    from graphctx.service import ContextService
    from tests.conftest import TENANT_A, fixed_clock, make_settings
    from pathlib import Path
    service = ContextService.open(make_settings(Path(sys.argv[1])), clock=fixed_clock)
    def die(*a, **k):
        os._exit(9)  # killed between the graph commit and the index write
    service.stores.lexical.upsert = die
    service.remember(TENANT_A, [{"id": "late", "name": "late-arrival", "summary": "written during a crash"}])
    """
)


def test_killed_between_graph_and_index_write_is_completed_at_the_next_open(tmp_path):
    data = tmp_path / "data"
    with ContextService.open(make_settings(data), clock=fixed_clock) as service:
        load(service, TENANT_A, "m")
    proc = subprocess.run(
        [sys.executable, "-c", CRASH, str(data)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 9, proc.stderr
    with ContextService.open(make_settings(data), mode="read", clock=fixed_clock) as reader:
        status = reader.status(TENANT_A)
        assert status["graph"]["entities"] == 7  # the graph committed
        assert status["pending_index_work"] == 1  # the journaled write
        assert status["lexical_docs"] == 6  # the index did not
    with ContextService.open(make_settings(data), clock=fixed_clock) as service:
        assert service.recovered["writes_completed"] == 1  # no manual step
        after = service.status(TENANT_A)
        assert after["pending_index_work"] == 0
        assert after["lexical_docs"] == after["vectors"] == after["graph"]["entities"] == 7
        env = service.recall(TENANT_A, "written during a crash")
        assert env["items"][0]["name"] == "late-arrival"
        assert "bm25" in env["items"][0]["match"]
