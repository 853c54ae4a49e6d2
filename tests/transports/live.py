"""A real uvicorn server on a free loopback port, run in a background thread of the test process,
configured as `graphctx serve` configures it (graphctx.transports.server)."""

from __future__ import annotations

import socket
import threading
import time
from typing import Any

import uvicorn

from graphctx.settings import Settings
from graphctx.transports.server import uvicorn_config

START_TIMEOUT_S = 20.0
STOP_TIMEOUT_S = 15.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LiveServer:
    """`with LiveServer(app) as server:` serves `app` at `server.url` until the block ends, under the
    limits of `settings` (default: the defaults)."""

    def __init__(self, app: Any, settings: Settings | None = None) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))  # bound before the server starts: no port race
        self.port = int(self.sock.getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn_config(app, settings or Settings(), log_level="warning")
        config.timeout_graceful_shutdown = 5
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, name="live-uvicorn", daemon=True
        )

    def __enter__(self) -> LiveServer:
        self.thread.start()
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self.server.started:
            if not self.thread.is_alive():
                raise RuntimeError("the uvicorn thread exited before the server started")
            if time.monotonic() > deadline:
                raise TimeoutError(f"uvicorn did not start within {START_TIMEOUT_S} s")
            time.sleep(0.02)
        return self

    def wait_in_flight(self, count: int) -> None:
        """Block until `count` requests are in flight (headers parsed, response not finished): a
        barrier for tests whose next step depends on the server having seen earlier requests."""
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            busy = [c for c in list(self.server.server_state.connections)
                    if getattr(c, "cycle", None) is not None and not c.cycle.response_complete]  # fmt: skip
            if len(busy) >= count:
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"{len(busy)} requests in flight after {START_TIMEOUT_S} s, not {count}")
            time.sleep(0.01)

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(STOP_TIMEOUT_S)
        self.sock.close()
        if self.thread.is_alive():
            raise TimeoutError(f"uvicorn did not stop within {STOP_TIMEOUT_S} s")
