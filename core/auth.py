"""Principals and API keys. The scope of every request is derived from the authenticated principal;
a request may only narrow it (pick one of its namespaces or graphs), never widen it."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass

from graphctx.errors import GraphctxError, ScopeError
from graphctx.scope import SHARED_TENANT, Scope, shared_scope

KEY_PREFIX = "gctx"
_TOKEN = re.compile(r"^gctx_([a-z0-9]{12})_([A-Za-z0-9_-]{43})$")


class AuthError(GraphctxError):
    """Missing, malformed, unknown or revoked credentials. The message never says which."""

    code = "unauthenticated"
    exit_status = 77


@dataclass(frozen=True)
class Principal:
    """Who is calling: one tenant, the namespaces it may read and write, and the shared code graphs
    it may read (stored once under the reserved SHARED_TENANT, never copied into the tenant)."""

    name: str
    tenant_id: str
    namespaces: tuple[str, ...] = ("default",)
    graph_ids: tuple[str, ...] = ()
    key_id: str = ""

    def __post_init__(self) -> None:
        if not self.namespaces:
            raise ScopeError("a principal needs at least one namespace")
        if self.tenant_id == SHARED_TENANT:
            raise ScopeError(f"tenant id {SHARED_TENANT!r} is reserved for shared code graphs")
        for ns in self.namespaces:
            Scope(self.tenant_id, ns)  # validates the selectors
        for graph_id in self.graph_ids:
            shared_scope(graph_id)

    def scope(
        self,
        tenant_id: str | None = None,
        namespace: str | None = None,
        graph_id: str | None = None,
        *,
        write: bool = False,
    ) -> Scope:
        """The request's scope. Values from a request body may only select within what the principal
        has; anything else is refused with the same message whether or not it exists. A graph id
        selects the shared copy of that code graph, which credentials may read but never write."""
        if tenant_id not in (None, "", self.tenant_id):
            raise ScopeError("that tenant is not accessible with these credentials")
        ns = namespace or self.namespaces[0]
        if ns not in self.namespaces:
            raise ScopeError("that namespace is not accessible with these credentials")
        gid = graph_id or ""
        if not gid:
            return Scope(self.tenant_id, ns)
        if gid not in self.graph_ids:
            raise ScopeError("that graph is not accessible with these credentials")
        if write:
            raise ScopeError("shared code graphs are read-only with these credentials")
        return shared_scope(gid)


@dataclass(frozen=True)
class IssuedKey:
    key_id: str
    token: str
    """The only time the secret is visible: it is stored hashed."""


def new_key() -> IssuedKey:
    key_id = secrets.token_hex(6)
    return IssuedKey(key_id, f"{KEY_PREFIX}_{key_id}_{secrets.token_urlsafe(32)}")


def parse_token(token: str) -> tuple[str, str]:
    """(key id, secret) of a well-formed token; AuthError otherwise."""
    match = _TOKEN.match(token.strip()) if isinstance(token, str) else None
    if match is None:
        raise AuthError("missing or invalid API key")
    return match.group(1), match.group(2)


def hash_secret(secret: str) -> str:
    """Keys are 256 random bits, so a fast hash is enough (no password stretching needed)."""
    return hashlib.sha256(secret.encode("ascii")).hexdigest()


def secret_matches(secret: str, stored_hash: str) -> bool:
    return hmac.compare_digest(hash_secret(secret), stored_hash)


def api_key_from_headers(headers: Mapping[str, str] | None) -> str:
    """The one API key of a request: `Authorization: Bearer <key>` or `X-API-Key: <key>`.
    Headers with a `getlist` (Starlette's) may repeat a name; AuthError unless exactly one key."""
    if headers is None:
        raise AuthError("missing API key: send 'Authorization: Bearer <key>' or 'X-API-Key: <key>'")
    getlist = getattr(headers, "getlist", None)

    def values(name: str) -> list[str]:
        if callable(getlist):
            return [str(v) for v in getlist(name)]
        value = headers.get(name)
        return [] if value is None else [value]

    tokens: set[str] = set()
    for value in values("authorization"):
        scheme, _, token = value.strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise AuthError("the Authorization header must be 'Bearer <API key>'")
        tokens.add(token.strip())
    tokens.update(v.strip() for v in values("x-api-key"))
    if not tokens:
        raise AuthError("missing API key: send 'Authorization: Bearer <key>' or 'X-API-Key: <key>'")
    if len(tokens) > 1:
        raise AuthError("the request carries more than one API key; send exactly one")
    return tokens.pop()
