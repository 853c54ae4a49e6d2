"""Memory that keeps its history and never half-applies, through every transport: Python, the CLI
(`--json`), HTTP (httpx against uvicorn) and MCP (the SDK client in memory).

- two on-call shifts of one person on one service and an owner change come back as separate facts
  with non-overlapping validity; the superseded one is in explain's history, not in a current recall;
- a batch with one bad record at the start, the middle or the end writes nothing, and the error
  names the record (line, index, field)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client
from typer.testing import CliRunner

from graphctx import registry
from graphctx.auth import Principal
from graphctx.cli import app as cli_app
from graphctx.errors import InputError, NotFound
from graphctx.kernel.ports import KeyStore
from graphctx.model import Fact, code_edge_id, legacy_fact_id
from graphctx.scope import Scope
from graphctx.service import ContextService
from graphctx.settings import Settings
from graphctx.transports.http import create_app
from graphctx.transports.mcp import build_mcp, fixed_authenticator
from tests.conftest import make_settings
from tests.transports.live import LiveServer

SCOPE = Scope("mem-tenant", "default")
PRINCIPAL = Principal("agent", "mem-tenant")
T_SHIFT1, T_SHIFT1_END = "2025-01-06T09:00:00Z", "2025-01-13T09:00:00Z"
T_SHIFT2 = "2025-02-03T09:00:00Z"
T_BOB = "2025-03-03T09:00:00Z"
T_FUTURE = "2026-06-01T00:00:00Z"
FIRST_WRITE = datetime(2025, 1, 1, tzinfo=UTC)
REORG = datetime(2025, 6, 1, tzinfo=UTC)  # the clock when the owner change is remembered
NOW = datetime(2025, 11, 29, 12, tzinfo=UTC)

ENTITIES = [
    {"id": "alice", "name": "Alice Chen", "type": "person"},
    {"id": "bob", "name": "Bob Stone", "type": "person"},
    {"id": "checkout", "name": "checkout-api", "type": "service", "summary": "Turns carts into orders."},
    {"id": "payments", "name": "Payments Team", "type": "team"},
    {"id": "commerce", "name": "Commerce Platform", "type": "team"},
    {"id": "eu-west", "name": "eu-west-1", "type": "region"},
]
FACTS = [
    {"subject_id": "checkout", "predicate": "owned_by", "object_id": "payments", "source": "wiki"},
    {"subject_id": "alice", "predicate": "on_call_for", "object_id": "checkout",
     "valid_from": T_SHIFT1, "valid_to": T_SHIFT1_END},
    {"subject_id": "alice", "predicate": "on_call_for", "object_id": "checkout", "valid_from": T_SHIFT2},
    {"subject_id": "checkout", "predicate": "located_in", "object_id": "eu-west", "valid_from": T_FUTURE},
]  # fmt: skip
LATER = [
    {"subject_id": "checkout", "predicate": "owned_by", "object_id": "commerce", "source": "reorg memo"},
    {"subject_id": "bob", "predicate": "on_call_for", "object_id": "checkout", "valid_from": T_BOB},
]


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def ts(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


# ---- one driver per transport: remember(entities, facts), explain(name, as_of), recall(q, as_of) ----


class Python:
    name = "python"

    def __init__(self, service: ContextService) -> None:
        self.service = service

    def remember(self, entities: list[dict[str, Any]], facts: list[dict[str, Any]]) -> dict[str, Any]:
        return self.service.remember(SCOPE, entities, facts)

    def op(self, op: str, **args: Any) -> dict[str, Any]:
        name = args.pop("name", None) or args.pop("query")
        if "as_of" in args and isinstance(args["as_of"], str):
            args["as_of"] = ts(args["as_of"])
        return getattr(self.service, op)(SCOPE, name, **args)


class Http:
    name = "http"

    def __init__(self, url: str, token: str) -> None:
        self.client = httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=60)

    def _post(self, op: str, body: dict[str, Any]) -> dict[str, Any]:
        r = self.client.post(f"/v1/{op}", json=body)
        data = r.json()
        if r.status_code != 200:
            raise _typed(data["error"])
        return data  # type: ignore[no-any-return]

    def remember(self, entities: list[dict[str, Any]], facts: list[dict[str, Any]]) -> dict[str, Any]:
        return self._post("remember", {"entities": entities, "facts": facts})

    def op(self, op: str, **args: Any) -> dict[str, Any]:
        return self._post(op, args)


class Mcp:
    name = "mcp"

    def __init__(self, service: ContextService) -> None:
        self.server = build_mcp(service, fixed_authenticator(PRINCIPAL))

    def _call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        async def go() -> tuple[bool, dict[str, Any]]:
            async with Client(self.server, mode="auto") as client:
                result = await client.call_tool(tool, arguments)
                data = result.structured_content
                assert isinstance(data, dict)
                return result.is_error, data

        failed, data = anyio.run(go)
        if failed:
            raise _typed(data["error"])
        return data

    def remember(self, entities: list[dict[str, Any]], facts: list[dict[str, Any]]) -> dict[str, Any]:
        return self._call("remember", {"entities": entities, "facts": facts})

    def op(self, op: str, **args: Any) -> dict[str, Any]:
        return self._call(op, args)


class Cli:
    name = "cli"

    def __init__(self, settings: Settings, tmp: Path, clock: Clock) -> None:
        self.env = {
            "GRAPHCTX_DATA_DIR": str(settings.data_dir),
            "GRAPHCTX_EMBEDDER": "hashing",
            "GRAPHCTX_TENANT_ID": SCOPE.tenant_id,
        }
        self.tmp, self.clock = tmp, clock

    def run(self, *args: str) -> tuple[int, dict[str, Any]]:
        result = CliRunner().invoke(cli_app, [*args, "--json"], env=self.env)
        assert result.stdout, (result.output, result.exception)
        return result.exit_code, json.loads(result.stdout)

    def remember(self, entities: list[dict[str, Any]], facts: list[dict[str, Any]]) -> dict[str, Any]:
        path = self.tmp / "load.jsonl"
        lines = [{"kind": "entity", **e} for e in entities] + [{"kind": "fact", **f} for f in facts]
        path.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
        code, data = self.run("remember", "--file", str(path))
        if code:
            raise _typed(data["error"])
        return data

    def op(self, op: str, **args: Any) -> dict[str, Any]:
        positional = args.pop("name", None) or args.pop("query")
        flags = [f"--{k.replace('_', '-')}={v}" for k, v in args.items() if k != "include_ids"]
        code, data = self.run(op, positional, *flags)
        if code:
            raise _typed(data["error"])
        return data


def _typed(error: dict[str, Any]) -> Exception:
    kind = NotFound if error["code"] == "not_found" else InputError
    exc = kind(error["message"], **error.get("details", {}))
    exc.code = error["code"]
    return exc


@dataclass
class World:
    settings: Settings
    clock: Clock
    driver: Any
    service: ContextService | None = None

    def status(self) -> dict[str, Any]:
        if self.service is not None:
            return self.service.status(SCOPE)
        with ContextService.open(self.settings, mode="read") as reader:  # beside the CLI's writers
            return reader.status(SCOPE)


@pytest.fixture(params=["python", "cli", "http", "mcp"])
def world(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    clock = Clock(FIRST_WRITE)
    settings = make_settings(tmp_path / "data")
    if request.param == "cli":
        # the CLI opens its own service per command, on the default clock
        monkeypatch.setattr("graphctx.service.utc_now", clock)
        ContextService.open(settings).close()
        yield World(settings, clock, Cli(settings, tmp_path, clock))
        return
    with ContextService.open(settings, clock=clock) as service:
        if request.param == "python":
            yield World(settings, clock, Python(service), service)
        elif request.param == "mcp":
            yield World(settings, clock, Mcp(service), service)
        else:
            keys: KeyStore = registry.factory("keys", settings.key_store_backend)(settings)
            token = keys.create(PRINCIPAL).token
            try:
                with LiveServer(create_app(service, keys, settings)) as server:
                    yield World(settings, clock, Http(server.url, token), service)
            finally:
                keys.close()


def facts_of(env: dict[str, Any], predicate: str) -> list[dict[str, Any]]:
    return [f for f in env["facts"] if f["predicate"] == predicate]


def test_shifts_and_owner_changes_keep_their_history(world: World) -> None:
    d = world.driver
    d.remember(ENTITIES, FACTS)
    world.clock.now = REORG
    report = d.remember([], LATER)
    assert report["facts"]["created"] == 2
    superseded = {(s["valid_to"]) for s in report["superseded"]}
    assert superseded == {"2025-03-03T09:00:00.000000Z", "2025-06-01T00:00:00.000000Z"}
    world.clock.now = NOW

    alice = d.op("explain", name="alice")
    shifts = sorted(facts_of(alice, "on_call_for"), key=lambda f: f["valid_from"])
    assert [(f["valid_from"], f.get("valid_to")) for f in shifts] == [
        ("2025-01-06T09:00:00Z", "2025-01-13T09:00:00Z"),  # the first shift, as given
        ("2025-02-03T09:00:00Z", "2025-03-03T09:00:00Z"),  # the second, ended when bob took over
    ]
    assert [f["status"] for f in shifts] == ["ended", "ended"]

    checkout = d.op("explain", name="checkout")
    owners = facts_of(checkout, "owned_by")
    assert [(f["object"], f["status"]) for f in owners] == [
        ("Commerce Platform", "current"),
        ("Payments Team", "ended"),
    ]
    current, old = owners
    assert old["valid_to"] == current["valid_from"] == "2025-06-01"  # no overlap, no gap
    assert old["superseded_by"] == "Commerce Platform"
    on_call = facts_of(checkout, "on_call_for")
    assert (on_call[0]["subject"], on_call[0]["status"]) == ("Bob Stone", "current")
    # on_call_for is single-valued per object: what replaced alice's shift is bob, not the service
    handed_over = [f for f in on_call if f["status"] == "ended" and "superseded_by" in f]
    assert handed_over and {f["superseded_by"] for f in handed_over} == {"Bob Stone"}
    assert facts_of(checkout, "located_in")[0]["status"] == "future"  # not "no longer valid"

    recall = d.op("recall", query="checkout-api")
    item = next(i for i in recall["items"] if i["name"] == "checkout-api")
    lines = {(f.get("subject", "·"), f["predicate"], f.get("object", "·")) for f in item.get("facts", [])}
    assert ("·", "owned_by", "Commerce Platform") in lines
    assert ("·", "owned_by", "Payments Team") not in lines  # superseded: history only
    assert not any(p == "located_in" for _, p, _ in lines)  # not valid yet

    before = d.op("recall", query="checkout-api", as_of="2025-02-10T00:00:00Z")
    item = next(i for i in before["items"] if i["name"] == "checkout-api")
    lines = {(f.get("subject", "·"), f["predicate"], f.get("object", "·")) for f in item.get("facts", [])}
    assert ("·", "owned_by", "Payments Team") in lines
    assert ("Alice Chen", "on_call_for", "·") in lines
    assert ("·", "owned_by", "Commerce Platform") not in lines


def test_running_the_same_load_again_duplicates_nothing(world: World) -> None:
    d = world.driver
    d.remember(ENTITIES, FACTS)
    world.clock.now = REORG
    d.remember([], LATER)
    world.clock.now = NOW
    before = d.op("explain", name="checkout")
    again = d.remember(ENTITIES, FACTS + LATER)
    assert again["entities"]["created"] == again["facts"]["created"] == 0
    assert again["facts"]["updated"] == 0  # supersession and stamps are kept, not undone
    assert again["superseded"] == []
    after = d.op("explain", name="checkout")
    assert after["facts"] == before["facts"]


BAD = {"subject_id": "checkout", "predicate": "is_friends_with", "object_id": "alice"}


@pytest.mark.parametrize("where", ["start", "middle", "end"])
def test_one_bad_record_writes_nothing_and_is_named(world: World, where: str) -> None:
    d = world.driver
    facts = list(FACTS)
    at = {"start": 0, "middle": 2, "end": len(facts)}[where]
    facts.insert(at, BAD)
    with pytest.raises(InputError) as info:
        d.remember(ENTITIES, facts)
    message = str(info.value)
    if d.name == "cli":
        assert f"line {len(ENTITIES) + at + 1}" in message
    else:
        assert f"facts[{at}]" in message
    assert "predicate" in message and "allowlist" in message
    stats = world.status()
    assert stats["graph"]["entities"] == stats["graph"]["facts"] == 0
    assert stats["lexical_docs"] == stats["vectors"] == 0


@pytest.mark.parametrize("where", ["start", "end"])
def test_a_fact_naming_a_missing_entity_writes_nothing(world: World, where: str) -> None:
    d = world.driver
    dangling = {"subject_id": "checkout", "predicate": "depends_on", "object_id": "no-such-service"}
    facts = [dangling, *FACTS] if where == "start" else [*FACTS, dangling]
    with pytest.raises(NotFound) as info:
        d.remember(ENTITIES, facts)
    assert "no-such-service" in str(info.value) and "object_id" in str(info.value)
    assert world.status()["graph"]["entities"] == 0


def test_an_oversized_summary_names_the_record_the_field_and_the_bound(world: World) -> None:
    d = world.driver
    entities = [*ENTITIES[:3], {"id": "huge", "name": "huge", "summary": "x" * 5000}, *ENTITIES[3:]]
    with pytest.raises(InputError) as info:
        d.remember(entities, [])
    message = str(info.value)
    assert ("line 4" if d.name == "cli" else "entities[3]") in message
    assert "summary" in message and "4096" in message
    assert world.status()["graph"]["entities"] == 0


def _fact(record: dict[str, Any]) -> Fact:
    return Fact.model_validate(record)


@pytest.mark.parametrize("case", ["other relation", "other start", "code edge of other object"])
def test_a_derived_id_naming_other_content_is_refused_and_writes_nothing(world: World, case: str) -> None:
    """An explicit id of the derived form must name its own fact: another relation's id (which would
    make two edges of one fact id), a start changed under the id, or a code-edge id of another object
    are refused before anything is written, whatever the transport."""
    owner, shift1, located = _fact(FACTS[0]), _fact(FACTS[1]), _fact(FACTS[3])
    forged = {
        "other relation": {**FACTS[3], "id": owner.id},
        "other start": {**FACTS[1], "id": shift1.id, "valid_from": "2025-01-05T09:00:00Z"},
        "code edge of other object": {**FACTS[0], "id": code_edge_id("checkout", "owned_by", "commerce")},
    }[case]
    assert located.id != owner.id
    with pytest.raises(InputError) as info:
        world.driver.remember(ENTITIES, [*FACTS, forged])
    message = str(info.value)
    assert "derived" in message and "invalidate it and add a new one" in message
    assert world.status()["graph"]["entities"] == world.status()["graph"]["facts"] == 0


def test_a_fact_under_any_of_its_own_derived_ids_is_accepted(world: World) -> None:
    """Its current id, the legacy id of a fact with a start and the code indexer's edge id are its own:
    written once, and remembered again unchanged."""
    d = world.driver
    shift = _fact(FACTS[2])
    own = [
        {**FACTS[0], "id": _fact(FACTS[0]).id},
        {**FACTS[2], "id": legacy_fact_id(shift)},
        {**FACTS[3], "id": code_edge_id("checkout", "located_in", "eu-west")},
    ]
    d.remember(ENTITIES, own)
    assert world.status()["graph"]["facts"] == 3
    d.remember(ENTITIES, own)
    assert world.status()["graph"]["facts"] == 3
