"""The transport-neutral operation catalogue: every operation's request model, handler and
description, shared by HTTP and MCP so that every transport validates, scopes and answers alike."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, Strict, ValidationError

from graphctx import bounds
from graphctx.auth import AuthError, Principal
from graphctx.code.ops import DEFAULT_LIMIT
from graphctx.errors import (
    AmbiguousName,
    BackendError,
    BackendUnavailable,
    BoundExceeded,
    BudgetError,
    ConfigError,
    DataDirLocked,
    DeadlineExceeded,
    GraphctxError,
    InputError,
    MethodNotAllowed,
    NotFound,
    OverCapacity,
    ReadOnly,
    RequestTimeout,
    ScopeError,
    SettingsDiffer,
    from_validation,
)
from graphctx.scope import Scope
from graphctx.service import ContextService

Query = Annotated[str, AfterValidator(bounds.check_query)]
Selector = Annotated[str, AfterValidator(lambda v: bounds.check_selector("name", v))]
Tokens = Annotated[
    int | None, Field(default=None, description="Token budget of the answer; normalised to 256-20000.")
]
IncludeIds = Annotated[
    bool, Field(default=False, description="Include opaque full ids (only when you need them).")
]


def _utc(value: datetime | None) -> datetime | None:
    if value is not None:
        bounds.check_instant(value)
    if value is not None and value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value


AsOf = Annotated[
    Annotated[datetime, Strict(False)] | None,  # ISO text from JSON is welcome here
    AfterValidator(_utc),
    Field(
        default=None,
        description="The instant to answer for (ISO-8601, UTC when no offset; default now): facts valid "
        "then are current, later ones are future, earlier ones history.",
    ),
]
EdgeTypes = Annotated[
    list[str], Field(default_factory=list, max_length=16, description="Edge types to follow.")
]


class Request(BaseModel):
    """Selectors may only pick among what the caller's key allows; they never widen it."""

    model_config = ConfigDict(extra="forbid", strict=True, defer_build=True)

    tenant_id: str | None = Field(default=None, description="Optional; must equal the key's tenant.")
    namespace: str | None = Field(
        default=None, description="One of the key's namespaces (default: its first)."
    )
    graph_id: str | None = Field(default=None, description="A shared code graph the key may read.")


class RecallRequest(Request):
    query: Query = Field(description="What to recall: words, names or identifiers (at most 4 KiB).")
    max_tokens: Tokens
    depth: int = Field(
        default=1, ge=1, le=2, description="Expansion hops: 1 = facts of each hit, 2 = neighbours."
    )
    include_ids: IncludeIds
    as_of: AsOf


class ExplainRequest(Request):
    name: Selector = Field(description="Id, qualified name, path::name, or a name/alias that is unambiguous.")
    max_tokens: Tokens
    include_history: bool = Field(
        default=True, description="Also list future facts and history (ended, superseded)."
    )
    include_ids: IncludeIds
    as_of: AsOf


class NeighbourhoodRequest(Request):
    name: Selector = Field(description="The entity to start from (as for explain).")
    depth: int = Field(default=1, ge=1, le=2)
    edge_types: EdgeTypes
    direction: Literal["out", "in", "both"] = "both"
    limit: int = Field(default=50, ge=1, le=200)
    max_tokens: Tokens
    include_ids: IncludeIds


class PathRequest(Request):
    source: Selector
    target: Selector
    max_depth: int = Field(default=bounds.PATH_MAX_DEPTH, ge=1, le=bounds.PATH_MAX_DEPTH)
    edge_types: EdgeTypes
    max_tokens: Tokens
    include_ids: IncludeIds


class RememberRequest(Request):
    model_config = ConfigDict(extra="forbid", strict=False, defer_build=True)

    entities: list[dict[str, Any]] = Field(default_factory=list, max_length=5000)
    facts: list[dict[str, Any]] = Field(default_factory=list, max_length=5000)


class ForgetRequest(Request):
    entity_ids: list[str] = Field(
        default_factory=list, max_length=1000, description="Deleted, with their facts."
    )
    fact_ids: list[str] = Field(
        default_factory=list, max_length=1000, description="Invalidated; rows are kept."
    )


class SearchRequest(Request):
    query: Query = Field(
        description="Words, a name or an identifier to find in code and docs (at most 4 KiB)."
    )
    max_tokens: Tokens
    include_ids: IncludeIds


Limit = Annotated[
    int,
    Field(
        default=DEFAULT_LIMIT,
        ge=1,
        le=bounds.PER_DIRECTION_LIMIT,
        description="Most entries per direction (1-50); `counts` and `omissions` say how many more exist.",
    ),
]
Depth = Annotated[int, Field(default=1, ge=1, le=bounds.MAX_HOPS, description="Call-graph hops (1-2).")]


