"""A CLI read answered by a running `graphctx serve` on the same data directory: the same answers and
errors as opening the stores, in exactly the caller's scope, and a direct answer whenever serve is
absent, stale, other-configured or dies mid-call."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from graphctx.cli import app
from graphctx.service import ContextService
from graphctx.settings import Settings
from graphctx.transports import local

runner = CliRunner()
START_TIMEOUT_S = 90.0
STOP_TIMEOUT_S = 20.0
AS_OF = "2026-06-01T12:00:00+00:00"
ENV = {"GRAPHCTX_EMBEDDER": "hashing"}


def _load(data_dir: Path) -> None:
    from graphctx.demo import sample_path
    from graphctx.scope import Scope

    with ContextService.open(Settings(data_dir=data_dir, embedder="hashing")) as service:
        with sample_path().open(encoding="utf-8") as fh:
            service.remember_jsonl(Scope("demo", "default"), fh)
        service.remember(
            Scope("other", "default"), [{"id": "secret-svc", "name": "secret-svc", "type": "service"}]
        )


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, subprocess.Popen[bytes]]]:
    """`graphctx serve --workers 1 --port 0` on a data directory holding the demo memory (tenant demo)
    and one entity of tenant `other`; stopped with SIGTERM."""
    data_dir = tmp_path_factory.mktemp("via-serve") / "data"
    _load(data_dir)
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("GRAPHCTX_")}
    env.update(ENV, GRAPHCTX_DATA_DIR=str(data_dir))
    proc = subprocess.Popen(
        [sys.executable, "-m", "graphctx.cli", "serve", "--port", "0", "--workers", "1", "--log-level",
         "warning"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not (data_dir / local.RUNTIME_FILE).exists():
            if proc.poll() is not None:
                raise AssertionError(f"serve exited with {proc.returncode}: {proc.stderr.read()!r}")
            if time.monotonic() > deadline:
                raise TimeoutError(f"serve did not advertise itself within {START_TIMEOUT_S} s")
            time.sleep(0.1)
        yield data_dir, proc
    finally:
        proc.terminate()
        proc.wait(STOP_TIMEOUT_S)


@pytest.fixture
def cli_env(served: tuple[Path, Any], monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.upper().startswith("GRAPHCTX_"):
            monkeypatch.delenv(name)
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("GRAPHCTX_DATA_DIR", str(served[0]))
    return served[0]


def _run(via: str, *args: str) -> tuple[int, Any, str]:
    r = runner.invoke(app, ["--via", via, "-v", *args])
    out = json.loads(r.stdout) if r.stdout.strip().startswith("{") else r.stdout
    return r.exit_code, out, r.stderr


def _without_timings(data: Any, clock: bool = False) -> Any:
    """The envelope without its timings (and, with `clock`, the instant it answered for: a command
    without --as-of answers for now)."""
    dropped = {"timings_ms", "as_of"} if clock else {"timings_ms"}
    if isinstance(data, dict):
        return {k: _without_timings(v) for k, v in data.items() if k not in dropped}
    return data


READS = [
    ["--tenant", "demo", "recall", "who owns checkout-api", "--as-of", AS_OF, "--json"],
    ["--tenant", "demo", "recall", "payment latency", "--depth", "2", "--ids", "--max-tokens", "300",
     "--as-of", AS_OF, "--json"],
    ["--tenant", "demo", "explain", "checkout-api", "--as-of", AS_OF, "--json"],
    ["--tenant", "demo", "neighbourhood", "checkout-api", "--json"],
    ["--tenant", "demo", "path", "checkout-api", "payment-gateway", "--json"],
    ["--tenant", "demo", "search", "checkout", "--json"],
    ["--tenant", "other", "recall", "checkout-api", "--as-of", AS_OF, "--json"],
    ["--tenant", "demo", "--namespace", "elsewhere", "recall", "checkout-api", "--as-of", AS_OF, "--json"],
]  # fmt: skip
ERRORS = [
    (["--tenant", "demo", "explain", "no-such-thing", "--json"], 3, "not_found"),
    (["--tenant", "demo", "recall", "x", "--depth", "9", "--json"], 64, "invalid_input"),
    (["--tenant", "bad tenant!", "recall", "x", "--json"], 77, "scope_denied"),
    (["--tenant", "graphctx:shared", "recall", "x", "--json"], 77, "scope_denied"),
    (["--tenant", "demo", "symbol", "checkout-api", "--graph", "nope", "--json"], 3, "not_found"),
    (["--tenant", "other", "explain", "checkout-api", "--json"], 3, "not_found"),
]


@pytest.mark.slow
@pytest.mark.parametrize("args", READS, ids=lambda a: " ".join(a[:4]))
def test_the_same_envelope_through_serve_and_direct(cli_env: Path, args: list[str]) -> None:
    code_s, served, log_s = _run("serve", *args)
    code_d, direct, _ = _run("direct", *args)
    assert code_s == code_d == 0, (served, direct)
    assert "answered by graphctx serve" in log_s
    clock = "--as-of" not in args
    assert _without_timings(served, clock) == _without_timings(direct, clock)


@pytest.mark.slow
@pytest.mark.parametrize(("args", "status", "code"), ERRORS, ids=str)
def test_the_same_error_and_exit_status_through_serve_and_direct(
    cli_env: Path, args: list[str], status: int, code: str
) -> None:
    code_s, served, _ = _run("serve", *args)
    code_d, direct, _ = _run("direct", *args)
    assert code_s == code_d == status
    assert served == direct and served["error"]["code"] == code


@pytest.mark.slow
def test_a_tenant_from_the_environment_is_the_callers_own(cli_env: Path, monkeypatch) -> None:
    # serve runs without GRAPHCTX_TENANT_ID: the caller's value travels with the call
    monkeypatch.setenv("GRAPHCTX_TENANT_ID", "other")
    args = ["recall", "secret-svc checkout-api", "--as-of", AS_OF, "--json"]
    code_s, served, log_s = _run("serve", *args)
    code_d, direct, _ = _run("direct", *args)
    assert code_s == code_d == 0 and "answered by graphctx serve" in log_s
    assert _without_timings(served) == _without_timings(direct)
    assert served["scope"]["tenant_id"] == "other"
    names = {i["name"] for i in served["items"]}
    assert "secret-svc" in names and "checkout-api" not in names


@pytest.mark.slow
def test_human_output_is_the_same(cli_env: Path) -> None:
    args = ["--tenant", "demo", "explain", "checkout-api", "--as-of", AS_OF]
    code_s, served, _ = _run("serve", *args)
    code_d, direct, _ = _run("direct", *args)
    assert code_s == code_d == 0
    strip = [line for line in served.splitlines() if "ms" not in line]
    assert strip == [line for line in direct.splitlines() if "ms" not in line] and len(strip) > 3


HEAVY = ("pydantic", "numpy", "graphctx.service", "graphctx.api", "graphctx.envelope", "graphctx.model",
         "tantivy", "sqlite3")  # fmt: skip
"""What a read through serve leaves to serve: the request models, the stores, the envelope code."""


@pytest.mark.slow
@pytest.mark.parametrize("output", [[], ["--json"]], ids=["human", "json"])
def test_a_read_through_serve_imports_neither_pydantic_nor_the_stores(
    cli_env: Path, output: list[str]
) -> None:
    probe = (
        "import sys\n"
        "from graphctx.cli import main\n"
        "sys.argv = ['graphctx', *sys.argv[1:]]\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    code = exc.code\nelse:\n    code = 0\n"
        f"heavy = [m for m in {HEAVY!r} if m in sys.modules]\n"
        "print('EXIT', code, 'HEAVY', heavy, file=sys.stderr)\n"
    )
    argv = ["--via", "serve", "--tenant", "demo", "-v", "recall", "who owns checkout-api", *output]
    done = subprocess.run(
        [sys.executable, "-c", probe, *argv], capture_output=True, text=True, timeout=120, env=os.environ
    )
    assert "answered by graphctx serve" in done.stderr, done.stderr[-2000:]
    assert "EXIT 0 HEAVY []" in done.stderr, done.stderr[-2000:]
    assert "checkout-api" in done.stdout


@pytest.mark.slow
def test_the_advert_is_private_and_names_a_live_process(cli_env: Path, served) -> None:
    path = cli_env / local.RUNTIME_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    advert = json.loads(path.read_text())
    assert advert["pid"] == served[1].pid and advert["host"] == "127.0.0.1" and advert["port"] > 0
    assert len(advert["secret"]) >= 40 and "hashing" not in path.read_text()  # values are hashed


def _post(advert: dict[str, Any], op: str, body: object, secret: str | None = None) -> httpx.Response:
    headers = {} if secret == "" else {local.SECRET_HEADER: secret or advert["secret"]}
    url = f"http://{advert['host']}:{advert['port']}{local.PREFIX}/{op}"
    return httpx.post(url, content=json.dumps(body), headers=headers, timeout=30.0)


@pytest.mark.slow
def test_the_local_route_takes_only_its_secret_reads_and_the_callers_own_scope(cli_env: Path) -> None:
    advert = json.loads((cli_env / local.RUNTIME_FILE).read_text())
    good = {"fingerprint": advert["fingerprint"], "scope": {"tenant_id": "demo"}, "request": {"query": "x"}}
    assert _post(advert, "recall", good).status_code == 200
    for secret in ("", "wrong", advert["secret"][:-1], advert["secret"] + "x"):
        r = _post(advert, "recall", good, secret=secret)
        assert r.status_code == 401 and r.json()["error"]["code"] == "unauthenticated"
    # an API key's route does not take the secret, the local route takes no write nor status
    r = httpx.post(f"http://{advert['host']}:{advert['port']}/v1/recall", json={"query": "x"},
                   headers={"Authorization": f"Bearer {advert['secret']}"}, timeout=30.0)  # fmt: skip
    assert r.status_code == 401
    for op in ("remember", "forget", "reconcile", "status", "keys"):
        r = _post(advert, op, {**good, "request": {"entities": [{"name": "x", "type": "service"}]}})
        assert r.status_code in (404, 405) and r.status_code != 200
    bad_bodies = [
        {**good, "fingerprint": "0" * 64},
        {**good, "scope": {"tenant_id": "demo", "data_dir": "/etc"}},
        {**good, "scope": {"tenant_id": ["demo", "other"]}},
        {**good, "graph": 3},
        {**good, "extra": 1},
        {**good, "request": "recall"},
        [good],
    ]
    for body in bad_bodies:
        r = _post(advert, "recall", body)
        assert r.status_code in (409, 422), (body, r.text)
    # a request's own selectors cannot move it out of the scope its settings give
    r = _post(advert, "recall", {**good, "request": {"query": "secret-svc", "tenant_id": "other"}})
    assert r.status_code == 422 and r.json()["error"]["code"] == "invalid_input"


@pytest.mark.slow
def test_other_settings_are_answered_directly(cli_env: Path, monkeypatch) -> None:
    monkeypatch.setenv("GRAPHCTX_DENSE_DEADLINE_S", "1.5")
    code, _, log = _run("auto", "--tenant", "demo", "recall", "checkout", "--json")
    assert code == 0 and "answering directly" in log and "other settings" in log
    code, out, _ = _run("serve", "--tenant", "demo", "recall", "checkout", "--json")
    assert code == 69 and out["error"]["code"] == "serve_unavailable"


class _Dying:
    """A listener that accepts each connection, reads the request and closes without answering (a
    serve killed mid-call)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen()
        self.port = self.sock.getsockname()[1]
        self.calls = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.calls += 1
            conn.recv(65536)
            conn.close()


