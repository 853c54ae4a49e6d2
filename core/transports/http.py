"""The HTTP API: one POST route per operation of the catalogue (graphctx.api), a thin layer over
ContextService. The scope of every request comes from the API key's principal (through
`api.execute`), never from another header; errors keep one shape with stable codes."""

from __future__ import annotations

import asyncio
import functools
import hmac
import inspect
import ipaddress
import json
import logging
import os
import re
import threading
import time
import uuid
from collections.abc import Callable
from typing import Annotated, Any

from fastapi import Body, Depends, FastAPI, Request, Security
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.security import APIKeyHeader, HTTPBearer
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers, MutableHeaders
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Lifespan, Message, Receive, Send
from starlette.types import Scope as AsgiScope

from graphctx import __version__, api, deadlines
from graphctx.answers import ANSWERS
from graphctx.auth import AuthError, Principal, new_key
from graphctx.envelope import canonical
from graphctx.errors import GraphctxError, InputError, NotFound, SettingsDiffer
from graphctx.kernel.ports import KeyStore
from graphctx.kernel.templates import SCOPE_STATS, NoParams
from graphctx.scope import Scope, shared_scope
from graphctx.service import ContextService
from graphctx.settings import Settings
from graphctx.transports import local
from graphctx.transports.admission import (
    Admission,
    Slots,
    error_body,
    error_headers,
    presented_key,
    refusal,
)
from graphctx.transports.local import LocalAccess
from graphctx.transports.reads import Offload

log = logging.getLogger("graphctx.http")

API_PREFIX = "/v1"
REQUEST_ID_HEADER = "X-Request-ID"
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,128}$")
READY_TIMEOUT_S = 2.0
PROBE_SCOPE = Scope("graphctx-readyz", "probe")


# -- documented shapes --------------------------------------------------------------------------


class ErrorBody(BaseModel):
    code: str = Field(description="Stable error code, e.g. invalid_input, bound_exceeded, not_found.")
    message: str = Field(description="What went wrong, naming the field or bound.")
    details: dict[str, Any] | None = Field(
        default=None, description="Machine-readable specifics: field, bound/limit/actual, candidates."
    )


class ErrorResponse(BaseModel):
    error: ErrorBody
    request_id: str = Field(description="Also in the X-Request-ID response header.")


ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorResponse, "description": "Missing, invalid or revoked API key."},
    403: {"model": ErrorResponse, "description": "A tenant, namespace or graph the key may not use."},
    404: {"model": ErrorResponse, "description": "No entity of that name in the caller's scope."},
    409: {"model": ErrorResponse, "description": "Ambiguous name: `details.candidates` lists identities."},
    413: {"model": ErrorResponse, "description": "Over a bound (body 5 MiB, query 4 KiB, ...)."},
    408: {"model": ErrorResponse, "description": "The body did not arrive within the server's timeout."},
    422: {"model": ErrorResponse, "description": "Malformed, wrongly typed or unknown input; or budget."},
    503: {
        "model": ErrorResponse,
        "description": "A backend is unavailable, or a cap is reached (over_capacity; see Retry-After).",
    },
    504: {"model": ErrorResponse, "description": "The operation's deadline passed."},
}


class CanonicalJSON(JSONResponse):
    """The canonical serialisation every transport returns (graphctx.envelope.dumps; a finished
    answer's own, made once when it was finished)."""

    def render(self, content: Any) -> bytes:
        return canonical(content).encode("utf-8")


# -- errors -------------------------------------------------------------------------------------


def _request_id(request: Request) -> str | None:
    rid = getattr(request.state, "request_id", None)
    return rid if isinstance(rid, str) else None


def _error_response(request: Request, exc: GraphctxError, status: int) -> CanonicalJSON:
    return CanonicalJSON(error_body(exc, _request_id(request)), status, headers=error_headers(exc))


def _json_type(value: object) -> str:
    names = {dict: "object", list: "array", str: "string", int: "number", float: "number", bool: "boolean"}
    return "null" if value is None else names.get(type(value), type(value).__name__)


