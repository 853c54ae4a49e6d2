"""The MCP server: one tool per operation of the catalogue (graphctx.api.OPERATIONS), a thin layer
over ContextService, served over stdio and streamable HTTP.

Every tool is generated from the catalogue, so tools, HTTP routes and the Python API cannot drift:
the input schema is the operation's request model schema, validation is `api.parse_request`, the
scope comes from the authenticated principal (`api.execute`). A result's text content is the
canonical JSON of the answer (graphctx.envelope.dumps) and its structured content is the same object,
so an answer's text never exceeds `max_tokens` x 4 bytes. Errors are `is_error` results carrying
`{"error": {"code", "message", "details"}}`, the shape of the HTTP API's errors.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Send
from starlette.types import Scope as AsgiScope

from graphctx import __version__, api, bounds
from graphctx.auth import Principal, api_key_from_headers
from graphctx.envelope import dumps
from graphctx.errors import GraphctxError, MethodNotAllowed
from graphctx.kernel.ports import KeyStore
from graphctx.model import PREDICATES
from graphctx.service import DEFAULT_EXPLAIN_TOKENS, ContextService
from graphctx.settings import Settings
from graphctx.transports.admission import Admission, Slots, presented_key, refusal

log = logging.getLogger("graphctx.mcp")

Authenticate = Callable[[Mapping[str, str] | None], Principal]
"""Who is calling, from the request's HTTP headers (None over stdio and in-process);
raises graphctx.auth.AuthError when the credentials are missing or invalid."""

SERVER_NAME = "graphctx"
MAX_HTTP_BODY_BYTES = 4 * bounds.KIB * bounds.KIB + 64 * bounds.KIB
"""A remember call of 5,000 records fits; the HTTP app in front may bound the body lower."""

INSTRUCTIONS = (
    "graphctx answers with evidence from a code-and-memory graph scoped to your credentials. "
    "Start with `recall` (a question, a name or an identifier); use `explain` for everything known "
    "about one entity, `neighbourhood` for what surrounds it and `path` for how two entities connect. "
    "Answers are evidence envelopes to reason over, never conclusions: cite items and facts, mind "
    "`omissions` and `truncated`, and follow `follow_up` when evidence is thin. For code: `search` finds "
    "symbols and docs, `symbol` gives one definition card, `callers` / `callees` walk calls, `impact` "
    "maps changed files or a diff to affected symbols, callers and tests. `remember` stores "
    "entities and facts, `forget` deletes or invalidates them, `status` shows what this scope holds."
)

# -- descriptions --------------------------------------------------------------------------------

_CODE_TOKENS = dict.fromkeys(("symbol", "callers", "callees", "impact"), bounds.DEFAULT_CODE_TOKENS)
_DEFAULT_TOKENS = {
    "recall": bounds.DEFAULT_RECALL_TOKENS,
    "search": bounds.DEFAULT_RECALL_TOKENS,
    **_CODE_TOKENS,
}
_DESTRUCTIVE = frozenset({"forget"})
_MUST_FIT = {
    "recall": "the envelope",
    "search": "the envelope",
    "impact": "the envelope",
    "path": "the envelope with the whole path (a path is never cut)",
}
_CALL_ENTRY = (
    'Each entry: `name` (the qualified name), `at` ("path:first-last" of its definition, or a '
    "file's path) and `lines`, the call lines: in the caller's file for callers, in the subject's file "
    "for callees"
)

_WHAT = {
    "recall": (
        "Searches this scope's memory and code graph for `query` (words, names or identifiers). Exact "
        "matches on ids, qualified names, names and aliases rank first, then BM25 and dense hits fused "
        "by reciprocal rank. Returns an evidence envelope: up to 8 `items` (rank, name, type, aliases, "
        "summary, location, `match` with per-leg ranks and the fused score, and the facts valid at "
        "`as_of`, default now); "
        "with depth=2 also `related` neighbours; `legs` (which retrieval legs ran, and a dense fallback "
        "if any), `coverage`, `omissions`, `truncated`, and `follow_up` when evidence is thin. An empty "
        "`items` means nothing in this scope matched; it says nothing about other scopes."
    ),
    "explain": (
        "Everything remembered about one entity. Returns an evidence envelope with `subject` (the "
        "resolved entity) and `facts` about it, each with `status`: facts valid at `as_of` (default now) "
        "first (`current`), then `future` ones, then history (`ended`, with `valid_to` and, when a newer "
        "value replaced it, `superseded_by`) unless include_history=false."
    ),
    "neighbourhood": (
        "The entities around one entity, 1-2 hops, over facts valid now. Returns an evidence envelope "
        "with `subject`, `nodes` (each with its `depth`) and `edges` (subject, predicate, object). "
        "`edge_types` restricts the predicates followed (empty = all), `direction` follows edges out of, "
        "into or both ways from the subject, `limit` caps the nodes (1-200)."
    ),
    "path": (
        "The shortest path between two entities over facts valid now, at most `max_depth` hops. Returns "
        "an evidence envelope with `found`; when true, `nodes` in path order and `edges` between them "
        "(edges keep their stored direction, so a path may cross one against it); when false, a "
        "`follow_up` suggestion. `edge_types` restricts the predicates followed (empty = all)."
    ),
    "search": (
        "Searches this scope's code and docs (modules, classes, functions, methods, documents, sections, "
        "repositories) "
        "for `query`: exact qualified names and identifiers rank first, then BM25 and dense hits fused by "
        "reciprocal rank. Returns an evidence envelope: up to 8 `items` (rank, name, qualified_name, type, "
        "location with path and lines, signature, summary, `match` with per-leg ranks), `legs`, `coverage` "
        "(with `not_code`: memory hits left out) and `follow_up` when nothing matched."
    ),
    "symbol": (
        "The definition card of one symbol. Returns an evidence envelope with `subject` (`name`, `type`, "
        "`at`, `def_line` when decorators come first, `signature` with its decorators, `summary`: the "
        "docstring's first sentence), `callers`, `callees` and `tests`, and `counts` per direction (the "
        "total when `limit` cut entries, named in `omissions`). " + _CALL_ENTRY + ". A test that calls "
        "the symbol is among the callers, marked `test: true`, and listed once; `tests` holds the tests "
        "that reach it otherwise (through fixtures, helpers or set-up)."
    ),
    "callers": (
        "Who calls one symbol, 1-2 hops (`depth`). Returns an evidence envelope with `subject`, `callers` "
        "and `counts`. " + _CALL_ENTRY + "; tests are marked `test: true`; depth-2 entries add `depth` "
        "and `via` (the depth-1 caller they call). When `limit` cut entries, `counts` is the total at "
        "depth 1; at depth 2 the cut is named in `omissions` with `at_least` (a lower bound in edges)."
    ),
    "callees": (
        "What one symbol calls, 1-2 hops (`depth`). Returns an evidence envelope with `subject`, `callees` "
        "and `counts`. " + _CALL_ENTRY + "; `at` is where the callee is defined; depth-2 entries add "
        "`depth` and `via`. Unresolved calls are not in the graph and never guessed."
    ),
    "impact": (
        "What a change touches. Give `files` (repository-relative; every symbol in them counts as changed) "
        "and/or a unified `diff` (its hunks are read on the old side, which the indexed graph holds, and "
        "mapped onto the innermost symbols whose line ranges, decorators included, they touch; "
        "module-level lines affect the module). A path several indexed repositories hold counts in each "
        "unless `repo` names one. Returns an evidence envelope with `changed` counts, `unknown` (files "
        "this graph does not hold), `affected` symbols, their `callers` (1-2 hops, with `via` and "
        "`lines`), the `tests` to run (each with `run`, its pytest node id: the tests that exercise the "
        "change or its direct callers, and changed tests themselves) and `counts`."
    ),
    "remember": (
        "Stores entities and facts in this scope, all or nothing: every record is validated (fields, "
        "bounds, endpoints in this call or already stored) before anything is written; one bad record "
        "writes nothing and the error names it (`facts[2]`, the field, the bound). Writes are upserts, "
        "so repeating a call is safe. "
        "An entity: `id` (your stable id), `name`, optional `type` (lower_snake, default thing), "
        "`aliases` (list), `summary` (<= 4 KiB; secrets are redacted before storage), `qualified_name`, "
        "`path`, `line_start`, `line_end`, `signature`, `source`. "
        "A fact: `subject_id`, `predicate`, `object_id` (an entity id) and/or `value` (text), optional "
        "`source`, `confidence` (0-1), `valid_from` / `valid_to` (ISO 8601; two periods of one relation "
        "are two facts). A new current value of owned_by, owns, on_call_for, leads, reports_to, "
        "located_in or has_status ends the previous one (listed in `superseded`). "
        "Predicates allowed: {predicates}. "
        "Records must not name another tenant or namespace. Returns counts created / updated / unchanged "
        "per kind; `index_errors` with a `follow_up` means the graph has the data and `reconcile` will "
        "finish indexing."
    ),
    "forget": (
        "Deletes entities (`entity_ids`, together with their facts) and invalidates facts (`fact_ids`: "
        "they get valid_to = now and stay as history). Ids are the ones given to `remember` or shown "
        "with include_ids=true; ids not in this scope change nothing. Returns counts: entities_deleted, "
        "facts_removed, facts_invalidated."
    ),
    "reconcile": (
        "Repairs this scope's search indexes from the graph, which is authoritative: replays pending "
        "index work, then re-indexes missing or stale entries and drops orphans. Needed only after "
        "`remember` reported index_errors. Returns repair counts."
    ),
    "status": (
        "What this scope holds: `graph` counts (entities, facts, valid_facts, by_type), `lexical_docs`, "
        "`vectors`, the backends and the template catalogue version."
    ),
}

_BUDGET = (
    "Budget: `max_tokens` bounds the whole answer: its JSON text is at most max_tokens x 4 bytes, "
    "envelope, provenance and counts included. It is normalised into {low}-{high} (default {default}).{cap} "
    "What does not fit is left out and named in `omissions`, and `truncated` is true; raise max_tokens or "
    "ask a narrower question to see it. If not even {core} fits, the call fails with "
    "`budget_too_small`, naming the tokens needed."
)
_NAMES = (
    "Names: {fields} {verb} an id, a qualified name, `path::name`, or a plain name or alias when exactly "
    "one entity has it. When several match, the call fails with `ambiguous_name` and "
    "`error.details.candidates` lists them (name, type, path, summary); call again with one "
    "candidate's `identity` verbatim. A name nothing in this scope has fails with `not_found`."
)
_IDS = "Ids are opaque: answers carry them only with include_ids=true; use them verbatim, never build them."
_SCOPE = (
    "Scope: your credentials fix the tenant. `tenant_id`, `namespace` and `graph_id` are optional and "
    "only narrow within what they allow (one of the key's namespaces or shared graphs); anything else "
    "fails with `scope_denied`. Omit them unless you need another namespace of yours."
)
_OUTPUT = (
    "Output: the text content is the answer's canonical JSON and structuredContent is the same object; "
    "read either, they are identical. A failure is an error result with "
    '{"error": {"code", "message", "details"}}; `details` names the field or bound at fault.'
)


def describe(op: api.Operation) -> str:
    """The tool description: what the operation returns and how to call it well."""
    fields = op.request.model_fields
    parts = [op.summary, _WHAT.get(op.name, "").format(predicates=", ".join(sorted(PREDICATES)))]
    if "max_tokens" in fields:
        recall = op.name == "recall"
        parts.append(
            _BUDGET.format(
                low=bounds.MIN_TOKENS,
                high=bounds.MAX_TOKENS,
                default=_DEFAULT_TOKENS.get(op.name, DEFAULT_EXPLAIN_TOKENS),
                cap=f" Recall answers are also capped at {bounds.RECALL_JSON_BYTES // bounds.KIB} KiB."
                if recall
                else "",
                core=_MUST_FIT.get(op.name, "the envelope with its subject"),
            )
        )
    selectors = [f"`{n}`" for n in ("name", "source", "target") if n in fields]
    if selectors:
        parts.append(
            _NAMES.format(fields=" and ".join(selectors), verb="take" if len(selectors) > 1 else "takes")
        )
    if "include_ids" in fields:
        parts.append(_IDS)
    parts += [_SCOPE, _OUTPUT]
    return "\n\n".join(p for p in parts if p)


def tools() -> list[types.Tool]:
    """One tool per catalogue operation; the input schema is the request model's, verbatim."""
    return [
        types.Tool(
            name=op.name,
            description=describe(op),
            input_schema=op.request.model_json_schema(),
            output_schema={"type": "object"},
            annotations=types.ToolAnnotations(
                read_only_hint=not op.mutating,
                destructive_hint=op.name in _DESTRUCTIVE,
                idempotent_hint=True,
                open_world_hint=False,
            ),
        )
        for op in api.OPERATIONS.values()
    ]


