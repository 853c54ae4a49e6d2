"""How `graphctx serve` serves: the one place that composes the app (HTTP API + MCP at /mcp) and
configures uvicorn with the served surface's limits (GRAPHCTX_HTTP_*, GRAPHCTX_MCP_*; see
docs/operations.md). Every limit is per process."""

from __future__ import annotations

import signal
import socket
from collections.abc import Callable

import uvicorn
from fastapi import FastAPI

from graphctx.kernel.ports import KeyStore
from graphctx.service import ContextService
from graphctx.settings import Settings
from graphctx.transports.connections import ConnectionLimits, protocol_class
from graphctx.transports.http import create_app
from graphctx.transports.local import LocalAccess
from graphctx.transports.mcp import mount_mcp

MCP_PATH = "/mcp"
GRACEFUL_SHUTDOWN_S = 10
LINGER_BODIES = 2
"""A refused upload is discarded for at most this many maximum bodies' worth of bytes."""


def build_app(
    service: ContextService, keys: KeyStore, settings: Settings, local_access: LocalAccess | None = None
) -> FastAPI:
    """The served app: the HTTP API at /v1 and MCP (streamable HTTP) at /mcp, over one service and
    one key store, under the same body bound and timeouts; with `local_access`, the local CLI's
    reads too (graphctx.transports.local)."""
    app = create_app(service, keys, settings, local_access=local_access)
    mount_mcp(app, service, keys, MCP_PATH, max_body_bytes=settings.http_max_body_bytes, settings=settings)
    return app


def connection_limits(settings: Settings) -> ConnectionLimits:
    return ConnectionLimits(
        max_connections=settings.http_max_connections,
        header_timeout_s=settings.http_header_timeout_s,
        send_timeout_s=settings.http_send_timeout_s,
        retry_after_s=settings.http_retry_after_s,
        linger_bytes=LINGER_BODIES * settings.http_max_body_bytes,
    )


def uvicorn_config(app: FastAPI, settings: Settings, *, log_level: str = "info") -> uvicorn.Config:
    """uvicorn on the httptools protocol under the connection limits (graphctx.transports.connections);
    no websockets (nothing here speaks them), no proxy headers, no server header."""
    return uvicorn.Config(
        app,
        host=settings.http_host,
        port=settings.http_port,
        http=protocol_class(connection_limits(settings)),
        ws="none",
        loop=settings.http_loop,
        lifespan="on",
        log_level=log_level,
        proxy_headers=False,
        server_header=False,
        timeout_keep_alive=settings.http_idle_timeout_s,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
    )


class _Server(uvicorn.Server):
    """uvicorn's server, saying where it listens once it does."""

    def __init__(self, config: uvicorn.Config, on_listening: Callable[[str, int], None] | None) -> None:
        super().__init__(config)
        self.on_listening = on_listening

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started and self.on_listening is not None and self.servers:
            host, port = self.servers[0].sockets[0].getsockname()[:2]
            self.on_listening(str(host), int(port))


def serve(
    app: FastAPI,
    settings: Settings,
    *,
    log_level: str = "info",
    on_listening: Callable[[str, int], None] | None = None,
) -> None:
    """Serve until SIGINT / SIGTERM, then return (uvicorn finishes in-flight requests first).
    `on_listening(host, port)` runs once it accepts connections."""
    server = _Server(uvicorn_config(app, settings, log_level=log_level), on_listening)
    # uvicorn shuts down gracefully on SIGINT/SIGTERM and then re-raises the signal with the
    # previous handler; this one turns it into a clean return, so the caller closes the stores
    previous = {sig: signal.signal(sig, _stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        server.run()
    except _Stopped:
        pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


class _Stopped(Exception):
    pass


def _stop(signum: int, frame: object) -> None:
    raise _Stopped(signum)
