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

import functools
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
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Send
from starlette.types import Scope as AsgiScope

from graphctx import __version__, api, bounds
from graphctx.answers import ANSWERS, schema_of
from graphctx.auth import Principal, api_key_from_headers
from graphctx.envelope import canonical, dumps
from graphctx.errors import GraphctxError, MethodNotAllowed, printable
from graphctx.kernel.ports import KeyStore
from graphctx.model import PREDICATES, SINGLE_VALUED
from graphctx.service import DEFAULT_EXPLAIN_TOKENS, ContextService
from graphctx.settings import Settings
from graphctx.transports.admission import Admission, Slots, presented_key, refusal
from graphctx.transports.reads import Offload

log = logging.getLogger("graphctx.mcp")

Authenticate = Callable[[Mapping[str, str] | None], Principal]
"""Who is calling, from the request's HTTP headers (None over stdio and in-process);
raises graphctx.auth.AuthError when the credentials are missing or invalid."""

SERVER_NAME = "graphctx"
MAX_HTTP_BODY_BYTES = 4 * bounds.KIB * bounds.KIB + 64 * bounds.KIB
"""A remember call of 5,000 records fits; the HTTP app in front may bound the body lower."""

INSTRUCTIONS = (
    "graphctx answers with evidence from a code-and-memory graph, scoped to your credentials.\n\n"
    "Pick a tool: memory (people, services, incidents, decisions): `recall` a question or name first, "
    "then `explain` one entity, `neighbourhood` for what surrounds it, `path` for how two connect. "
    "Code and docs: `search` first, then `symbol` for one definition, `callers` / `callees` to walk "
    "calls, `impact` for what a change touches. Writes: `remember`, `forget`, `reconcile`; `status` "
    "shows what this scope holds.\n\n"
    "Answers are evidence envelopes to reason over, never conclusions: cite their items and facts. "
    "`max_tokens` bounds the whole answer (its JSON is at most max_tokens x 4 bytes), normalised into "
    f"{bounds.MIN_TOKENS}-{bounds.MAX_TOKENS}; what does not fit is named in `omissions` and `truncated` "
    "is true: raise max_tokens or ask narrower. `follow_up`, when present, is the next step, often the "
    "exact call to make (`tool {json arguments}`). "
    "If not even the subject fits, the call fails with `budget_too_small`.\n\n"
    "Names (`name`, `source`, `target`): an id, a qualified name, `path::name`, or a name, alias, "
    "package export (`pkg.get`) or dotted tail of a qualified name (`Class.method`) exactly one "
    "entity has. Several matches fail "
    "with `ambiguous_name`; call again with one of "
    "`error.details.candidates[].identity` verbatim. Unknown names fail with `not_found`. Ids are "
    "opaque, shown only with include_ids=true; pass them verbatim, never build them.\n\n"
    "Scope: your credentials fix the tenant. `tenant_id`, `namespace` and `graph_id` are optional and "
    "only narrow within what they allow (code usually lives in a shared graph: pass its `graph_id`); "
    "anything else fails with `scope_denied`. Empty results say nothing about other scopes.\n\n"
    "Output: text content is the answer's canonical JSON; structuredContent is the same object. A "
    'failure is an error result {"error": {"code", "message", "details"}}; `details` names the '
    "field or bound at fault."
)

# -- descriptions: what each tool is for and when to pick it; shared guidance is in INSTRUCTIONS --

_DESTRUCTIVE = frozenset({"forget"})
_DEFAULT_TOKENS = {
    "recall": bounds.DEFAULT_RECALL_TOKENS,
    "search": bounds.DEFAULT_RECALL_TOKENS,
    **dict.fromkeys(("symbol", "callers", "callees", "impact"), bounds.DEFAULT_CODE_TOKENS),
}
_CALL_ENTRY = (
    'Entries: `name` (qualified), `at` ("path:first-last") and `lines`, the call lines (in the '
    "caller's file for callers, the subject's for callees)."
)

