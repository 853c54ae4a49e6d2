"""The versioned, backend-neutral template catalogue: every graph read or write is one of these.

A template is a frozen spec: name, version, parameter model, result model and the clamps its
parameters are held to. Adapters translate each template into their native, parameter-bound form.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any, Generic, Literal, TypeVar, cast

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator

from graphctx import bounds
from graphctx.errors import InputError
from graphctx.model import PREDICATES, RESERVED_FACT_ID, Entity, Fact, IndexedHash, is_derived_id

CATALOG_VERSION = 1

P = TypeVar("P", bound=BaseModel)
R = TypeVar("R", bound=BaseModel)

Direction = Literal["out", "in", "both"]
ExactField = Literal["id", "qualified_name", "name", "alias"]


def _clamped(low: int, high: int) -> BeforeValidator:
    def clamp(value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool):
            return bounds.clamp(value, low, high)
        return value

    return BeforeValidator(clamp)


class _Params(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


_R = TypeVar("_R", bound="_Result")


class _Result(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    @classmethod
    def trusted(cls: type[_R], **fields: Any) -> _R:
        """A result made of values of the right types that are already built, mostly models an
        adapter decoded from what it stored (`Entity.from_store`): not validated again. Validating
        the container would run every contained model's after-validators once more (pydantic runs
        them on instances it is given), a fifth of the CPU of decoding a fact. Sequences must be
        tuples, as validation would have made them."""
        return cast(_R, cls.model_construct(**fields))  # pydantic's mypy plugin types it as _Result


def _edge_types(value: tuple[str, ...]) -> tuple[str, ...]:
    unknown = [v for v in value if v not in PREDICATES]
    if unknown:
        raise ValueError(f"edge type {unknown[0][:40]!r} is not in the allowlist")
    return tuple(sorted(set(value)))


Ids = Annotated[tuple[str, ...], Field(max_length=1000)]
Roots = Annotated[tuple[str, ...], Field(min_length=1, max_length=64)]


# ---- parameter models -------------------------------------------------------------------------


class EntityUpsertParams(_Params):
    entities: Annotated[tuple[Entity, ...], Field(max_length=5000)]


class EntityGetParams(_Params):
    ids: Ids


class EntityFindExactParams(_Params):
    """Equality on identifier fields; names and aliases compare case-insensitively (casefold)."""

    values: Annotated[tuple[str, ...], Field(min_length=1, max_length=64)]
    fields: tuple[ExactField, ...] = ("id", "qualified_name", "name", "alias")
    limit: Annotated[int, _clamped(1, 100)] = 50


class EntityDeleteParams(_Params):
    ids: Ids


class EntityHashesParams(_Params):
    """One page of (id, content hash) in id order, starting after `after`."""

    after: str = ""
    limit: Annotated[int, _clamped(1, 5000)] = 1000


def own_derived_ids(facts: tuple[Fact, ...]) -> tuple[Fact, ...]:
    """An id of the derived form must be derived from the fact's own content: stores find a fact of
    such an id at its subject, and two contents under one id would be two edges of one fact. Raised
    as InputError (not a ValueError), so every caller gets the typed error, whichever store runs."""
    for f in facts:
        if RESERVED_FACT_ID.fullmatch(f.id) and not is_derived_id(f):
            raise InputError(
                f"fact id {f.id!r} has the form of an id derived from a fact's content but names other "
                "content (subject, predicate, object, value or valid_from): a derived id names its "
                "content; give the fact no id to have its own, and to change a fact's start, "
                "invalidate it and add a new one",
                field="facts.id",
                fact_id=f.id,
            )
    return facts


class FactUpsertParams(_Params):
    """An explicit fact id of the derived form (`f_` or `e_` and 32 lowercase hex digits) must be one
    of the fact's own derived ids (graphctx.model.derived_fact_ids), else InputError."""

    facts: Annotated[tuple[Fact, ...], Field(max_length=5000)]

    _check_ids = field_validator("facts")(own_derived_ids)


class FactInvalidateParams(_Params):
    ids: Ids
    valid_to: datetime


class FactsFromRootsParams(_Params):
    roots: Roots
    predicates: tuple[str, ...] = ()
    direction: Direction = "both"
    include_invalid: bool = False
    as_of: datetime | None = None
    limit: Annotated[int, _clamped(1, bounds.MAX_FACTS)] = bounds.MAX_FACTS

    _check_predicates = field_validator("predicates")(_edge_types)


class NeighbourhoodParams(_Params):
    roots: Roots
    edge_types: tuple[str, ...] = ()
    direction: Direction = "both"
    depth: Annotated[int, _clamped(1, bounds.MAX_HOPS)] = 1
    per_direction_limit: Annotated[int, _clamped(1, bounds.PER_DIRECTION_LIMIT)] = 20
    limit: Annotated[int, _clamped(1, bounds.NEIGHBOURHOOD_LIMIT)] = 50
    as_of: datetime | None = None

    _check_edges = field_validator("edge_types")(_edge_types)


class ShortestPathParams(_Params):
    source: str
    target: str
    edge_types: tuple[str, ...] = ()
    direction: Direction = "both"
    max_depth: Annotated[int, _clamped(1, bounds.PATH_MAX_DEPTH)] = bounds.PATH_MAX_DEPTH
    as_of: datetime | None = None

    _check_edges = field_validator("edge_types")(_edge_types)


