"""Injection payloads are stored and found literally, or rejected by a bound, never interpreted."""

from __future__ import annotations

import pytest

from graphctx.envelope import dumps
from graphctx.errors import InputError
from tests.conftest import TENANT_A, TENANT_B

PAYLOADS = [
    "'; DROP TABLE entities; --",
    '" OR 1=1 --',
    "x' OR tenant_id='tenant-b",
    "g.V().drop().iterate()",
    "').drop();g.V('",
    "System.exit(0)",
    "${jndi:ldap://x}",
    "tenant_id:tenant-b OR name:*",
    "name:/.*/",
    "*",
    'foo AND (bar "unbalanced',
    "+user -name^100 entity_id:[a TO z]",
    "\\\\ \\' \\\" \\n",
    "line\nbreak\ttab\x01\x1f",
    "emoji 🧨 ünïcode ナイフ",
    "L" * 1024,
]


@pytest.fixture
def poisoned(service):
    ents = [
        {"id": f"p{i}", "name": p, "aliases": [p[::-1] or "x"], "summary": p} for i, p in enumerate(PAYLOADS)
    ]
    facts = [{"subject_id": f"p{i}", "predicate": "note", "value": p} for i, p in enumerate(PAYLOADS)]
    service.remember(TENANT_A, ents, facts)
    service.remember(TENANT_B, [{"id": "secret", "name": "tenant-b secret", "summary": "MARKER-B"}])
    return service


@pytest.mark.parametrize("index", range(len(PAYLOADS)))
def test_payload_names_are_found_literally(poisoned, index):
    payload = PAYLOADS[index]
    env = poisoned.recall(TENANT_A, payload)
    assert "MARKER-B" not in dumps(env)
    assert env["items"][0]["name"] == payload
    assert env["items"][0]["match"].get("exact") == "name"
    card = poisoned.explain(TENANT_A, f"p{index}")
    assert card["subject"]["name"] == payload
    assert card["facts"][0]["value"] == payload


def test_the_store_survives_every_payload(poisoned):
    assert poisoned.status(TENANT_A)["graph"]["entities"] == len(PAYLOADS)
    assert poisoned.status(TENANT_B)["graph"]["entities"] == 1


def test_oversized_and_nul_payloads_are_rejected_by_a_bound(service):
    with pytest.raises(InputError, match="name"):
        service.remember(TENANT_A, [{"id": "x", "name": "N" * 1025}])
    with pytest.raises(InputError, match="NUL"):
        service.remember(TENANT_A, [{"id": "x", "name": "a\x00b"}])
    assert service.status(TENANT_A)["graph"]["entities"] == 0


def test_a_record_cannot_name_another_tenant(service):
    from graphctx.errors import ScopeError

    with pytest.raises(ScopeError):
        service.remember(TENANT_A, [{"id": "x", "name": "x", "tenant_id": "tenant-b"}])