def _advertise_fake(data_dir: Path, port: int, pid: int) -> None:
    advert = local.Advert("127.0.0.1", port, pid, local.process_started(pid), "s" * 43, _version(),
                          local.fingerprint(data_dir, os.environ), str(data_dir.resolve()), 10.0)  # fmt: skip
    (data_dir / local.RUNTIME_FILE).write_text(json.dumps(advert.__dict__))


def _version() -> str:
    from graphctx import __version__

    return __version__


@pytest.fixture
def bare(tmp_path: Path, monkeypatch) -> Path:
    """A data directory no serve runs on, holding the demo memory."""
    for name in list(os.environ):
        if name.upper().startswith("GRAPHCTX_"):
            monkeypatch.delenv(name)
    monkeypatch.setenv("GRAPHCTX_EMBEDDER", "hashing")
    data_dir = tmp_path / "data"
    _load(data_dir)
    monkeypatch.setenv("GRAPHCTX_DATA_DIR", str(data_dir))
    return data_dir


def test_a_serve_that_dies_mid_call_is_answered_directly_or_reported(bare: Path) -> None:
    dying = _Dying()
    _advertise_fake(bare, dying.port, os.getpid())  # alive: this process
    args = ["--tenant", "demo", "recall", "checkout-api", "--as-of", AS_OF, "--json"]
    code, out, log = _run("auto", *args)
    assert dying.calls == 1 and code == 0 and "did not answer" in log and "answering directly" in log
    _, direct, _ = _run("direct", *args)
    assert _without_timings(out) == _without_timings(direct)
    code, out, _ = _run("serve", *args)
    assert code == 69 and out["error"]["code"] == "serve_unavailable" and "Traceback" not in str(out)