_WHAT = {
    "recall": (
        "Use first for any question about what the team knows: owners, services, incidents, decisions, "
        "or a name or identifier. Exact ids and names rank first, then BM25 and dense hits fused. "
        "Returns up to 8 `items` with their facts valid at `as_of`; depth=2 adds `related` neighbours. "
        "Empty `items`: nothing in this scope matched."
    ),
    "explain": (
        "Use when you know the entity and need all of it: `facts` with `status` current (valid at "
        "`as_of`), future, or ended (with `superseded_by`); include_history=false keeps current only."
    ),
    "neighbourhood": (
        "Use to see what surrounds one entity: `nodes` (with `depth`) and `edges` over facts valid now. "
        "`edge_types` restricts predicates, `direction` is out, in or both, `limit` caps nodes (1-200)."
    ),
    "path": (
        "Use to learn how two entities connect: the shortest path, at most `max_depth` hops, over facts "
        "valid now. `found`; when true, `nodes` in order and `edges` (an edge may be crossed against its "
        "stored direction)."
    ),
    "search": (
        "Use first for code questions: finds modules, classes, functions, methods, doc sections and "
        "repositories by qualified name, identifier or words. Returns up to 8 `items` with `at` "
        '("path:first-last") and signature. Pass `graph_id` for a shared code graph.'
    ),
    "symbol": (
        "Use once you know the symbol: its definition card (`subject`: `at`, `def_line` when decorators "
        "come first, `signature`, `summary`) with `callers`, `callees`, `tests` and `counts` per "
        "direction (the total when `limit` cut some). " + _CALL_ENTRY + " A test that calls it is a "
        "caller marked `test: true`; `tests` holds those that reach it otherwise (fixtures, helpers)."
    ),
    "callers": (
        "Use to find who calls a symbol, 1-2 hops (`depth`): entries as in `symbol`, depth-2 ones with "
        "`depth` and `via`. When `limit` cut entries, `counts` and `omissions` say how many more."
    ),
    "callees": (
        "Use to find what a symbol calls, 1-2 hops (`depth`); `at` is where each callee is defined. "
        "Unresolved calls are not in the graph and never guessed."
    ),
    "impact": (
        "Use before or after changing code: give changed `files` and/or a unified `diff` (hunks read on "
        "the old side), `repo` when several indexed repositories hold a path. Returns the `affected` "
        "symbols, their `callers` (1-2 hops), the `tests` to run (each with `run`, its pytest node id), "
        "`unknown` files this graph does not hold, and `counts`."
    ),
    "remember": (
        "Use to store what you learned. All or nothing: one bad record writes nothing and the error "
        "names it (`facts[2]`). Upserts, so repeating is safe. Entity: `id` (your stable id), `name`, "
        "optional `type` (lower_snake), `aliases`, `summary` (<= 4 KiB, secrets redacted), "
        "`qualified_name`, `path`, `line_start`, `line_end`, `signature`, `source`. Fact: `subject_id`, "
        "`predicate`, `object_id` and/or `value`, optional `source`, `confidence` (0-1), `valid_from` / "
        "`valid_to` (ISO 8601). A new current value of {single} ends the previous one (`superseded`). "
        "Predicates: {predicates}. `index_errors` means the graph has the data; `reconcile` finishes."
    ),
    "forget": (
        "Use to remove what is wrong: `entity_ids` are deleted with their facts; `fact_ids` get "
        "valid_to = now and stay as history. Ids not in this scope change nothing."
    ),
    "reconcile": (
        "Use only after `remember` reported `index_errors`: repairs this scope's search indexes from "
        "the graph."
    ),
    "status": "Use to check what this scope holds: counts by type, index sizes, the backends.",
}


def describe(op: api.Operation) -> str:
    """The tool description: what the tool is for, when to pick it, what it returns."""
    what = _WHAT[op.name].format(
        predicates=", ".join(sorted(PREDICATES)), single=", ".join(sorted(SINGLE_VALUED))
    )
    parts = [op.summary, what]
    if "max_tokens" in op.request.model_fields:
        default = _DEFAULT_TOKENS.get(op.name, DEFAULT_EXPLAIN_TOKENS)
        parts.append(f"Default max_tokens {default}.")
    return " ".join(parts)


