"""Entities and facts to vertex / edge properties and back, plus the order keys the server sorts by."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from graphctx.kernel.templates import EntityName
from graphctx.model import Entity, Fact
from graphctx.scope import Scope

from . import keys
from .dialect import GremlinDialect

_COMPARED_ENTITY_FIELDS = (
    "name", "type", "summary", "qualified_name", "path", "line_start", "line_end", "signature", "source",
    "search_text",
)  # fmt: skip
_COMPARED_FACT_FIELDS = ("subject_id", "predicate", "object_id", "value", "source", "confidence")


def sort_key(entity_id: str) -> str:
    """Hex of the UTF-8 bytes: compared as strings anywhere, it orders like code points."""
    return entity_id.encode("utf-8").hex()


def order_key(subject_id: str, predicate: str, object_id: str | None, fact_id: str) -> str:
    """(subject, predicate, object, id) as one string with the same order. Hex fields and the
    predicates (lower-case ASCII) never contain the separator, which sorts below every character
    they use, so a shorter field sorts first exactly as in the tuple."""
    return " ".join((sort_key(subject_id), predicate, sort_key(object_id or ""), sort_key(fact_id)))


def owner(scope: Scope) -> tuple[str, str, str]:
    """The scope as store_rules.check_owner compares it."""
    return (scope.tenant_id, scope.namespace, scope.graph_id)


def utc(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


# ---- entities ---------------------------------------------------------------------------------


def entity_props(e: Entity, scope: Scope, dialect: GremlinDialect) -> dict[str, Any]:
    """The single-valued properties of an entity vertex (None = property absent); `e` carries its
    final created_at and updated_at. The alias keys are written separately, with set cardinality."""
    return {
        keys.TENANT_ID: scope.tenant_id,
        keys.NAMESPACE: scope.namespace,
        keys.GRAPH_ID: scope.graph_id,
        keys.ENTITY_ID: e.id,
        keys.NAME: e.name,
        keys.NAME_KEY: e.name.casefold(),
        keys.TYPE: e.type,
        keys.ALIASES: json.dumps(list(e.aliases), ensure_ascii=False),
        keys.SUMMARY: e.summary,
        keys.QUALIFIED_NAME: e.qualified_name,
        keys.PATH: e.path,
        keys.LINE_START: e.line_start,
        keys.LINE_END: e.line_end,
        keys.SIGNATURE: e.signature,
        keys.SOURCE: e.source,
        keys.SEARCH_TEXT: e.search_text or None,
        keys.CONTENT_HASH: e.content_hash,
        keys.SORT_KEY: sort_key(e.id),
        keys.CREATED_AT: None if e.created_at is None else dialect.encode_time(e.created_at),
        keys.UPDATED_AT: None if e.updated_at is None else dialect.encode_time(e.updated_at),
    }


def alias_keys(aliases: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(a.casefold() for a in aliases))


def flat(props: Mapping[Any, Any]) -> dict[str, Any]:
    """valueMap() answers lists for vertex properties; take the single value."""
    out: dict[str, Any] = {}
    for k, v in props.items():
        if isinstance(k, str):
            out[k] = v[0] if isinstance(v, list) and v else v
    return out


def entity(props: Mapping[str, Any], dialect: GremlinDialect) -> Entity:
    def time(key: str) -> datetime | None:
        value = props.get(key)
        return None if value is None else dialect.decode_time(value)

    def integer(key: str) -> int | None:
        value = props.get(key)
        return None if value is None else int(value)

    return Entity(
        id=props[keys.ENTITY_ID],
        name=props[keys.NAME],
        type=props[keys.TYPE],
        aliases=tuple(json.loads(props[keys.ALIASES])),
        summary=props[keys.SUMMARY],
        qualified_name=props.get(keys.QUALIFIED_NAME),
        path=props.get(keys.PATH),
        line_start=integer(keys.LINE_START),
        line_end=integer(keys.LINE_END),
        signature=props.get(keys.SIGNATURE),
        source=props[keys.SOURCE],
        search_text=props.get(keys.SEARCH_TEXT) or "",
        created_at=time(keys.CREATED_AT),
        updated_at=time(keys.UPDATED_AT),
        tenant_id=props[keys.TENANT_ID],
        namespace=props[keys.NAMESPACE],
        graph_id=props[keys.GRAPH_ID],
    )


def entity_name(props: Mapping[str, Any]) -> EntityName:
    return EntityName(
        id=props[keys.ENTITY_ID],
        name=props[keys.NAME],
        qualified_name=props.get(keys.QUALIFIED_NAME),
        tenant_id=props[keys.TENANT_ID],
        namespace=props[keys.NAMESPACE],
        graph_id=props[keys.GRAPH_ID],
    )


def same_entity(stored: Entity, e: Entity) -> bool:
    """Equal in every stored field but the stamps (what makes an upsert `unchanged`)."""
    return (
        stored.content_hash == e.content_hash
        and all(getattr(stored, f) == getattr(e, f) for f in _COMPARED_ENTITY_FIELDS)
        and stored.aliases == e.aliases
    )


# ---- facts ------------------------------------------------------------------------------------


def fact_props(f: Fact, scope: Scope, dialect: GremlinDialect) -> dict[str, Any]:
    """The properties of a fact edge (None = property absent); `f` carries its final stamps."""
    return {
        keys.TENANT_ID: scope.tenant_id,
        keys.NAMESPACE: scope.namespace,
        keys.GRAPH_ID: scope.graph_id,
        keys.FACT_ID: f.id,
        keys.PREDICATE: f.predicate,
        keys.SUBJECT_ID: f.subject_id,
        keys.OBJECT_ID: f.object_id,
        keys.LITERAL: f.object_id is None,
        keys.VALUE: f.value,
        keys.SOURCE: f.source,
        keys.CONFIDENCE: float(f.confidence),
        keys.VALID_FROM: None if f.valid_from is None else dialect.encode_time(f.valid_from),
        keys.VALID_TO: None if f.valid_to is None else dialect.encode_time(f.valid_to),
        keys.ORDER_KEY: order_key(f.subject_id, f.predicate, f.object_id, f.id),
        keys.CREATED_AT: None if f.created_at is None else dialect.encode_time(f.created_at),
        keys.UPDATED_AT: None if f.updated_at is None else dialect.encode_time(f.updated_at),
    }


def fact(props: Mapping[str, Any], dialect: GremlinDialect) -> Fact:
    def time(key: str) -> datetime | None:
        value = props.get(key)
        return None if value is None else dialect.decode_time(value)

    return Fact(
        id=props[keys.FACT_ID],
        subject_id=props[keys.SUBJECT_ID],
        predicate=props[keys.PREDICATE],
        object_id=props.get(keys.OBJECT_ID),
        value=props.get(keys.VALUE),
        source=props[keys.SOURCE],
        confidence=float(props[keys.CONFIDENCE]),
        valid_from=time(keys.VALID_FROM),
        valid_to=time(keys.VALID_TO),
        created_at=time(keys.CREATED_AT),
        updated_at=time(keys.UPDATED_AT),
        tenant_id=props[keys.TENANT_ID],
        namespace=props[keys.NAMESPACE],
        graph_id=props[keys.GRAPH_ID],
    )


def same_fact(stored: Fact, f: Fact) -> bool:
    return (
        all(getattr(stored, name) == getattr(f, name) for name in _COMPARED_FACT_FIELDS)
        and utc(stored.valid_from) == utc(f.valid_from)
        and utc(stored.valid_to) == utc(f.valid_to)
    )
