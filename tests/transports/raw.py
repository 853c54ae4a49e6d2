"""Raw HTTP/1.1 on a loopback socket, for what a well-behaved client never does: stop half-way through
its headers, hold a body open, stop reading."""

from __future__ import annotations

import json
import select
import socket
from dataclasses import dataclass, field
from typing import Any

WAIT_S = 30.0
"""Upper bound on any wait for the server: a timeout is the failure being tested for, never a pass."""


@dataclass
class Answer:
    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""

    def json(self) -> Any:
        return json.loads(self.body)


def connect(port: int, *, rcvbuf: int | None = None) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.settimeout(WAIT_S)
    sock.connect(("127.0.0.1", port))
    return sock


def head(
    method: str, path: str, headers: dict[str, str] | None = None, *, length: int | None = None
) -> bytes:
    """A request's line and headers (Content-Length `length` when given)."""
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1"]
    all_headers = dict(headers or {})
    if length is not None:
        all_headers.setdefault("Content-Type", "application/json")
        all_headers["Content-Length"] = str(length)
    lines += [f"{k}: {v}" for k, v in all_headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def read_answer(sock: socket.socket) -> Answer:
    """One response (Content-Length framed, as every graphctx answer is); raises on EOF first."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError(f"closed before a response; got {data[:200]!r}")
        data += chunk
    top, _, rest = data.partition(b"\r\n\r\n")
    status_line, *header_lines = top.decode("latin-1").split("\r\n")
    headers = {}
    for line in header_lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed inside a response body")
        rest += chunk
    return Answer(int(status_line.split()[1]), headers, rest[:length])


def closed_by_server(sock: socket.socket) -> bool:
    """True once the server has closed (EOF or reset); waits at most WAIT_S, reading and dropping
    whatever arrives first. False means the server kept the connection open that long."""
    try:
        while True:
            if not sock.recv(65536):
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except TimeoutError:
        return False


def trickle(sock: socket.socket, data: bytes, pause_s: float = 0.05) -> tuple[int, bytes]:
    """Send `data` one byte per `pause_s` (a slowloris client), collecting what the server answers,
    until the server closes or the data runs out. Returns (bytes sent, bytes received)."""
    sock.settimeout(pause_s)  # each recv is the pause between two bytes
    sent, answer = 0, b""
    try:
        for byte in data:
            try:
                sock.send(bytes([byte]))
                sent += 1
                chunk = sock.recv(65536)
            except TimeoutError:
                continue
            except (BrokenPipeError, ConnectionResetError):
                break
            if not chunk:
                break
            answer += chunk
    finally:
        sock.settimeout(WAIT_S)
    return sent, answer


def reset_by_server(sock: socket.socket) -> bool:
    """True once the server has reset the connection, found without reading a byte (a poll for
    hang-up/error only); waits at most WAIT_S. False means the server kept it that long."""
    poller = select.poll()
    poller.register(sock, 0)  # hang-up and error are always reported; readability is not asked for
    return bool(poller.poll(int(WAIT_S * 1000)))


def is_open(sock: socket.socket) -> bool:
    """Whether the server still holds the connection, checked without waiting."""
    sock.setblocking(False)
    try:
        return sock.recv(1, socket.MSG_PEEK) != b""
    except BlockingIOError:
        return True
    except (ConnectionResetError, BrokenPipeError):
        return False
    finally:
        sock.settimeout(WAIT_S)
