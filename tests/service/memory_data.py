"""A small memory graph used by the service tests: the same ids in every tenant, a marker per tenant."""

from __future__ import annotations

from typing import Any


def entities(marker: str) -> list[dict[str, Any]]:
    return [
        {
            "id": "svc-checkout",
            "name": "checkout-api",
            "type": "service",
            "aliases": ["checkout", "co-api"],
            "summary": f"Turns carts into orders. {marker}",
        },
        {
            "id": "svc-pay",
            "name": "payment-gateway",
            "type": "service",
            "aliases": ["pgw", "PAY-502-UPSTREAM"],
            "summary": f"Talks to the card processor with idempotency keys. {marker}",
        },
        {
            "id": "team-pay",
            "name": "Payments Team",
            "type": "team",
            "aliases": ["payments"],
            "summary": f"Owns card processing. {marker}",
        },
        {
            "id": "team-com",
            "name": "Commerce Platform",
            "type": "team",
            "aliases": ["commerce"],
            "summary": f"Owns checkout since 2025. {marker}",
        },
        {
            "id": "inc-1",
            "name": "INC-2041 checkout latency spike",
            "type": "incident",
            "summary": f"p99 of checkout rose to 9 s; redis evictions. {marker}",
        },
        {
            "id": "db-redis",
            "name": "redis-sessions",
            "type": "datastore",
            "aliases": ["redis"],
            "summary": f"Session store, decommissioned. {marker}",
        },
    ]


def facts(marker: str) -> list[dict[str, Any]]:
    return [
        {
            "subject_id": "svc-checkout",
            "predicate": "owned_by",
            "object_id": "team-pay",
            "valid_from": "2023-01-01T00:00:00Z",
            "valid_to": "2025-06-01T00:00:00Z",
            "source": "catalog",
        },
        {
            "subject_id": "svc-checkout",
            "predicate": "owned_by",
            "object_id": "team-com",
            "valid_from": "2025-06-01T00:00:00Z",
            "source": "catalog",
        },
        {"subject_id": "svc-checkout", "predicate": "depends_on", "object_id": "svc-pay"},
        {
            "subject_id": "svc-checkout",
            "predicate": "depends_on",
            "object_id": "db-redis",
            "valid_to": "2025-08-15T00:00:00Z",
        },
        {
            "subject_id": "inc-1",
            "predicate": "affected",
            "object_id": "svc-checkout",
            "value": f"p99 9 s {marker}",
        },
        {"subject_id": "db-redis", "predicate": "caused", "object_id": "inc-1"},
        {"subject_id": "svc-pay", "predicate": "owned_by", "object_id": "team-pay"},
    ]


def load(service: Any, scope: Any, marker: str) -> dict[str, Any]:
    return service.remember(scope, entities(marker), facts(marker))
