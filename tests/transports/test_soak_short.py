"""The short versions of bench/soak.py and bench/faults.py that run with the suite: `graphctx serve`
under concurrent writers and readers, then every acknowledged write checked in the graph, the lexical
and the vector index; and a kill -9 of the served writer under load, after which the next open for
writing (the journal replay) leaves nothing acknowledged missing. Bounded by counts, not by time."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from graphctx.kernel.reads import batches
from graphctx.kernel.templates import ENTITY_GET, EntityGetParams
from graphctx.scope import Scope
from graphctx.service import ContextService
from graphctx.settings import Settings
from tests.transports.live import free_port
from tests.transports.test_serve import _create_key, _wait_healthy, serving

pytestmark = pytest.mark.slow

WRITERS, READERS = 3, 3
WRITES, READS = 25, 30  # per client


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GRAPHCTX_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("GRAPHCTX_EMBEDDER", "hashing")
    return tmp_path


class Load:
    def __init__(self, url: str, token: str) -> None:
        self.url, self.token = url, token
        self.lock = threading.Lock()
        self.acked: list[str] = []
        self.errors: list[str] = []
        self.stop = threading.Event()

    def client(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {self.token}"}, timeout=60)

    def write(self, w: int, count: int, check_reads: bool) -> None:
        with self.client() as http:
            for n in range(count):
                if self.stop.is_set():
                    return
                eid = f"soak-{w}-{n}"
                body = {
                    "entities": [{"id": eid, "type": "note", "name": f"soak note {w} {n}",
                                  "summary": f"soakmark{w}x{n} written under load"}],
                    "facts": [{"subject_id": eid, "predicate": "relates_to", "object_id": "soak-root"}],
                }  # fmt: skip
                try:
                    r = http.post("/v1/remember", json=body)
                except httpx.HTTPError as exc:
                    if not self.stop.is_set():
                        self.error(f"remember {type(exc).__name__}")
                    return
                if r.status_code != 200:
                    if not self.stop.is_set():
                        self.error(f"remember HTTP {r.status_code}: {r.text[:200]}")
                    continue
                with self.lock:
                    self.acked.append(eid)
                if check_reads:  # read-after-write over HTTP, the lexical leg included
                    found = http.post("/v1/recall", json={"query": f"soakmark{w}x{n}"}).json()
                    legs = [
                        it["match"] for it in found.get("items", []) if it["name"] == f"soak note {w} {n}"
                    ]
                    if not legs or "bm25" not in legs[0]:
                        self.error(f"{eid} not found by the lexical leg right after its acknowledgement")

    def read(self, r: int, count: int) -> None:
        queries = ["soak root", "written under load", "soak note 1 2", "relates"]
        with self.client() as http:
            for n in range(count):
                if self.stop.is_set():
                    return
                op, body = (
                    ("explain", {"name": "soak-root"})
                    if n % 3 == 0
                    else ("recall", {"query": queries[n % 4]})
                )
                try:
                    resp = http.post(f"/v1/{op}", json=body)
                except httpx.HTTPError as exc:
                    if not self.stop.is_set():
                        self.error(f"{op} {type(exc).__name__}")
                    return
                if resp.status_code not in (200, 409) and not self.stop.is_set():
                    self.error(f"{op} HTTP {resp.status_code}: {resp.text[:200]}")

    def error(self, what: str) -> None:
        with self.lock:
            self.errors.append(what)

    def run(self, writes: int, reads: int, check_reads: bool) -> list[threading.Thread]:
        threads = [threading.Thread(target=self.write, args=(w, writes, check_reads)) for w in range(WRITERS)]
        threads += [threading.Thread(target=self.read, args=(r, reads)) for r in range(READERS)]
        for t in threads:
            t.start()
        return threads


def _seed(url: str, token: str) -> Scope:
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60) as http:
        r = http.post(
            "/v1/remember", json={"entities": [{"id": "soak-root", "type": "note", "name": "soak root"}]}
        )
        assert r.status_code == 200, r.text
        scope = http.post("/v1/status", json={}).json()["scope"]
    return Scope(scope["tenant_id"], scope["namespace"], scope.get("graph_id", ""))


def _missing(scope: Scope, acked: list[str]) -> dict[str, list[str]]:
    """Acknowledged writes absent from each store, after an open for writing (which replays the
    journal) with the server gone."""
    with ContextService.open(Settings()) as service:
        in_graph: set[str] = set()
        for ids in batches(acked, 1000):
            found = service.stores.graph.run(ENTITY_GET, scope, EntityGetParams(ids=tuple(ids)))
            in_graph.update(e.id for e in found.entities)
        lexical = set(service.stores.lexical.hashes(scope))
        assert service.stores.vector is not None
        vector = set(service.stores.vector.hashes(scope))
        service.flush()
        assert service.stores.journal.count_pending() == 0
    return {name: sorted(set(acked) - held) for name, held in (("graph", in_graph), ("lexical", lexical),
                                                               ("vector", vector))}  # fmt: skip


def _children(pid: int) -> list[int]:
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except FileNotFoundError:  # the thread ended between the listing and the read
            continue
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_short_soak_answers_everything_and_loses_no_write(env: Path) -> None:
    token = _create_key("soak")
    with serving() as (url, _proc):
        scope = _seed(url, token)
        load = Load(url, token)
        for t in load.run(WRITES, READS, check_reads=True):
            t.join(300)
    assert load.errors == []
    assert len(load.acked) == WRITERS * WRITES
    assert _missing(scope, load.acked) == {"graph": [], "lexical": [], "vector": []}


def test_kill_9_of_the_served_writer_under_load_loses_no_acknowledged_write(env: Path) -> None:
    token = _create_key("soak")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    proc = subprocess.Popen(
        [sys.executable, "-m", "graphctx.cli", "serve", "--port", str(port), "--log-level", "warning"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=dict(os.environ),
    )
    try:
        assert _wait_healthy(url, proc).status_code == 200
        scope = _seed(url, token)
        load = Load(url, token)
        threads = load.run(10**6, 10**6, check_reads=False)  # until the kill
        for _ in range(2400):  # a bound against a hang, not a timing
            if len(load.acked) >= 40:
                break
            assert not load.errors, load.errors
            assert all(t.is_alive() for t in threads[:WRITERS]), "a writer stopped before the kill"
            load.stop.wait(0.05)
        readers = _children(proc.pid)  # serve --workers: its reader processes
        load.stop.set()  # what fails from here on is the kill's doing
        os.kill(proc.pid, signal.SIGKILL)  # acknowledged writes are in the graph, maybe not on disk
        proc.wait(30)
        for t in threads:
            t.join(60)
        for _ in range(600):  # a bound against a hang, not a timing
            if not any(_alive(pid) for pid in readers):
                break
            time.sleep(0.05)
        orphans = [pid for pid in readers if _alive(pid)]
        for pid in orphans:
            os.kill(pid, signal.SIGKILL)
        assert orphans == [], "reader processes outlived their killed writer"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(30)
    assert proc.returncode == -signal.SIGKILL
    assert load.errors == []
    acked: list[Any] = list(load.acked)
    assert len(acked) >= 40
    assert _missing(scope, acked) == {"graph": [], "lexical": [], "vector": []}