def validation_error(exc: RequestValidationError) -> InputError:
    """FastAPI's validation errors as the catalogue's InputError: `<field>: <problem>`, as
    `api.parse_request` words them, so every transport names a problem alike."""
    errors = list(exc.errors())
    if not errors:
        return InputError("the request is not valid")
    first = errors[0]
    loc = tuple(first.get("loc", ()))
    where = loc[1:] if loc[:1] == ("body",) else loc
    kind = first.get("type", "")
    if kind == "json_invalid":
        reason = (first.get("ctx") or {}).get("error", "JSON decode error")
        pos = f" at position {where[0]}" if where else ""
        return InputError(f"the request body is not valid JSON: {reason}{pos}", field="body")
    if not where and loc[:1] == ("body",):
        given = first.get("input")
        if kind == "missing":
            return InputError("the request body is required: a JSON object", field="body")
        if isinstance(given, bytes | bytearray):
            return InputError(
                "the request body must be JSON sent with 'Content-Type: application/json'", field="body"
            )
        return InputError(f"the request body must be a JSON object, got {_json_type(given)}", field="body")
    field = ".".join(str(p) for p in where) or "request"
    return InputError(f"{field}: {first.get('msg', 'invalid')}", field=field)


def _install_error_handlers(app: FastAPI) -> None:
    async def graphctx_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, GraphctxError)
        if exc.internal:  # the caller sees the public form; the log keeps the whole story
            log.warning("request %s: %s: %s", _request_id(request), exc.code, exc.message)
        return _error_response(request, exc, api.http_status(exc))

    async def invalid_request(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        return _error_response(request, validation_error(exc), 422)

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        path = request.url.path[:200]
        code, message = {
            404: ("not_found", f"no endpoint at {path!r}; see /openapi.json"),
            405: ("method_not_allowed", f"{request.method} is not allowed on {path!r}"),
            400: ("invalid_input", str(exc.detail)),
        }.get(exc.status_code, ("http_error", str(exc.detail)))
        body = error_body({"code": code, "message": message}, _request_id(request))
        return CanonicalJSON(body, exc.status_code, headers=dict(exc.headers or {}))

    app.add_exception_handler(GraphctxError, graphctx_error)
    app.add_exception_handler(RequestValidationError, invalid_request)
    app.add_exception_handler(StarletteHTTPException, http_error)


# -- the guard: request ids, authentication, per-key caps, the body bound ------------------------


class _Guard:
    """Pure ASGI middleware, outermost of the app's own: gives every request an id (echoed in the
    X-Request-ID header) and admits every request under /v1/ (graphctx.transports.admission): the
    key is checked from the headers before a byte of the body is read, the key's requests in flight
    are capped, and only then is the body read, bounded while it streams and in time. Other paths
    pass through unread (the MCP endpoint admits its own requests). Unexpected exceptions become a
    500 that names the request id and nothing of the internals."""

    def __init__(
        self, app: ASGIApp, keys: KeyStore, settings: Settings, access: LocalAccess | None = None
    ) -> None:
        self.app = app
        self.keys = keys
        self.verify_in_loop = getattr(keys, "verify_in_loop", False) is True
        self.access = access
        slots = Slots(
            "HTTP API requests in flight",
            "http_max_requests_per_key",
            settings.http_max_requests_per_key,
            settings.http_retry_after_s,
        )
        self.admission = Admission(slots, settings.http_max_body_bytes, settings.http_body_timeout_s)

    async def __call__(self, scope: AsgiScope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        given = headers.get("x-request-id", "")
        request_id = given if _REQUEST_ID.match(given) else uuid.uuid4().hex
        state = scope.setdefault("state", {})
        state["request_id"] = request_id
        started = False

        async def send_with_id(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                MutableHeaders(scope=message)[REQUEST_ID_HEADER] = request_id
            await send(message)

        async def refuse(exc: GraphctxError, *, close: bool = True) -> None:
            if not started:
                await refusal(exc, close=close)(scope, receive, send_with_id)

        try:
            path: str = scope.get("path", "")
            if self.access is not None and path.startswith(local.PREFIX + "/"):
                presented = headers.get(local.SECRET_HEADER, "").encode("utf-8", "replace")
                # the secret stands for access to the data directory: it is only ever taken from this
                # machine, even when serve listens on every interface for API-key clients
                if not _loopback(scope.get("client")):
                    await refuse(AuthError("the local route answers only this machine's loopback"))
                    return
                if not hmac.compare_digest(presented, self.access.secret.encode("ascii")):
                    await refuse(AuthError("missing or invalid local secret"))
                    return
                await self.admission.run(self.app, LOCAL_CALLER, scope, receive, send_with_id)
                return
            if not (path == API_PREFIX or path.startswith(API_PREFIX + "/")):
                await self.app(scope, receive, send_with_id)
                return
            try:
                if self.verify_in_loop:  # the store never waits (KeyStore): no thread hand-off
                    principal = self.keys.verify(presented_key(headers))
                else:
                    principal = await run_in_threadpool(self.keys.verify, presented_key(headers))
            except AuthError as exc:
                await refuse(exc)
                return
            state["principal"] = principal
            await self.admission.run(self.app, principal, scope, receive, send_with_id)
        except GraphctxError as exc:  # raised outside the routes (the key store, for example)
            log.warning("request %s: %s: %s", request_id, exc.code, exc.message)
            await refuse(exc, close=False)
        except Exception:
            log.exception("request %s failed", request_id)
            await refuse(_Internal(f"internal error; quote request id {request_id}"), close=False)


def _loopback(client: Any) -> bool:
    """True when the ASGI client address is a loopback one (127.0.0.0/8, ::1)."""
    try:
        return bool(client) and ipaddress.ip_address(str(client[0])).is_loopback
    except ValueError:
        return False


class _Internal(GraphctxError):
    code = "internal_error"


LOCAL_CALLER = "local operator"
"""The name the local CLI's reads are counted under (GRAPHCTX_HTTP_MAX_REQUESTS_PER_KEY)."""
_LOCAL_BODY = {"fingerprint", "scope", "graph", "request"}


def local_answer(service: ContextService, access: LocalAccess, operation: str, raw: bytes) -> dict[str, Any]:
    """A CLI read run as the CLI would run it (graphctx.transports.local): the scope its settings give
    (under its flags, and an environment and config files the fingerprint shows equal to this
    process's), the same request model and handler."""
    if operation not in local.READS:
        raise NotFound(f"no local read named {operation[:40]!r}")
    try:
        body = json.loads(raw)
    except ValueError:
        raise InputError("the request body is not valid JSON", field="body") from None
    if not isinstance(body, dict) or not set(body) <= _LOCAL_BODY:
        raise InputError(f"the body must be a JSON object of {sorted(_LOCAL_BODY)}", field="body")
    if body.get("fingerprint") != access.fingerprint:
        raise SettingsDiffer("this serve runs under other GRAPHCTX_* variables or config files")
    given, graph, request = body.get("scope") or {}, body.get("graph"), body.get("request")
    if not (isinstance(given, dict) and set(given) <= set(local.SCOPE_FIELDS)) or not all(
        isinstance(v, str) for v in given.values()
    ):
        raise InputError(f"scope: an object of strings among {list(local.SCOPE_FIELDS)}", field="scope")
    if graph is not None and not isinstance(graph, str):
        raise InputError("graph must be a string", field="graph")
    if not isinstance(request, dict):
        raise InputError("request must be a JSON object", field="request")
    selectors = sorted(set(request) & set(api.Request.model_fields))
    if selectors:  # the scope is the one the caller's settings give, never a request's own pick
        raise InputError(
            f"request: {selectors[0]} is not taken here; send scope or graph", field=selectors[0]
        )
    unsent = local.scope_unsent(given, os.environ)
    if unsent:
        raise SettingsDiffer(f"this serve's environment sets {unsent[0]}, the caller's does not")
    settings = Settings(**given, data_dir=service.settings.data_dir)
    scope = Scope(settings.tenant_id, settings.namespace)
    return api.answer(service, shared_scope(graph) if graph else scope, operation, request)


def _local_endpoint(service: ContextService, access: LocalAccess, offload: Offload) -> Callable[..., Any]:
    async def run(request: Request, operation: str) -> Response:
        raw = await request.body()  # read whole, within its bound, by the guard
        call = functools.partial(local_answer, service, access, operation, raw)
        try:
            env = await offload.run(operation, call)
        except GraphctxError as exc:  # the local operator sees the whole story, as in the CLI
            return CanonicalJSON({"error": exc.to_dict(full=True)}, api.http_status(exc))
        return CanonicalJSON(env)

    return run


# -- routes -------------------------------------------------------------------------------------

_BEARER = HTTPBearer(auto_error=False, description="Authorization: Bearer <API key>")
_API_KEY = APIKeyHeader(name="X-API-Key", auto_error=False, description="The API key.")


async def _principal(
    request: Request,
    _bearer: Annotated[object, Security(_BEARER)] = None,
    _key: Annotated[object, Security(_API_KEY)] = None,
) -> Principal:
    """The principal the guard authenticated (the security parameters document the two schemes)."""
    principal = getattr(request.state, "principal", None)
    if not isinstance(principal, Principal):
        raise AuthError("missing or invalid API key")
    return principal


def _requires_body(model: type[BaseModel]) -> bool:
    return any(field.is_required() for field in model.model_fields.values())


def _endpoint(service: ContextService, op: api.Operation, offload: Offload) -> Callable[..., Any]:
    """The operation, run off the event loop by `offload`, behind a signature that carries its
    request model, so FastAPI validates and documents it."""

    def answer(body: BaseModel | None, principal: Principal) -> Response:
        payload = {} if body is None else body.model_dump(exclude_unset=True)
        return CanonicalJSON(api.execute(service, principal, op.name, payload))

    async def run(body: BaseModel | None, principal: Principal) -> Response:
        return await offload.run(op.name, functools.partial(answer, body, principal))

    required = _requires_body(op.request)
    body_param = inspect.Parameter(
        "body",
        inspect.Parameter.KEYWORD_ONLY,
        annotation=Annotated[op.request if required else op.request | None, Body()],
        default=inspect.Parameter.empty if required else None,
    )
    principal_param = inspect.Parameter(
        "principal", inspect.Parameter.KEYWORD_ONLY, annotation=Principal, default=Depends(_principal)
    )
    run.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [body_param, principal_param], return_annotation=Response
    )
    run.__name__ = op.name
    return run


def _check(name: str, probe: Callable[[], object], results: dict[str, dict[str, Any]]) -> None:
    started = time.perf_counter()
    try:
        probe()
    except AuthError:
        pass  # the key store answered: an unknown key is refused, as it should be
    except Exception as exc:
        log.warning("readiness check %s failed: %s", name, exc)
        code = exc.code if isinstance(exc, GraphctxError) else type(exc).__name__
        results[name] = {"status": "error", "error": code}
        return
    results[name] = {"status": "ok", "ms": round((time.perf_counter() - started) * 1000, 2)}


def _probes(service: ContextService, keys: KeyStore) -> dict[str, Callable[[], object]]:
    """One probe per backend, on a scope no tenant's data lives in."""
    stores = service.stores
    probes: dict[str, Callable[[], object]] = {
        "graph": lambda: stores.graph.run(SCOPE_STATS, PROBE_SCOPE, NoParams()),
        "lexical": lambda: stores.lexical.search(PROBE_SCOPE, "readiness probe", 1),
        "keys": lambda: keys.verify(new_key().token),
    }
    vector, embedder = stores.vector, stores.embedder
    if vector is not None and embedder is not None:
        probes["vector"] = lambda: vector.search(
            PROBE_SCOPE, [float(x) for x in embedder.embed(["readiness probe"])[0]], 1
        )
    return probes


async def _readiness(service: ContextService, keys: KeyStore) -> tuple[bool, dict[str, dict[str, Any]]]:
    """Each probe in its own thread under a READY_TIMEOUT_S deadline (a silent backend's call ends
    there too, so polling never piles up hung threads); awaited without a worker thread of the
    server's pool, so /readyz answers within its bound even when every worker is busy."""
    probes = _probes(service, keys)
    results: dict[str, dict[str, Any]] = {}

    def bounded(name: str, probe: Callable[[], object]) -> None:
        with deadlines.within(READY_TIMEOUT_S):
            _check(name, probe, results)

    threads = {
        name: threading.Thread(target=bounded, args=(name, probe), name=f"graphctx-ready-{name}", daemon=True)
        for name, probe in probes.items()
    }
    ends = time.monotonic() + READY_TIMEOUT_S
    for thread in threads.values():
        thread.start()
    while any(t.is_alive() for t in threads.values()) and time.monotonic() < ends:
        await asyncio.sleep(0.01)
    for name, thread in threads.items():
        if thread.is_alive():
            results[name] = {"status": "timeout", "timeout_s": READY_TIMEOUT_S}
    ordered = {name: results[name] for name in probes}
    return all(r["status"] == "ok" for r in ordered.values()), ordered


def create_app(
    service: ContextService,
    keys: KeyStore,
    settings: Settings | None = None,
    *,
    lifespan: Lifespan[FastAPI] | None = None,
    local_access: LocalAccess | None = None,
) -> FastAPI:
    """The HTTP API over one ContextService. `keys` authenticates; `settings` bounds the body.
    `lifespan` runs around serving (a mounted sub-app's own lifespan is not run by Starlette, so an
    app mounted later, such as MCP's streamable HTTP, starts its session manager through it).
    `local_access`: also answer the local CLI's reads (graphctx.transports.local) to its secret."""
    settings = settings or service.settings
    app = FastAPI(
        lifespan=lifespan,
        title="graphctx",
        version=__version__,
        summary="Ranked, sourced, tenant-isolated context for AI agents.",
        description=(
            "Every operation is `POST /v1/<name>` with a JSON body and an API key "
            "(`Authorization: Bearer <key>` or `X-API-Key`). The key decides the tenant; `tenant_id`, "
            "`namespace` and `graph_id` in a body can only pick within what the key allows. Answers "
            "are evidence envelopes to reason over, not conclusions. Errors are "
            '`{"error": {"code", "message", "details"}, "request_id"}`.'
        ),
        default_response_class=CanonicalJSON,
    )
    _install_error_handlers(app)
    app.add_middleware(_Guard, keys=keys, settings=settings, access=local_access)
    offload = Offload(service)
    if local_access is not None:
        app.add_api_route(
            f"{local.PREFIX}/{{operation}}",
            _local_endpoint(service, local_access, offload),
            methods=["POST"],
            include_in_schema=False,
        )

    for op in api.OPERATIONS.values():
        app.add_api_route(
            f"{API_PREFIX}/{op.name}",
            _endpoint(service, op, offload),
            methods=["POST"],
            name=op.name,
            operation_id=op.name,
            summary=op.summary,
            description=f"{op.summary}\n\n{inspect.getdoc(op.request) or ''}".strip(),
            tags=["writes" if op.mutating else "reads"],
            response_model=None,
            responses={200: {"model": ANSWERS[op.name]}, **ERRORS},
        )

    @app.get(
        "/healthz",
        tags=["health"],
        summary="The process is up and not wedged (no backend checks, no key): 503 while an operation "
        "has run for over twice its deadline.",
        response_model=None,
    )
    async def healthz() -> Response:
        stuck = service.stuck_operations()
        if not stuck:
            return CanonicalJSON({"status": "ok"}, 200)
        oldest = max(op["running_s"] for op in stuck)
        return CanonicalJSON({"status": "wedged", "stuck_operations": len(stuck), "oldest_s": oldest}, 503)

    @app.get(
        "/readyz",
        tags=["health"],
        summary="Each backend answers a probe: 200 when all do, 503 otherwise.",
        response_model=None,
    )
    async def readyz() -> Response:
        ready, backends = await _readiness(service, keys)
        body = {"status": "ready" if ready else "unavailable", "backends": backends}
        return CanonicalJSON(body, 200 if ready else 503)

    return app