class SymbolRequest(Request):
    name: Selector = Field(description="Qualified name, path::name, id, or a name that is unambiguous.")
    limit: Limit
    max_tokens: Tokens
    include_ids: IncludeIds


class CallsRequest(Request):
    name: Selector = Field(description="The symbol (as for symbol).")
    depth: Depth
    limit: Limit
    max_tokens: Tokens
    include_ids: IncludeIds


def _file_list(value: object) -> object:
    if isinstance(value, list):
        bounds.check_count("files", value, bounds.FILE_LIST_ENTRIES)
    return value


FilePath = Annotated[str, AfterValidator(lambda v: bounds.check_selector("file path", v))]
DiffText = Annotated[str, AfterValidator(lambda v: bounds.check_text("diff", v, bounds.DIFF_BYTES))]


class ImpactRequest(Request):
    files: Annotated[list[FilePath], BeforeValidator(_file_list)] = Field(
        default_factory=list,
        max_length=bounds.FILE_LIST_ENTRIES,
        description="Changed files, repository-relative (at most 100); all their symbols count as changed.",
    )
    diff: DiffText | None = Field(
        default=None, description="A unified diff (at most 4 MiB); its hunks give the changed lines."
    )
    depth: Depth
    limit: Limit
    max_tokens: Tokens
    include_ids: IncludeIds
    repo: str | None = Field(
        default=None,
        max_length=100,
        description="Only this indexed repository (by name); by default every repository holding a path.",
    )


class EmptyRequest(Request):
    pass


Handler = Callable[[ContextService, Scope, Any], dict[str, Any]]


@dataclass(frozen=True)
class Operation:
    name: str
    request: type[Request]
    handler: Handler
    summary: str
    mutating: bool = False


def _recall(s: ContextService, scope: Scope, r: RecallRequest) -> dict[str, Any]:
    return s.recall(
        scope, r.query, max_tokens=r.max_tokens, depth=r.depth, include_ids=r.include_ids, as_of=r.as_of
    )


def _explain(s: ContextService, scope: Scope, r: ExplainRequest) -> dict[str, Any]:
    return s.explain(
        scope, r.name, max_tokens=r.max_tokens, include_history=r.include_history, include_ids=r.include_ids,
        as_of=r.as_of,
    )  # fmt: skip


def _neighbourhood(s: ContextService, scope: Scope, r: NeighbourhoodRequest) -> dict[str, Any]:
    return s.neighbourhood(
        scope, r.name, depth=r.depth, edge_types=r.edge_types, direction=r.direction, limit=r.limit,
        max_tokens=r.max_tokens, include_ids=r.include_ids,
    )  # fmt: skip


def _path(s: ContextService, scope: Scope, r: PathRequest) -> dict[str, Any]:
    return s.path(
        scope, r.source, r.target, max_depth=r.max_depth, edge_types=r.edge_types, max_tokens=r.max_tokens,
        include_ids=r.include_ids,
    )  # fmt: skip


def _search(s: ContextService, scope: Scope, r: SearchRequest) -> dict[str, Any]:
    return s.search(scope, r.query, max_tokens=r.max_tokens, include_ids=r.include_ids)


def _symbol(s: ContextService, scope: Scope, r: SymbolRequest) -> dict[str, Any]:
    return s.symbol(scope, r.name, limit=r.limit, max_tokens=r.max_tokens, include_ids=r.include_ids)


def _callers(s: ContextService, scope: Scope, r: CallsRequest) -> dict[str, Any]:
    return s.callers(
        scope, r.name, depth=r.depth, limit=r.limit, max_tokens=r.max_tokens, include_ids=r.include_ids
    )


def _callees(s: ContextService, scope: Scope, r: CallsRequest) -> dict[str, Any]:
    return s.callees(
        scope, r.name, depth=r.depth, limit=r.limit, max_tokens=r.max_tokens, include_ids=r.include_ids
    )


def _impact(s: ContextService, scope: Scope, r: ImpactRequest) -> dict[str, Any]:
    return s.impact(
        scope,
        r.files,
        r.diff,
        depth=r.depth,
        limit=r.limit,
        max_tokens=r.max_tokens,
        include_ids=r.include_ids,
        repo=r.repo,
    )


def _remember(s: ContextService, scope: Scope, r: RememberRequest) -> dict[str, Any]:
    return s.remember(scope, r.entities, r.facts)


def _forget(s: ContextService, scope: Scope, r: ForgetRequest) -> dict[str, Any]:
    return s.forget(scope, r.entity_ids, r.fact_ids)


