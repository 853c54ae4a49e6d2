"""`python -m graphctx.transports.mcp_stdio`: the MCP server over stdio, for an agent that starts
graphctx as a subprocess. Backends come from settings (GRAPHCTX_* environment variables).

The caller is the local operator, scoped to GRAPHCTX_TENANT_ID / GRAPHCTX_NAMESPACE — or, when
GRAPHCTX_API_KEY is set, that key's principal, verified against the key store at start and again on
every call (a revoked key stops working). Stdout carries the protocol only; logs go to stderr.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys

from pydantic import ValidationError

from graphctx import registry
from graphctx.auth import Principal
from graphctx.errors import GraphctxError
from graphctx.kernel.ports import KeyStore
from graphctx.service import ContextService
from graphctx.settings import Settings
from graphctx.transports.mcp import Authenticate, fixed_authenticator, run_stdio

API_KEY_ENV = "GRAPHCTX_API_KEY"


def local_principal(settings: Settings) -> Principal:
    return Principal(
        name="local",
        tenant_id=settings.tenant_id,
        namespaces=(settings.namespace,),
        graph_ids=tuple(dict.fromkeys(settings.graph_ids)),
    )


def main(settings: Settings | None = None, api_key: str | None = None) -> int:
    """Serve until the client closes stdin; returns the process exit status. `api_key` defaults to
    $GRAPHCTX_API_KEY (never take it from a command line, where other users can read it)."""
    if not logging.getLogger().handlers:
        logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="graphctx mcp: %(message)s")
    token = api_key if api_key is not None else os.environ.get(API_KEY_ENV, "").strip()
    keys: KeyStore | None = None
    service: ContextService | None = None
    try:
        settings = settings or Settings()
        # anything a backend prints while opening must not reach the protocol stream
        with contextlib.redirect_stdout(sys.stderr):
            authenticate: Authenticate
            if token:
                store: KeyStore = registry.factory("keys", settings.key_store_backend)(settings)
                keys = store
                store.verify(token)  # fail at start, not on the first call
                authenticate = lambda _headers: store.verify(token)  # noqa: E731
            else:
                authenticate = fixed_authenticator(local_principal(settings))
            service = ContextService.open(settings)
        run_stdio(service, authenticate)
    except GraphctxError as exc:
        print(f"graphctx mcp: error [{exc.code}]: {exc.message}", file=sys.stderr)
        return exc.exit_status
    except ValidationError as exc:  # a GRAPHCTX_* variable with an invalid value
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        print(
            f"graphctx mcp: error [config_error]: GRAPHCTX_{where.upper()}: {first['msg']}", file=sys.stderr
        )
        return 78
    except KeyboardInterrupt:
        return 130
    finally:
        if service is not None:
            service.close()
        if keys is not None:
            keys.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