def tools(*, output_schemas: bool = True) -> list[types.Tool]:
    """One tool per catalogue operation: the input schema is the request model's, the output schema
    the answer model's (graphctx.answers), the models the HTTP API publishes (without titles).
    Without `output_schemas` (GRAPHCTX_MCP_OUTPUT_SCHEMAS=off) the tools carry none: a client that
    hands the whole tools/list to a model then pays about a third of it; answers are unchanged."""
    return [
        types.Tool(
            name=op.name,
            description=describe(op),
            input_schema=schema_of(op.request, absent_not_null=False),
            output_schema=schema_of(ANSWERS[op.name]) if output_schemas else None,
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
    text = canonical(data)
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


def build_mcp(
    service: ContextService,
    authenticate: Authenticate,
    *,
    name: str = SERVER_NAME,
    output_schemas: bool | None = None,
) -> Server[Any]:
    """The MCP server over `service`. `authenticate` turns each call's HTTP headers (None over
    stdio and in-process) into the principal whose scope the call runs in. `output_schemas`
    defaults to the service's setting (mcp_output_schemas)."""
    if output_schemas is None:
        output_schemas = service.settings.mcp_output_schemas
    catalogue = tools(output_schemas=output_schemas)
    schemas = {tool.name: tool.input_schema for tool in catalogue}
    offload = Offload(service)

    async def list_tools(
        ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=catalogue)

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        headers = getattr(ctx.request, "headers", None)  # a starlette Request over HTTP, else None
        call = functools.partial(_call, service, authenticate, headers, params.name, params.arguments)
        try:
            data = await offload.run(params.name, call)
        except GraphctxError as exc:
            if exc.internal:  # the caller sees the public form; the log keeps the whole story
                log.warning(
                    "MCP tool %.40r request %s: %s: %s", params.name, ctx.request_id, exc.code, exc.message
                )
            return error_result(exc)
        except Exception:
            log.exception("MCP tool %.40r request %s failed", params.name, ctx.request_id)
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


async def _one_message(app: ASGIApp, max_body: int, scope: AsgiScope, receive: Receive, send: Send) -> None:
    """A POST must carry one JSON-RPC message, an object: anything else (a batch, a bare value) is
    answered with a JSON-RPC "Invalid Request" naming the rule, never the SDK's validation dump.
    Other methods and well-shaped bodies pass on to the SDK unchanged."""
    if scope.get("method") != "POST":
        await app(scope, receive, send)
        return
    chunks: list[bytes] = []
    size, more = 0, True
    while more:
        message = await receive()
        if message["type"] == "http.disconnect":
            return
        chunk: bytes = message.get("body", b"")
        size += len(chunk)
        if size > max_body:
            await _rpc_error(send, 413, -32600, f"the request body is over the bound of {max_body} bytes")
            return
        chunks.append(chunk)
        more = bool(message.get("more_body", False))
    body = b"".join(chunks)
    try:
        decoded = json.loads(body.decode("utf-8"))
    except (ValueError, RecursionError):
        await _rpc_error(send, 400, -32700, "Parse error: the body is not valid JSON (UTF-8)")
        return
    if not isinstance(decoded, dict):
        kind = "a batch (array)" if isinstance(decoded, list) else "not a JSON object"
        await _rpc_error(
            send, 400, -32600, f"Invalid Request: the body is {kind}; send one JSON-RPC request object"
        )
        return
    where = _not_unicode(decoded)
    if where:  # refused as the other transports refuse it (the SDK's parser only says "hex escape")
        await _rpc_error(
            send, 400, -32600, f"Invalid Request: {where} is not valid Unicode text (lone surrogate)"
        )
        return
    try:
        types.jsonrpc_message_adapter.validate_python(decoded, by_name=False)
    except ValidationError as exc:
        await _rpc_error(send, 400, -32600, f"Invalid Request: {_first_problem(exc)}")
        return
    delivered = False

    async def replay() -> Message:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    await app(scope, replay, send)


def _not_unicode(message: object) -> str | None:
    """Where a decoded message holds a key or string that is not Unicode (a lone surrogate escape)."""
    stack: list[tuple[object, str]] = [(message, "")]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str) and bounds.unicode_problem(item.replace("\x00", "")):
            return where or "the message"
        if isinstance(item, dict):
            for key, child in item.items():
                path = f"{where}.{key}" if where else str(key)
                stack.append((key, f"a key of {where or 'the message'}"))
                stack.append((child, path))
        elif isinstance(item, list):
            stack.extend((child, f"{where}[{i}]") for i, child in enumerate(item))
    return None


def _first_problem(exc: ValidationError) -> str:
    """The one problem to name, without pydantic's dump of every union member it tried."""
    errors = exc.errors(include_url=False, include_input=False)
    missing = sorted({str(e["loc"][-1]) for e in errors if e["type"] == "missing" and e["loc"]})
    if "method" in missing:
        return "a JSON-RPC request needs a method"
    first = errors[0]
    where = ".".join(str(p) for p in first["loc"][1:]) or "the message"
    return f"{where}: {first['msg']}"[:200]


async def _rpc_error(send: Send, status: int, code: int, message: str) -> None:
    error = {"code": code, "message": printable(message)}
    payload = dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})


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
    settings = settings or service.settings
    server = build_mcp(service, authenticate, output_schemas=settings.mcp_output_schemas)
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
        await _one_message(manager.handle_request, max_body_bytes, scope, receive, send)

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