def test_a_stale_or_garbled_advert_is_ignored(bare: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    args = ["--tenant", "demo", "recall", "checkout-api", "--json"]
    for write in (
        lambda: _advertise_fake(bare, 9, dead.pid),  # the pid is gone
        lambda: (bare / local.RUNTIME_FILE).write_text("{not json"),
        lambda: (bare / local.RUNTIME_FILE).write_text(json.dumps({"pid": "1", "port": []})),
    ):
        write()
        code, out, log = _run("auto", *args)
        assert code == 0 and out["items"] and "answering directly" in log
        code, out, _ = _run("serve", *args)
        assert code == 69 and out["error"]["code"] == "serve_unavailable"
    # a pid reused by another process (its start time differs) is not the serve
    _advertise_fake(bare, 9, os.getpid())
    advert = json.loads((bare / local.RUNTIME_FILE).read_text())
    (bare / local.RUNTIME_FILE).write_text(json.dumps({**advert, "started": "1"}))
    code, _, log = _run("auto", *args)
    assert code == 0 and "is gone" in log


def test_direct_never_looks_for_serve(bare: Path) -> None:
    dying = _Dying()
    _advertise_fake(bare, dying.port, os.getpid())
    code, out, _ = _run("direct", "--tenant", "demo", "recall", "checkout-api", "--json")
    assert code == 0 and out["items"] and dying.calls == 0


@pytest.mark.slow
def test_serve_withdraws_its_advert_when_it_stops(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    _load(data_dir)
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("GRAPHCTX_")}
    env.update(ENV, GRAPHCTX_DATA_DIR=str(data_dir))
    # the default: reader processes beside the writer, which advertises
    proc = subprocess.Popen(
        [sys.executable, "-m", "graphctx.cli", "serve", "--port", "0", "--workers", "2", "--log-level",
         "warning"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not (data_dir / local.RUNTIME_FILE).exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        advert = json.loads((data_dir / local.RUNTIME_FILE).read_text())
        assert advert["pid"] == proc.pid
        r = subprocess.run(
            [sys.executable, "-m", "graphctx.cli", "--via", "serve", "--tenant", "demo", "recall",
             "checkout-api", "--json"], env=env, capture_output=True, timeout=120,
        )  # fmt: skip
        assert r.returncode == 0 and json.loads(r.stdout)["items"], r.stderr
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(STOP_TIMEOUT_S)
    assert proc.returncode == 0 and not (data_dir / local.RUNTIME_FILE).exists()


def test_the_local_route_answers_only_loopback_clients(tmp_path: Path) -> None:
    """serve may listen on every interface for API-key clients; the local route's secret stands for
    access to the data directory, so a request from another address is refused before the secret is
    compared, even with the right one."""
    from graphctx import registry
    from graphctx.transports.http import create_app

    settings = Settings(data_dir=tmp_path, embedder="hashing")
    access = local.LocalAccess.new(tmp_path, {})
    keys = registry.factory("keys", settings.key_store_backend)(settings)
    with ContextService.open(settings) as svc:
        app = create_app(svc, keys, settings, local_access=access)
        body = {"fingerprint": access.fingerprint, "scope": {"tenant_id": "demo"}, "request": {"query": "x"}}

        async def post(client: tuple[str, int]) -> httpx.Response:
            transport = httpx.ASGITransport(app=app, client=client)
            async with httpx.AsyncClient(transport=transport, base_url="http://serve") as http:
                headers = {local.SECRET_HEADER: access.secret}
                return await http.post(f"{local.PREFIX}/recall", json=body, headers=headers)

        remotes = (("10.1.2.3", 40000), ("192.168.0.7", 40000), ("::ffff:10.0.0.1", 1), ("testclient", 1))
        for remote in remotes:
            r = asyncio.run(post(remote))
            assert r.status_code == 401 and r.json()["error"]["code"] == "unauthenticated", (remote, r.text)
        for loop in (("127.0.0.1", 40000), ("::1", 40000)):
            r = asyncio.run(post(loop))
            assert r.status_code == 200, (loop, r.text)
    keys.close()
