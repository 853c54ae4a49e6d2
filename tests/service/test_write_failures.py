"""A graph that fails part-way through a write, on every graph backend: SQLite, and (when their URLs
are set, as in CI) Gremlin Server's TinkerGraph and HugeGraph, neither of which is transactional.

The failing store applies HALF of a fact batch and then raises, as a server that dies mid-request
does. The call must fail (never reported done), say it will be completed, and the next write must
complete it before anything else: then graph, lexical and vector agree."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from graphctx.errors import BackendUnavailable, InputError, WriteIncomplete
from graphctx.kernel import templates as t
from graphctx.kernel.reads import facts_of, stored_hashes
from graphctx.scope import Scope
from graphctx.service import ContextService
from tests.conftest import make_settings

REQUIRED = os.environ.get("GRAPHCTX_REQUIRE_SERVERS") == "1"


def _backends() -> list[Any]:
    out: list[Any] = ["sqlite"]
    for name, env in (("gremlin", "GRAPHCTX_TEST_GREMLIN_URL"), ("hugegraph", "GRAPHCTX_TEST_HUGEGRAPH_URL")):
        if os.environ.get(env) or REQUIRED:
            out.append(name)
        else:
            out.append(pytest.param(name, marks=pytest.mark.skip(reason=f"{env} is not set (no server)")))
    return out


@pytest.fixture(params=_backends())
def service(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    backend = request.param
    if backend == "gremlin":
        monkeypatch.setenv("GRAPHCTX_GREMLIN_URL", os.environ.get("GRAPHCTX_TEST_GREMLIN_URL", ""))
    if backend == "hugegraph":
        monkeypatch.setenv("GRAPHCTX_HUGEGRAPH_URL", os.environ.get("GRAPHCTX_TEST_HUGEGRAPH_URL", ""))
        monkeypatch.setenv(
            "GRAPHCTX_HUGEGRAPH_GREMLIN_URL", os.environ.get("GRAPHCTX_TEST_HUGEGRAPH_GREMLIN_URL", "")
        )
    settings = make_settings(tmp_path / "data", graph_backend=backend)
    svc = ContextService.open(settings)
    scope = Scope(f"wf-{uuid.uuid4().hex[:12]}")
    try:
        yield svc, scope
    finally:
        svc.stores.graph.run(t.SCOPE_CLEAR, scope, t.NoParams())
        svc.close()


class HalfThenFail:
    """Wraps graph.run: the `nth` fact.upsert writes only the first half of its facts, then raises."""

    def __init__(self, run: Any, nth: int = 1) -> None:
        self.run, self.nth, self.seen, self.armed = run, nth, 0, True

    def __call__(self, template: Any, scope: Scope, params: Any) -> Any:
        if self.armed and template is t.FACT_UPSERT:
            self.seen += 1
            if self.seen == self.nth:
                half = params.facts[: len(params.facts) // 2]
                self.run(template, scope, t.FactUpsertParams(facts=half))
                raise BackendUnavailable("the graph server went away mid-request (injected)")
        return self.run(template, scope, params)


ENTITIES = [{"id": f"e{i}", "name": f"entity-{i}", "summary": f"number {i}"} for i in range(10)]
FACTS = [
    {"subject_id": f"e{i}", "predicate": "depends_on", "object_id": f"e{(i + 1) % 10}"} for i in range(10)
]


def consistent(svc: ContextService, scope: Scope) -> dict[str, str]:
    graph = {h.id: h.content_hash for h in stored_hashes(svc.stores.graph, scope)}
    assert svc.stores.lexical.hashes(scope) == graph
    assert svc.stores.vector is not None and svc.stores.vector.hashes(scope) == graph
    return graph


def test_a_write_that_fails_part_way_is_never_reported_done_and_is_completed_next(service: Any) -> None:
    svc, scope = service
    real = svc.stores.graph.run
    svc.stores.graph.run = HalfThenFail(real)
    with pytest.raises(WriteIncomplete) as info:
        svc.remember(scope, ENTITIES, FACTS)
    assert "completes it" in info.value.message and info.value.details["recorded"] is True
    partial = facts_of(svc.stores.graph, scope, [f"e{i}" for i in range(10)], ["depends_on"], "out")
    assert 0 < len(partial) < len(FACTS)  # what a non-transactional server can be left with
    assert svc.stores.journal.count_pending() == 1

    svc.stores.graph.run = real  # the server is back
    report = svc.remember(scope, [{"id": "later", "name": "later"}])
    assert report["entities"]["created"] == 1
    svc.flush()  # the later write's own entry is completed by its index flush
    assert svc.stores.journal.count_pending() == 0
    done = facts_of(svc.stores.graph, scope, [f"e{i}" for i in range(10)], ["depends_on"], "out")
    assert len(done) == len(FACTS)  # the first call's plan, completed before the second call
    assert len(consistent(svc, scope)) == len(ENTITIES) + 1


def test_while_the_graph_cannot_take_the_journaled_write_nothing_else_is_written(service: Any) -> None:
    svc, scope = service
    real = svc.stores.graph.run
    failing = HalfThenFail(real)
    svc.stores.graph.run = failing
    with pytest.raises(WriteIncomplete):
        svc.remember(scope, ENTITIES, FACTS)
    failing.seen, failing.nth = 0, 1  # still failing on the replay
    with pytest.raises(WriteIncomplete, match="earlier write is still incomplete") as info:
        svc.remember(scope, [{"id": "later", "name": "later"}])
    # over the network the caller is told this one was not recorded (send it again), not "completed later"
    assert info.value.details["recorded"] is False
    assert "not recorded" in info.value.to_dict()["message"]
    svc.stores.graph.run = real
    assert "later" not in {h.id for h in stored_hashes(svc.stores.graph, scope)}
    assert svc.recover()["writes_completed"] == 1
    assert len(consistent(svc, scope)) == len(ENTITIES)


def test_a_refused_batch_leaves_nothing_journaled(service: Any) -> None:
    svc, scope = service
    with pytest.raises(InputError):
        svc.remember(scope, ENTITIES, [*FACTS, {"subject_id": "e1", "predicate": "likes", "object_id": "e2"}])
    assert svc.stores.journal.count_pending() == 0
    assert consistent(svc, scope) == {}


# a fact of a version before an id of the derived form had to be the fact's own
REFUSED_NOW = {"id": "f_" + "0" * 32, "subject_id": "e1", "predicate": "depends_on", "object_id": "e2"}


@pytest.mark.parametrize(
    "plan",
    [
        pytest.param({"delete_ids": ["e1"], "added_later": True}, id="a-field-of-another-version"),
        pytest.param({"facts": [REFUSED_NOW]}, id="a-fact-id-this-version-refuses"),
        pytest.param("{not json", id="damaged"),
    ],
)
def test_a_journaled_plan_this_version_cannot_read_is_abandoned_not_wedging_the_store(
    service: Any, plan: Any
) -> None:
    svc, scope = service
    svc.remember(scope, ENTITIES[:3])
    # as a crash leaves it: the plan was acknowledged into the graph, its index update never made
    svc.stores.lexical.delete(scope, ["e1"])
    svc.stores.journal.record_write(scope, plan if isinstance(plan, str) else json.dumps(plan))

    report = svc.remember(scope, [{"id": "later", "name": "later"}])  # was an untyped crash, every time

    assert report["entities"]["created"] == 1
    recovered = svc.recover()
    assert recovered["writes_abandoned"] == [] and svc.stores.journal.count_pending() == 0
    svc.flush()
    assert set(consistent(svc, scope)) == {"e0", "e1", "e2", "later"}  # e1 indexed again from the graph


def test_an_abandoned_plan_is_reported_by_reconcile(service: Any) -> None:
    svc, scope = service
    svc.stores.journal.record_write(scope, json.dumps({"entities": [], "added_later": 1}))
    report = svc.recover()
    [abandoned] = report["writes_abandoned"]
    assert "not readable by this version" in abandoned and "added_later" in abandoned
    assert svc.stores.journal.count_pending() == 0