# -- results -------------------------------------------------------------------------------------


def _result(data: Mapping[str, Any], *, error: bool = False) -> types.CallToolResult:
    text = dumps(data)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=text)],
        # parsed back from the text, so the structured content is exactly what the text says
        structured_content=json.loads(text),
        is_error=error,
    )


def error_result(exc: GraphctxError) -> types.CallToolResult:
    return _result({"error": exc.to_dict()}, error=True)


_INTERNAL = {
    "code": "internal_error",
    "message": "the server failed on this request; its log has the details",
}


def _call(
    service: ContextService,
    authenticate: Authenticate,
    headers: Mapping[str, str] | None,
    name: str,
    arguments: object,
) -> dict[str, Any]:
    principal = authenticate(headers)
    return api.execute(service, principal, name, {} if arguments is None else arguments)


def build_mcp(service: ContextService, authenticate: Authenticate, *, name: str = SERVER_NAME) -> Server[Any]:
    """The MCP server over `service`. `authenticate` turns each call's HTTP headers (None over
    stdio and in-process) into the principal whose scope the call runs in."""
    catalogue = tools()
    schemas = {tool.name: tool.input_schema for tool in catalogue}

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=catalogue)

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        headers = getattr(ctx.request, "headers", None)  # a starlette Request over HTTP, else None
        try:
            data = await anyio.to_thread.run_sync(
                _call, service, authenticate, headers, params.name, params.arguments
            )
        except GraphctxError as exc:
            return error_result(exc)
        except Exception:
            log.exception("MCP tool %.40r failed", params.name)
            return _result({"error": _INTERNAL}, error=True)
        return _result(data)

    return Server(
        name,
        version=__version__,
        title="graphctx",
        instructions=INSTRUCTIONS,
        get_tool_input_schema=schemas.get,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


# -- authentication ------------------------------------------------------------------------------


def key_authenticator(keys: KeyStore) -> Authenticate:
    """Authenticate each call by its API key (checked again per call, so a revoked key stops)."""

    def authenticate(headers: Mapping[str, str] | None) -> Principal:
        return keys.verify(api_key_from_headers(headers))

    return authenticate


def fixed_authenticator(principal: Principal) -> Authenticate:
    """Every call runs as `principal` (stdio: the process's own user is the caller)."""

    def authenticate(headers: Mapping[str, str] | None) -> Principal:
        return principal

    return authenticate


# -- streamable HTTP -----------------------------------------------------------------------------


class _KeyGate:
    """ASGI middleware in front of the MCP endpoint that admits each request
    (graphctx.transports.admission): the API key is checked from the headers before a byte of the
    body is read (401, in the HTTP API's error shape, before the MCP layer sees anything); GET is
    answered 405, as the spec allows, since a stateless endpoint has nothing to push and so holds no
    event stream open; MCP requests in flight are capped per key and in total (503 with
    Retry-After); only then is the body read, bounded while it streams and in time."""

    def __init__(self, app: ASGIApp, authenticate: Authenticate, admission: Admission) -> None:
        self.app = app
        self.authenticate = authenticate
        self.admission = admission

    async def __call__(self, scope: AsgiScope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        try:
            presented_key(headers)  # no key or garbage never waits for a thread
            principal = await anyio.to_thread.run_sync(self.authenticate, headers)
        except GraphctxError as exc:
            await refusal(exc)(scope, receive, send)
            return
        if scope.get("method") == "GET":
            refused = MethodNotAllowed(
                "this MCP endpoint is stateless and answers every POST with JSON; it opens no event "
                "stream (GET)",
                allow=["POST"],
            )
            await refusal(refused, headers={"Allow": "POST"})(scope, receive, send)
            return
        await self.admission.run(self.app, principal, scope, receive, send)


@dataclass(frozen=True)
class McpHttp:
    """The streamable-HTTP MCP endpoint: `endpoint` is the ASGI app to route (API-key gated);
    `lifespan()` must run around the parent app's life (once: the SDK's session manager cannot
    restart)."""

    server: Server[Any]
    session_manager: StreamableHTTPSessionManager
    endpoint: ASGIApp

    def lifespan(self) -> AbstractAsyncContextManager[None]:
        return self.session_manager.run()


def mcp_http_app(
    service: ContextService,
    keys: KeyStore,
    *,
    allowed_hosts: Sequence[str] | None = None,
    allowed_origins: Sequence[str] = (),
    max_body_bytes: int = MAX_HTTP_BODY_BYTES,
    settings: Settings | None = None,
) -> McpHttp:
    """Stateless streamable HTTP with JSON responses, authenticated by API key. The caps on MCP
    streams and the body timeout come from `settings` (default: the service's).

    DNS-rebinding protection (the Host / Origin check) is off unless `allowed_hosts` is given
    (e.g. ["127.0.0.1:*", "localhost:*"]): every request must carry an API key, which a page a
    browser was tricked into loading cannot send."""
    authenticate = key_authenticator(keys)
    server = build_mcp(service, authenticate)
    security = (
        TransportSecuritySettings(enable_dns_rebinding_protection=False)
        if allowed_hosts is None
        else TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=list(allowed_hosts),
            allowed_origins=list(allowed_origins),
        )
    )
    manager = StreamableHTTPSessionManager(
        app=server,
        json_response=True,
        stateless=True,
        security_settings=security,
        max_request_body_size=max_body_bytes,
    )

    async def endpoint(scope: AsgiScope, receive: Receive, send: Send) -> None:
        await manager.handle_request(scope, receive, send)

    settings = settings or service.settings
    slots = Slots(
        "MCP streams",
        "mcp_max_streams_per_key",
        settings.mcp_max_streams_per_key,
        settings.http_retry_after_s,
        total=settings.mcp_max_streams,
        total_setting="mcp_max_streams",
    )
    gate = _KeyGate(endpoint, authenticate, Admission(slots, max_body_bytes, settings.http_body_timeout_s))
    return McpHttp(server, manager, gate)


def mount_mcp(
    app: Starlette,
    service: ContextService,
    keys: KeyStore,
    path: str = "/mcp",
    **options: Any,
) -> McpHttp:
    """Serve MCP at `path` of `app` (FastAPI or Starlette) and run its session manager inside the
    app's lifespan, around whatever lifespan the app already has. `options` go to mcp_http_app."""
    mcp_http = mcp_http_app(service, keys, **options)
    app.router.routes.append(Route(path, endpoint=mcp_http.endpoint))
    inner = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(parent: Any) -> AsyncIterator[Any]:
        async with mcp_http.lifespan(), inner(parent) as state:
            yield state

    app.router.lifespan_context = lifespan
    return mcp_http


# -- stdio ---------------------------------------------------------------------------------------


async def serve_stdio(service: ContextService, caller: Principal | Authenticate) -> None:
    """Serve MCP over this process's stdin/stdout until the client closes stdin."""
    authenticate = fixed_authenticator(caller) if isinstance(caller, Principal) else caller
    server = build_mcp(service, authenticate)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def run_stdio(service: ContextService, caller: Principal | Authenticate) -> None:
    """Blocking form of serve_stdio."""
    anyio.run(serve_stdio, service, caller)