def _reconcile(s: ContextService, scope: Scope, _: EmptyRequest) -> dict[str, Any]:
    report = s.reconcile(scope)
    # the journal replay is store-wide (it repairs every tenant's pending work); its count would let
    # one tenant observe another's write activity, so a transport reports only this scope's figures
    for store_wide in ("journal_replayed", "writes_completed", "writes_abandoned"):
        report.pop(store_wide, None)
    return report


def _status(s: ContextService, scope: Scope, _: EmptyRequest) -> dict[str, Any]:
    report = s.status(scope)
    report.pop("data_dir", None)  # a server's paths are not the caller's business
    # others' activity, the host's memory
    for store_wide in (
        "pending_index_work",
        "mode",
        "writer_pid",
        "exposed",
        "group_commit",
        "index_flush",
        "memory",
    ):
        report.pop(store_wide, None)
    return report


OPERATIONS: Mapping[str, Operation] = {
    op.name: op
    for op in (
        Operation("recall", RecallRequest, _recall,
                  "Ranked memory and code context for a query, as an evidence envelope."),
        Operation("explain", ExplainRequest, _explain,
                  "Everything remembered about one entity: current facts first, then history."),
        Operation("neighbourhood", NeighbourhoodRequest, _neighbourhood,
                  "The entities around one entity, bounded (1-2 hops)."),
        Operation("path", PathRequest, _path, "The shortest path between two entities over facts valid now."),
        Operation("search", SearchRequest, _search,
                  "Code and docs for a query (symbols, modules, sections), as an evidence envelope."),
        Operation("symbol", SymbolRequest, _symbol,
                  "The definition card of one code symbol: where it is, its callers, callees and tests."),
        Operation("callers", CallsRequest, _callers, "Who calls one code symbol, 1-2 hops, with call sites."),
        Operation("callees", CallsRequest, _callees,
                  "What one code symbol calls, 1-2 hops, with call sites."),
        Operation("impact", ImpactRequest, _impact,
                  "What a change touches: affected symbols, their callers and their tests."),
        Operation("remember", RememberRequest, _remember,
                  "Store entities and facts (the graph first, then the indexes).", mutating=True),
        Operation("forget", ForgetRequest, _forget,
                  "Delete entities (with their facts) or invalidate facts (rows kept).", mutating=True),
        Operation("reconcile", EmptyRequest, _reconcile, "Repair the indexes of this scope from the graph.",
                  mutating=True),
        Operation("status", EmptyRequest, _status, "What this scope holds and how the stores are doing."),
    )
}  # fmt: skip


def parse_request(model: type[Request], payload: object) -> Request:
    """Validate a payload into the operation's model; errors name the field and the bound."""
    if not isinstance(payload, Mapping):
        raise InputError(f"the request body must be a JSON object, got {type(payload).__name__}")
    bounds.check_tree(dict(payload), "")
    try:
        return model.model_validate(dict(payload))
    except ValidationError as exc:
        raise from_validation(exc, default_loc="body") from None


def answer(
    service: ContextService, scope: Scope, operation: str, payload: Mapping[str, Any]
) -> dict[str, Any]:
    """Run one operation in a scope already decided (the local operator's: the CLI, and serve
    answering the CLI); None values are options not given."""
    op = OPERATIONS[operation]
    request = parse_request(op.request, {k: v for k, v in payload.items() if v is not None})
    return op.handler(service, scope, request)


def execute(service: ContextService, principal: Principal, operation: str, payload: object) -> dict[str, Any]:
    """Run one operation for an authenticated principal: validate, derive the scope, call."""
    op = OPERATIONS.get(operation)
    if op is None:
        raise NotFound(f"no operation named {operation[:40]!r}")
    request = parse_request(op.request, payload)
    scope = principal.scope(request.tenant_id, request.namespace, request.graph_id, write=op.mutating)
    return op.handler(service, scope, request)


HTTP_STATUS: tuple[tuple[type[GraphctxError], int], ...] = (
    (AuthError, 401),
    (ReadOnly, 409),  # a server started read-only (GRAPHCTX_READ_ONLY) refuses writes
    (DataDirLocked, 503),
    (ScopeError, 403),
    (BoundExceeded, 413),
    (InputError, 422),
    (NotFound, 404),
    (MethodNotAllowed, 405),
    (AmbiguousName, 409),
    (SettingsDiffer, 409),
    (BudgetError, 422),
    (DeadlineExceeded, 504),
    (RequestTimeout, 408),
    (OverCapacity, 503),
    (BackendUnavailable, 503),
    (BackendError, 502),
    (ConfigError, 503),  # the server's configuration, not the request: typed, retry after a fix
)


def http_status(exc: GraphctxError) -> int:
    return next((status for kind, status in HTTP_STATUS if isinstance(exc, kind)), 500)
