"""`graphctx serve --workers N`: reader processes on read-only stores, writes forwarded to the one
writer; every acknowledged write is visible to the next read, whichever process serves it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from graphctx.cli import app
from graphctx.errors import AmbiguousName, BoundExceeded, InputError, ReadOnly, from_dict
from graphctx.scope import Scope
from graphctx.service import ContextService
from graphctx.settings import Settings
from graphctx.transports.workers import ForwardingService, WriterEndpoint, WriterLink
from tests.transports.live import free_port

runner = CliRunner()
START_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 30.0
SCOPE = Scope("acme", "default")


def test_errors_cross_the_process_boundary_with_their_type() -> None:
    for exc in (
        BoundExceeded("query", 4096, 5000),
        AmbiguousName("x", [{"id": "a"}, {"id": "b"}]),
        ReadOnly("no"),
    ):
        back = from_dict(json.loads(json.dumps(exc.to_dict())))
        assert type(back) is type(exc) and back.to_dict() == exc.to_dict()
    assert from_dict({"code": "something_new", "message": "m"}).code == "something_new"


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[tuple[ContextService, ForwardingService, WriterEndpoint]]:
    settings = Settings(data_dir=tmp_path / "data", embedder="hashing")
    writer = ContextService.open(settings)
    endpoint = WriterEndpoint(writer, tmp_path)
    endpoint.start()
    reader_stores = ContextService.open(settings, mode="read").stores
    reader = ForwardingService(reader_stores, settings, WriterLink(endpoint.address, endpoint.authkey))
    yield writer, reader, endpoint
    reader.close()
    endpoint.close()
    writer.close()


def test_a_reader_forwards_writes_and_reads_them_back(
    pair: tuple[ContextService, ForwardingService, WriterEndpoint],
) -> None:
    _, reader, _ = pair
    report = reader.remember(SCOPE, [{"id": "svc", "name": "billing-api", "summary": "bills"}])
    assert report["entities"]["created"] == 1
    assert reader.recall(SCOPE, "billing-api")["items"][0]["name"] == "billing-api"
    assert reader.forget(SCOPE, ["svc"])["entities_deleted"] == 1
    assert reader.recall(SCOPE, "billing-api")["items"] == []
    with pytest.raises(InputError, match="over the bound"):  # the writer's typed error, in the reader
        reader.remember(SCOPE, [{"id": "x", "name": "n" * 5000}])
    with pytest.raises(ReadOnly):  # what the API does not serve stays refused in a reader
        reader.remember_jsonl(SCOPE, ['{"kind": "entity", "id": "y", "name": "y"}'])


def test_the_writer_refuses_a_peer_without_the_key(
    pair: tuple[ContextService, ForwardingService, WriterEndpoint],
) -> None:
    _, _, endpoint = pair
    stranger = WriterLink(endpoint.address, b"not the key")
    with pytest.raises(Exception, match="not reachable"):
        stranger.call("remember", SCOPE, entities=[{"id": "z", "name": "z"}], facts=[])


def test_a_writer_that_never_answers_costs_a_forwarded_write_its_deadline_not_minutes(tmp_path: Path) -> None:
    """The writer process is wedged (it takes the request and never answers): the reader's remember
    gives up once the write deadline (plus the writer's grace) has passed, with a typed error that says
    the write may or may not have been applied; it used to wait 300 s whatever the deadline."""
    from multiprocessing.connection import Listener

    authkey = b"k" * 32
    address = str(tmp_path / "wedged.sock")
    held: list[object] = []
    with Listener(address, family="AF_UNIX", authkey=authkey) as listener:
        threading.Thread(target=lambda: held.append(listener.accept()), daemon=True).start()
        settings = Settings(data_dir=tmp_path / "data", embedder="hashing", write_deadline_s=0.2)
        ContextService.open(settings).close()  # the stores exist, so a read-only open finds them
        reader = ForwardingService(
            ContextService.open(settings, mode="read").stores, settings, WriterLink(address, authkey)
        )
        outcome: list[BaseException] = []

        def write() -> None:
            try:
                reader.remember(SCOPE, [{"id": "w", "name": "w"}])
            except BaseException as exc:  # reported below
                outcome.append(exc)

        caller = threading.Thread(target=write, daemon=True)
        caller.start()
        caller.join(timeout=120)  # far below the 300 s it waited before, far above 0.2 + 5 s
        assert not caller.is_alive(), "the forwarded write outlived its deadline"
        assert len(outcome) == 1 and outcome[0].code == "backend_unavailable"  # type: ignore[attr-defined]
        assert "may or may not have been applied" in str(outcome[0])
        reader.close()


@pytest.fixture
def serving(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, dict[str, str], int]]:
    monkeypatch.setenv("GRAPHCTX_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("GRAPHCTX_EMBEDDER", "hashing")
    created = runner.invoke(app, ["keys", "create", "--name", "w", "--tenant", "acme", "--json"])
    token = json.loads(created.stdout)["token"]
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "graphctx.cli", "serve", "--port", str(port), "--workers", "2",
         "--log-level", "warning"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ},
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else b""
        try:
            if httpx.get(url + "/healthz", timeout=5.0).status_code == 200:
                break
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, "serve --workers 2 did not answer in time"
        time.sleep(0.2)
    try:
        yield url, {"Authorization": f"Bearer {token}"}, proc.pid
    finally:
        proc.terminate()
        try:
            assert proc.wait(STOP_TIMEOUT_S) == 0
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(STOP_TIMEOUT_S)
            raise


@pytest.mark.slow
def test_workers_serve_reads_in_parallel_and_every_acknowledged_write_is_visible(
    serving: tuple[str, dict[str, str], int],
) -> None:
    url, headers, writer_pid = serving
    failures: list[str] = []
    done = threading.Event()

    def reads() -> None:
        with httpx.Client(base_url=url, headers=headers, timeout=30.0) as http:
            while not done.is_set():
                r = http.post("/v1/recall", json={"query": "round marker"})
                if r.status_code != 200:
                    failures.append(f"recall: {r.status_code} {r.text[:200]}")

    readers = [threading.Thread(target=reads) for _ in range(3)]
    for t in readers:
        t.start()
    try:
        with httpx.Client(base_url=url, headers=headers, timeout=60.0) as http:
            for i in range(12):
                entity = {"id": f"e{i}", "name": f"item-{i}", "summary": f"round marker{i}"}
                r = http.post("/v1/remember", json={"entities": [entity]})
                assert r.status_code == 200, r.text
                for _ in range(3):  # fresh connections: the kernel may hand each to another reader
                    got = httpx.post(
                        url + "/v1/recall", json={"query": f"item-{i}"}, headers=headers, timeout=30
                    )
                    assert got.status_code == 200 and got.json()["items"][0]["name"] == f"item-{i}", got.text
            refused = http.post("/v1/remember", json={"entities": [{"id": "x", "name": "n" * 5000}]})
            assert refused.status_code == 422 and "over the bound" in refused.json()["error"]["message"]
            foreign = http.post(
                "/v1/remember", json={"tenant_id": "other", "entities": [{"id": "y", "name": "y"}]}
            )
            assert foreign.status_code == 403
            assert http.post("/v1/forget", json={"entity_ids": ["e0"]}).json()["entities_deleted"] == 1
            after = http.post("/v1/recall", json={"query": "item-0"}).json()["items"]
            assert "item-0" not in [it["name"] for it in after]
    finally:
        done.set()
        for t in readers:
            t.join(60)
    assert failures == []
    status = runner.invoke(app, ["status", "--json"])  # a CLI read beside the served directory
    assert json.loads(status.stdout)["writer_pid"] == writer_pid


def test_a_reader_whose_writer_died_before_it_started_stops() -> None:
    """The writer killed while a reader is still importing (a slow start on a loaded machine): the
    reader, told its writer's pid, stops as at SIGTERM instead of serving with no writer for ever
    (reading its parent then would give init's pid, which never changes)."""
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait(30)  # a pid that no longer names our parent
    script = (
        "import time\n"
        "from graphctx.transports.workers import _end_with_the_writer\n"
        f"_end_with_the_writer({gone.pid})\n"
        "time.sleep(60)\n"
    )
    reader = subprocess.run([sys.executable, "-c", script], timeout=60)
    assert reader.returncode == -signal.SIGTERM


def _readers_of(writer: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            cmdline = (stat.parent / "cmdline").read_bytes()
        except OSError:
            continue
        if int(fields[1]) == writer and b"spawn_main" in cmdline and b"resource_tracker" not in cmdline:
            found.append(int(stat.parent.name))
    return sorted(found)


def _connections(pids: list[int], port: int) -> list[int]:
    """Established connections to `port` each process holds a socket of (Linux /proc)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "01":
                inodes.add(f"socket:[{fields[9]}]")
    counts = []
    for pid in pids:
        held = 0
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            try:
                held += os.readlink(fd) in inodes
            except OSError:
                continue
        counts.append(held)
    return counts


def _keep_alive_round(url: str, headers: dict[str, str], readers: list[int], port: int, n: int) -> list[int]:
    """How n keep-alive clients, each answered once, are spread over the readers; then they leave."""
    clients = [httpx.Client(base_url=url, headers=headers, timeout=30.0) for _ in range(n)]
    try:
        for client in clients:
            assert client.post("/v1/recall", json={"query": "anything"}).status_code == 200
        return _connections(readers, port)
    finally:
        for client in clients:
            client.close()
        deadline = time.monotonic() + STOP_TIMEOUT_S  # the readers see the clients leave
        while _connections(readers, port) != [0] * len(readers):
            assert time.monotonic() < deadline, _connections(readers, port)
            time.sleep(0.05)


def _both_accepting(url: str, headers: dict[str, str], writer: int, port: int) -> list[int]:
    """The two readers once both accept. Serve answers as soon as one does, and a reader still
    starting holds no client back, so until the second has started the first takes every client.
    Two clients, one after the other, land one on each once both accept."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        readers = _readers_of(writer)
        if len(readers) == 2 and _keep_alive_round(url, headers, readers, port, 2) == [1, 1]:
            return readers
        assert time.monotonic() < deadline, f"two readers never both accepted: {readers}"
        time.sleep(0.2)


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts connections per process in /proc")
def test_serve_workers_gives_each_reader_its_share_of_keep_alive_clients(
    serving: tuple[str, dict[str, str], int],
) -> None:
    """Four rounds of 8 keep-alive clients on two readers: 4 and 4 each time. The kernel's hash
    (a SO_REUSEPORT socket per reader) gives 4/4 in 27 % of rounds, so this fails for it but in
    0.5 % of runs; one shared socket with each event loop accepting gave all 8 to one reader."""
    url, headers, writer_pid = serving
    port = int(url.rsplit(":", 1)[1])
    readers = _both_accepting(url, headers, writer_pid, port)
    for _ in range(4):
        assert _keep_alive_round(url, headers, readers, port, 8) == [4, 4]


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts connections per process in /proc")
def test_a_reader_killed_9_holds_no_client_back_and_its_replacement_takes_its_share(
    serving: tuple[str, dict[str, str], int],
) -> None:
    """kill -9 of a reader: new clients are answered by the other one meanwhile (a dead reader's
    count never gates the living), and once the writer has started a replacement the clients are
    spread over both again."""
    url, headers, writer_pid = serving
    port = int(url.rsplit(":", 1)[1])
    victim = _readers_of(writer_pid)[0]
    os.kill(victim, signal.SIGKILL)
    for _ in range(6):  # each on a fresh connection, while the writer notices and restarts
        assert (
            httpx.post(url + "/v1/recall", json={"query": "x"}, headers=headers, timeout=30).status_code
            == 200
        )
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        readers = _readers_of(writer_pid)
        clients = [httpx.Client(base_url=url, headers=headers, timeout=30.0) for _ in range(8)]
        try:
            for client in clients:
                assert client.post("/v1/recall", json={"query": "anything"}).status_code == 200
            split = _connections(readers, port) if len(readers) == 2 and victim not in readers else []
        finally:
            for client in clients:
                client.close()
        if split == [4, 4]:
            break
        assert time.monotonic() < deadline, f"the replacement never took its share: {readers} {split}"
        time.sleep(1.0)