class NoParams(_Params):
    pass


# ---- result models ----------------------------------------------------------------------------


class UpsertResult(_Result):
    created: int = 0
    updated: int = 0
    unchanged: int = 0


class EntityList(_Result):
    entities: tuple[Entity, ...] = ()


class EntityName(_Result):
    """What a reader needs to name an entity (and to re-check its scope) without hydrating it."""

    id: str
    name: str
    qualified_name: str | None = None
    tenant_id: str | None = None
    namespace: str | None = None
    graph_id: str | None = None

    def display_name(self) -> str:
        """As Entity.display_name: the qualified name, else the name."""
        return self.qualified_name or self.name


class EntityNames(_Result):
    names: tuple[EntityName, ...] = ()


class ExactMatch(_Result):
    entity: Entity
    field: ExactField
    value: str


class ExactMatches(_Result):
    """Ordered by the field's rank (id, qualified_name, name, alias), then by entity id."""

    matches: tuple[ExactMatch, ...] = ()


class DeleteResult(_Result):
    deleted: int = 0
    facts_removed: int = 0


class HashPage(_Result):
    items: tuple[IndexedHash, ...] = ()


class FactList(_Result):
    """Ordered by (subject_id, predicate, object_id, id)."""

    facts: tuple[Fact, ...] = ()
    truncated: bool = False


class CountResult(_Result):
    count: int = 0


class Node(_Result):
    entity: Entity
    depth: int


class Subgraph(_Result):
    """Nodes ordered by (depth, id); edges by (subject_id, predicate, object_id, id)."""

    nodes: tuple[Node, ...] = ()
    edges: tuple[Fact, ...] = ()
    truncated: bool = False
    omitted: int = 0


class PathResult(_Result):
    """Nodes from source to target and the edges joining them; empty when no path within max_depth."""

    nodes: tuple[Entity, ...] = ()
    edges: tuple[Fact, ...] = ()


class ScopeStats(_Result):
    entities: int = 0
    facts: int = 0
    valid_facts: int = 0
    by_type: dict[str, int] = Field(default_factory=dict)


# ---- the catalogue ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Template(Generic[P, R]):
    name: str
    version: int
    params: type[P]
    result: type[R]
    summary: str

    def __str__(self) -> str:
        return f"{self.name}@v{self.version}"


ENTITY_UPSERT = Template(
    "entity.upsert",
    1,
    EntityUpsertParams,
    UpsertResult,
    "Insert or replace entities by id; created_at is kept on replace.",
)
ENTITY_GET = Template(
    "entity.get_by_ids",
    1,
    EntityGetParams,
    EntityList,
    "Hydrate entities by id, in the order of the ids given; missing ids are absent.",
)
ENTITY_NAMES = Template(
    "entity.names",
    1,
    EntityGetParams,
    EntityNames,
    "Id, name, qualified name and scope of entities by id, in the order given; missing ids are absent.",
)
ENTITY_FIND_EXACT = Template(
    "entity.find_exact",
    1,
    EntityFindExactParams,
    ExactMatches,
    "Equality lookup on id, qualified name, name and alias.",
)
ENTITY_DELETE = Template(
    "entity.delete", 1, EntityDeleteParams, DeleteResult, "Delete entities and every fact that touches them."
)
ENTITY_HASHES = Template(
    "entity.hashes",
    1,
    EntityHashesParams,
    HashPage,
    "Page through (id, content hash) in id order; what reconcile compares.",
)
FACT_UPSERT = Template(
    "fact.upsert",
    1,
    FactUpsertParams,
    UpsertResult,
    "Insert or replace facts; both endpoints must exist in the scope.",
)
FACT_INVALIDATE = Template(
    "fact.invalidate", 1, FactInvalidateParams, CountResult, "Set valid_to on facts; the rows are kept."
)
FACTS_FROM_ROOTS = Template(
    "fact.from_roots",
    1,
    FactsFromRootsParams,
    FactList,
    "Facts touching the roots, valid at as_of unless include_invalid.",
)
NEIGHBOURHOOD = Template(
    "graph.neighbourhood",
    1,
    NeighbourhoodParams,
    Subgraph,
    "Bounded 1-2 hop expansion with edge allowlist, direction and limits.",
)
SHORTEST_PATH = Template(
    "graph.shortest_path",
    1,
    ShortestPathParams,
    PathResult,
    "Bounded shortest path; ties broken by the smallest id sequence.",
)
SCOPE_STATS = Template("scope.stats", 1, NoParams, ScopeStats, "Counts of what the scope holds.")
SCOPE_CLEAR = Template(
    "scope.clear", 1, NoParams, CountResult, "Delete everything in the scope (admin/tests)."
)
# fmt: on

CATALOG: dict[str, Template[Any, Any]] = {
    t.name: t
    for t in (
        ENTITY_UPSERT,
        ENTITY_GET,
        ENTITY_NAMES,
        ENTITY_FIND_EXACT,
        ENTITY_DELETE,
        ENTITY_HASHES,
        FACT_UPSERT,
        FACT_INVALIDATE,
        FACTS_FROM_ROOTS,
        NEIGHBOURHOOD,
        SHORTEST_PATH,
        SCOPE_STATS,
        SCOPE_CLEAR,
    )
}
