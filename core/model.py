"""Domain model: memory entities and facts, and the code graph's node and edge kinds."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from enum import StrEnum
from functools import cached_property
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from graphctx import bounds
from graphctx.redact import redact


class NodeKind(StrEnum):
    """Kinds of code-graph nodes. Memory entities use free-form types (service, team, ...)."""

    REPOSITORY = "repository"
    PACKAGE = "package"
    MODULE = "module"
    FILE = "file"
    CLASS = "class"
    TYPE = "type"  # a Go named type (struct, interface, ...)
    FUNCTION = "function"
    METHOD = "method"
    DOCUMENT = "document"
    SECTION = "section"


class EdgeKind(StrEnum):
    """Code-graph edges. Stored as fact predicates in lower case."""

    CONTAINS = "contains"
    IMPORTS = "imports"
    CALLS = "calls"
    INHERITS = "inherits"
    IMPLEMENTS = "implements"  # a Go type whose method set satisfies an interface
    TESTED_BY = "tested_by"
    MENTIONS = "mentions"
    EXPORTS = "exports"  # a package (or a re-exporting module) binds another's definition under its name


MEMORY_PREDICATES: frozenset[str] = frozenset(
    {
        "owns",
        "owned_by",
        "member_of",
        "leads",
        "reports_to",
        "works_on",
        "on_call_for",
        "depends_on",
        "calls_service",
        "part_of",
        "runs_on",
        "deployed_to",
        "stores_data_in",
        "uses",
        "caused",
        "affected",
        "resolved_by",
        "mitigated_by",
        "decided",
        "decided_by",
        "supersedes",
        "located_in",
        "relates_to",
        "has_status",
        "has_property",
        "note",
        "said",
    }
)
PREDICATES: frozenset[str] = MEMORY_PREDICATES | frozenset(k.value for k in EdgeKind)

Side = Literal["subject", "object"]
SINGLE_VALUED: dict[str, Side] = {
    "owned_by": "subject",  # a thing has one owner at a time ...
    "owns": "object",  # ... whichever way round it is said
    "on_call_for": "object",  # a service has one person on call at a time
    "leads": "object",  # a team has one lead
    "reports_to": "subject",
    "located_in": "subject",  # a region, a site
    "has_status": "subject",
}
"""The default single-valued predicates and the side that has one value at a time: remembering a
new current value for that side ends the previous one (settings: `single_valued_predicates`)."""


def _bounded(what: str, limit: int) -> AfterValidator:
    return AfterValidator(lambda v: bounds.check_text(what, v, limit))


EntityId = Annotated[str, _bounded("entity id", bounds.ID_BYTES)]
Stamp = Annotated[datetime, AfterValidator(bounds.check_instant)]
LineNo = Annotated[int, Field(ge=1, le=bounds.LINE_MAX)]
Name = Annotated[str, _bounded("name", bounds.NAME_BYTES)]


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=False, defer_build=True)


def stable_hash(*parts: Any) -> str:
    payload = _compact_json(parts)
    if payload is None:
        payload = json.dumps(parts, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:32]


_json_string = json.encoder.encode_basestring  # what json.dumps(ensure_ascii=False) writes a str as


def _compact_json(value: Any) -> str | None:
    """json.dumps(value, ensure_ascii=False, separators=(",", ":")) for what hashes are made of
    (strings, None, integers, lists and tuples, dicts with string keys), without building an
    encoder per call; None for anything else (the caller then asks json itself)."""
    kind = type(value)
    if kind is str:
        return str(_json_string(value))
    if value is None:
        return "null"
    if kind is int:
        return str(value)
    if kind is list or kind is tuple:
        items = [_compact_json(v) for v in value]
        return None if None in items else "[" + ",".join(items) + "]"  # type: ignore[arg-type]
    if kind is dict:
        pairs = []
        for k, v in value.items():
            encoded = _compact_json(v)
            if type(k) is not str or encoded is None:
                return None
            pairs.append(f"{_json_string(k)}:{encoded}")
        return "{" + ",".join(pairs) + "}"
    return None


class Entity(_Frozen):
    """A node of the graph: a memory entity or a code symbol. Never holds a full source body."""

    id: EntityId
    name: Name
    type: str = Field(default="thing", pattern=r"^[a-z][a-z0-9_]{0,63}$")
    aliases: tuple[str, ...] = ()
    summary: str = ""
    qualified_name: str | None = None
    path: str | None = None
    line_start: LineNo | None = None
    line_end: LineNo | None = None
    signature: str | None = None
    source: str = ""
    search_text: str = ""
    """Indexed-only text: searchable through the lexical index, never shown in an answer nor stored
    by an index (a code symbol's whole docstring, signature, decorators, bases and referenced names;
    a Markdown section's text). Redacted like the summary; derived, so re-deriving it is idempotent."""
    created_at: Stamp | None = None
    updated_at: Stamp | None = None
    tenant_id: str | None = None
    namespace: str | None = None
    graph_id: str | None = None

    @field_validator("aliases", mode="before")
    @classmethod
    def _aliases(cls, value: Any) -> tuple[str, ...]:
        if isinstance(value, str) or not isinstance(value, list | tuple):
            raise ValueError("aliases must be a list of strings")
        bounds.check_count("aliases", value, bounds.ALIASES_PER_ENTITY)
        # order-preserving de-duplication keeps the content hash stable for equal alias sets
        return tuple(dict.fromkeys(bounds.check_text("alias", a, bounds.ALIAS_BYTES) for a in value))

    @field_validator("summary")
    @classmethod
    def _summary(cls, value: str) -> str:
        return redact(bounds.check_text("summary", value, bounds.SUMMARY_BYTES, allow_empty=True))

    @field_validator("search_text")
    @classmethod
    def _search_text(cls, value: str) -> str:
        return redact(bounds.check_text("search_text", value, bounds.SEARCH_TEXT_BYTES, allow_empty=True))

    @field_validator("qualified_name", "path", "signature", "source")
    @classmethod
    def _selector(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return None
        return bounds.check_text(info.field_name or "field", value, bounds.SELECTOR_BYTES, allow_empty=True)

    @model_validator(mode="after")
    def _lines(self) -> Entity:
        if self.line_start and self.line_end and self.line_end < self.line_start:
            raise ValueError("line_end is before line_start")
        return self

    @classmethod
    def from_store(cls, *, content_hash: str | None = None, **fields: Any) -> Entity:
        """An entity read back from the store it was validated (bounds checked, summary and search
        text redacted) for when it was written: built without validating or redacting again, which
        was most of the CPU of a read. Only for values that came in through this model.

        A copy of an empty stored entity with the fields replaced (`model_copy(update=...)`, which
        validates nothing, like `model_construct`, but copies the defaults as one dict instead of
        visiting every field: half the time); a field not given keeps its default. `content_hash`,
        when given, is the hash the store computed from these fields when it wrote them."""
        entity = _STORED_ENTITY.model_copy(update=fields) if cls is Entity else cls.model_construct(**fields)
        if content_hash is not None:
            entity.__dict__["content_hash"] = content_hash  # what the cached property would compute
        return entity

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Entity:
        copied = super().model_copy(update=update, deep=deep)
        copied.__dict__.pop("content_hash", None)  # computed again from the copy's fields
        return copied

    @cached_property
    def content_hash(self) -> str:
        """Hash of everything the indexes derive from this entity; a change means a stale index entry.
        The search text joins the hash only when present, so entities without one keep their hash.
        Computed once per instance (the model is frozen; a copy computes its own)."""
        parts: list[Any] = [
            self.name,
            self.type,
            list(self.aliases),
            self.summary,
            self.qualified_name,
            self.path,
            self.line_start,
            self.line_end,
            self.signature,
        ]
        if self.search_text:
            parts.append({"search_text": self.search_text})
        return stable_hash(*parts)

    def display_name(self) -> str:
        return self.qualified_name or self.name

    def identity(self) -> str:
        """The selector that resolves to this entity unless another in its scope shares its qualified
        name or path::name: that one, else the id (which always resolves to exactly this entity)."""
        if self.qualified_name:
            return self.qualified_name
        if self.path:
            return f"{self.path}::{self.name}"
        return self.id


class Fact(_Frozen):
    """subject -[predicate]-> object (an entity) and/or a literal value, valid over [valid_from, valid_to)."""

    id: str = ""
    subject_id: EntityId
    predicate: str
    object_id: EntityId | None = None
    value: str | None = None
    source: str = ""
    confidence: float = Field(default=1.0, ge=0.0, le=1.0)
    valid_from: Stamp | None = None
    valid_to: Stamp | None = None
    created_at: Stamp | None = None
    updated_at: Stamp | None = None
    tenant_id: str | None = None
    namespace: str | None = None
    graph_id: str | None = None

    @field_validator("predicate")
    @classmethod
    def _predicate(cls, value: str) -> str:
        if value not in PREDICATES:
            raise ValueError(f"predicate {value[:40]!r} is not in the allowlist")
        return value

    @field_validator("value")
    @classmethod
    def _value(cls, value: str | None) -> str | None:
        if value is None:
            return None
        return redact(bounds.check_text("fact value", value, bounds.FACT_VALUE_BYTES))

    @field_validator("source")
    @classmethod
    def _source(cls, value: str) -> str:
        return bounds.check_text("source", value, bounds.SELECTOR_BYTES, allow_empty=True)

    @model_validator(mode="after")
    def _shape(self) -> Fact:
        if self.object_id is None and self.value is None:
            raise ValueError("a fact needs an object_id, a value, or both")
        if self.valid_from and self.valid_to and self.valid_to < self.valid_from:
            raise ValueError("valid_to is before valid_from")
        if not self.id:
            object.__setattr__(self, "id", default_fact_id(self))
        else:
            bounds.check_text("fact id", self.id, bounds.ID_BYTES)
        return self

    @classmethod
    def from_store(cls, **fields: Any) -> Fact:
        """A fact read back from the store it was validated (and its value redacted) for when it was
        written, with its id: built without validating again (see Entity.from_store). Also for
        facts whose every field the caller built and checked as validation would (code edges)."""
        return _STORED_FACT.model_copy(update=fields) if cls is Fact else cls.model_construct(**fields)

    def is_valid_at(self, when: datetime) -> bool:
        if self.valid_from and when < self.valid_from:
            return False
        return not (self.valid_to and when >= self.valid_to)

    def status_at(self, when: datetime) -> str:
        """ "current", "future" (starts after `when`) or "ended" (ended at or before `when`)."""
        if self.valid_from and when < self.valid_from:
            return "future"
        return "ended" if self.valid_to and when >= self.valid_to else "current"


_STORED_ENTITY = Entity.model_construct(id="", name="")
_STORED_FACT = Fact.model_construct(id="", subject_id="", predicate="")
"""What from_store copies: every default, and the fields a stored record always has (so a copy's
`model_fields_set` is the fields given, as model_construct's)."""


def default_fact_id(fact: Fact) -> str:
    """The id of a fact given without one: subject, predicate, object, value and validity start, so
    two periods of one relation are two facts. A fact with no start keeps the id it had before
    validity was part of its identity (stores written then stay addressable)."""
    parts: list[Any] = [fact.subject_id, fact.predicate, fact.object_id, fact.value]
    if fact.valid_from is not None:
        parts.append(_utc_text(fact.valid_from))
    return "f_" + stable_hash(*parts)


def legacy_fact_id(fact: Fact) -> str:
    """The id `default_fact_id` gave before validity was part of identity (no start): a fact with a
    start stored under it keeps it."""
    return "f_" + stable_hash(fact.subject_id, fact.predicate, fact.object_id, fact.value)


def code_edge_id(subject: str, predicate: str, obj: str) -> str:
    """The id the code indexer gives an edge of the code graph: one per (subject, predicate, object)."""
    return "e_" + stable_hash(subject, predicate, obj)


RESERVED_FACT_ID = re.compile(r"[fe]_[0-9a-f]{32}")
"""The form of the ids derived from a fact's content (`derived_fact_ids`): an explicit id of this form
must be one of the fact's own, so a derived id always names its content and its place (the subject)."""


def derived_fact_ids(fact: Fact) -> frozenset[str]:
    """Every id derived from the fact's content: the current default, its legacy form and, for a fact
    with an object, the code indexer's edge id. Each starts with subject and predicate, so a fact
    stored under one of them hangs from its subject with its predicate's label."""
    ids = {default_fact_id(fact), legacy_fact_id(fact)}
    if fact.object_id is not None:
        ids.add(code_edge_id(fact.subject_id, fact.predicate, fact.object_id))
    return frozenset(ids)


def is_derived_id(fact: Fact) -> bool:
    """Whether the fact's id is one of `derived_fact_ids(fact)`, computing only the one its prefix
    can be (`e_`: the edge id; `f_`: the default, then the legacy form)."""
    if fact.id.startswith("e_"):
        return fact.object_id is not None and fact.id == code_edge_id(
            fact.subject_id, fact.predicate, fact.object_id
        )
    return fact.id == default_fact_id(fact) or fact.id == legacy_fact_id(fact)


def _utc_text(when: datetime) -> str:
    aware = when if when.tzinfo is not None else when.replace(tzinfo=UTC)
    return aware.astimezone(UTC).isoformat(timespec="microseconds")


class IndexedHash(_Frozen):
    """An id and the content hash an index (or the graph) holds for it; what reconcile compares."""

    id: str
    content_hash: str
