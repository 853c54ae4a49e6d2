"""The served surface under the attacks of issue 19, side by side: `graphctx serve` of this tree and of
a baseline tree (e.g. a checkout of an earlier main), each a subprocess on loopback with its default
limits, each attacked the same way while one legitimate client keeps asking:

1. 60 connections without a key, each sending a 5 MiB body but its last byte, then holding on;
2. 1,500 connections that send half a request line and never finish their headers;
3. 300 `GET /mcp` event streams with a valid key, held open.

Reports the server's peak memory growth, the descriptors and threads it holds, how many attack
connections it still holds after a while, and the legitimate client's answers (count, failures, p50),
and writes its section of docs/results.md.

    python bench/served_surface.py --baseline /tmp/main-checkout   # a tree with core/ (its .layout is built)
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from _report import header, median, write_section

from graphctx import registry
from graphctx.auth import Principal
from graphctx.settings import Settings

START_TIMEOUT_S = 90.0
STOP_TIMEOUT_S = 20.0
WAIT_S = 30.0
BODY = 5 * 1024 * 1024
HERE = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def status(pid: int) -> dict[str, int]:
    fields = {"fds": len(os.listdir(f"/proc/{pid}/fd"))}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmHWM", "VmRSS", "Threads"):
            fields[name] = int(value.split()[0])
    return fields


class Server:
    def __init__(self, tree: Path, data_dir: Path) -> None:
        layout = tree / ".layout"
        subprocess.run([str(tree / ".ci" / "layout")], check=True, cwd=tree)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "GRAPHCTX_DATA_DIR": str(data_dir), "GRAPHCTX_EMBEDDER": "hashing",
               "PYTHONPATH": str(layout)}  # fmt: skip
        cmd = [sys.executable, "-m", "graphctx.cli", "serve", "--port", str(self.port),
               "--log-level", "error"]  # fmt: skip
        self.proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if self.proc.poll() is not None:
                raise SystemExit(f"`graphctx serve` of {tree} exited with {self.proc.returncode}")
            try:
                if httpx.get(self.url + "/healthz", timeout=2.0).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise SystemExit(f"`graphctx serve` of {tree} did not start within {START_TIMEOUT_S:.0f} s")
            time.sleep(0.1)

    def status(self) -> dict[str, int]:
        return status(self.proc.pid)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(STOP_TIMEOUT_S)


class Legit(threading.Thread):
    """One client asking /v1/status on a fresh connection, over and over, until stopped."""

    def __init__(self, url: str, token: str) -> None:
        super().__init__(daemon=True)
        self.url, self.token = url, token
        self.ms: list[float] = []
        self.failures: dict[str, int] = {}
        self.halt = threading.Event()

    def run(self) -> None:
        while not self.halt.is_set():
            started = time.perf_counter()
            try:
                r = httpx.post(self.url + "/v1/status", json={}, timeout=WAIT_S,
                               headers={"Authorization": f"Bearer {self.token}"})  # fmt: skip
                what = None if r.status_code == 200 else f"HTTP {r.status_code}"
            except httpx.HTTPError as exc:
                what = type(exc).__name__
            if what is None:
                self.ms.append((time.perf_counter() - started) * 1000)
            else:
                self.failures[what] = self.failures.get(what, 0) + 1
            self.halt.wait(0.05)

    def report(self) -> str:
        failed = ", ".join(f"{k} x{v}" for k, v in sorted(self.failures.items())) or "none"
        return f"{len(self.ms)} answered, p50 {median(self.ms):.0f} ms; failed: {failed}"


def head(path: str, extra: str = "", length: int | None = None) -> bytes:
    lines = f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{extra}"
    if length is not None:
        lines += f"Content-Type: application/json\r\nContent-Length: {length}\r\n"
    return (lines + "\r\n").encode()


def still_open(sock: socket.socket) -> bool:
    sock.setblocking(False)
    try:
        while True:
            if not sock.recv(65536):
                return False
    except BlockingIOError:
        return True
    except OSError:
        return False


def attack(server: Server, token: str, run: Callable[[Server, str], dict[str, Any]]) -> dict[str, Any]:
    legit = Legit(server.url, token)
    legit.start()
    try:
        result = run(server, token)
    finally:
        legit.halt.set()
        legit.join(WAIT_S)
    result["legitimate client"] = legit.report()
    return result


def slow_bodies(server: Server, token: str, connections: int = 60, hold_s: float = 15.0) -> dict[str, Any]:
    before = server.status()
    socks: list[socket.socket] = []

    def upload(path: str) -> None:
        sock = socket.create_connection(("127.0.0.1", server.port), timeout=WAIT_S)
        socks.append(sock)
        try:
            sock.sendall(head(path, "Accept: application/json, text/event-stream\r\n", BODY))
            sock.sendall(b"x" * (BODY - 1))
        except OSError:
            pass

    threads = [threading.Thread(target=upload, args=(p,)) for p in ("/v1/remember", "/mcp")
               for _ in range(connections // 2)]  # fmt: skip
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(WAIT_S)
    time.sleep(max(0.0, hold_s - (time.monotonic() - started)))
    held = sum(still_open(s) for s in socks)
    after = server.status()
    for s in socks:
        s.close()
    return {
        "peak memory growth": f"{(after['VmHWM'] - before['VmHWM']) / 1024:.0f} MiB",
        f"connections still held after {hold_s:g} s": f"{held} of {connections}",
    }


def stalled_headers(
    server: Server, token: str, connections: int = 1500, hold_s: float = 15.0
) -> dict[str, Any]:
    before = server.status()
    peak = [0]
    done = threading.Event()

    def sample() -> None:  # the server's descriptors every 20 ms: bursts are accepted before trimmed
        while not done.is_set():
            peak[0] = max(peak[0], server.status()["fds"])
            done.wait(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    socks = []
    started = time.monotonic()
    for _ in range(connections):
        sock = socket.create_connection(("127.0.0.1", server.port), timeout=WAIT_S)
        sock.sendall(b"POST /v1/recall HTTP/1.1\r\nHost: 127.0")
        socks.append(sock)
    httpx.get(server.url + "/healthz", timeout=WAIT_S)  # answered once every connection was accepted
    settled = server.status()
    done.set()
    sampler.join(WAIT_S)
    time.sleep(max(0.0, hold_s - (time.monotonic() - started)))
    held = sum(still_open(s) for s in socks)
    for s in socks:
        s.close()
    return {
        "server descriptors, all connections open (peak)": f"{peak[0] - before['fds']:+d}",
        "server descriptors, all connections open (settled)": f"{settled['fds'] - before['fds']:+d}",
        f"connections still held after {hold_s:g} s": f"{held} of {connections}",
    }


def mcp_streams(server: Server, token: str, streams: int = 300) -> dict[str, Any]:
    before = server.status()
    socks, statuses = [], {}
    request = (f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
               "Accept: text/event-stream\r\n\r\n").encode()  # fmt: skip
    for _ in range(streams):
        sock = socket.create_connection(("127.0.0.1", server.port), timeout=WAIT_S)
        sock.sendall(request)
        line = sock.recv(4096).split(b"\r\n", 1)[0].decode(errors="replace")
        code = line.split(" ")[1] if " " in line else "?"
        statuses[code] = statuses.get(code, 0) + 1
        socks.append(sock)
    time.sleep(2.0)
    after = server.status()
    for s in socks:
        s.close()
    return {
        "answers": ", ".join(f"{k} x{v}" for k, v in sorted(statuses.items())),
        "server descriptors held": f"{after['fds'] - before['fds']:+d}",
        "server threads held": f"{after['Threads'] - before['Threads']:+d}",
    }


ATTACKS = {
    "60 unauthenticated 5 MiB bodies, last byte never sent": slow_bodies,
    "1,500 connections that never finish their headers": stalled_headers,
    "300 GET /mcp streams with a valid key": mcp_streams,
}


def measure(tree: Path) -> dict[str, dict[str, Any]]:
    work = Path(tempfile.mkdtemp(prefix="graphctx-served-"))
    try:
        settings = Settings(data_dir=work / "data", embedder="hashing")
        keys = registry.factory("keys", settings.key_store_backend)(settings)
        try:
            token = keys.create(Principal("bench", "bench")).token
        finally:
            keys.close()
        results = {}
        for name, run in ATTACKS.items():  # a fresh server per attack: nothing left over from the last
            server = Server(tree, work / "data")
            try:
                results[name] = attack(server, token, run)
            finally:
                server.stop()
            print(f"{tree}: {name}: {results[name]}", flush=True)
        return results
    finally:
        shutil.rmtree(work, ignore_errors=True)


def tree_commit(tree: Path) -> str:
    git = ["git", "rev-parse", "--short", "HEAD"]
    out = subprocess.run(git, cwd=tree, capture_output=True, text=True, check=False)
    return out.stdout.strip() or str(tree)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--baseline", type=Path, required=True, help="A checkout to compare with.")
    parser.add_argument("--no-write", action="store_true", help="Do not write docs/results.md.")
    args = parser.parse_args()
    trees = {f"baseline {tree_commit(args.baseline)}": args.baseline, f"this tree {tree_commit(HERE)}": HERE}
    measured = {label: measure(tree) for label, tree in trees.items()}
    labels = list(measured)
    rows = []
    for name in ATTACKS:
        for metric in measured[labels[-1]][name]:
            cells = [str(measured[label][name].get(metric, "-")) for label in labels]
            rows.append(f"| {name} | {metric} | " + " | ".join(cells) + " |")
    body = (
        "### The served surface under attack (`graphctx serve`, default limits)\n\n"
        + header(
            f"python bench/served_surface.py --baseline <checkout of {labels[0].split()[-1]}>",
            "an empty store (hashing embedder); each attack on a fresh server subprocess on loopback, "
            "one legitimate client asking /v1/status on a fresh connection every 50 ms throughout",
        )
        + "\n| attack | measure | "
        + " | ".join(labels)
        + " |\n|---|---|"
        + "---|" * len(labels)
        + "\n"
        + "\n".join(rows)
        + "\n"
    )
    print(body)
    if not args.no_write:
        write_section("served_surface", body)


if __name__ == "__main__":
    main()
