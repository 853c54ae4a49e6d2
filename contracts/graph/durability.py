"""close() and reopen: a closed store refuses work; a durable store keeps its data."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from graphctx.contracts import datasets
from graphctx.contracts._base import has_capability
from graphctx.contracts._markers import contract_skip, requires
from graphctx.contracts.graph._common import (
    DELETE,
    FACTS,
    FIND,
    FROM_ROOTS,
    GET,
    HASHES,
    INVALIDATE,
    STATS,
    UPSERT,
    _GraphSubject,
    all_hashes,
    delete_entities,
    ent,
    entity_view,
    expected_entity,
    expected_fact,
    expected_from_roots,
    fact_view,
    find_exact,
    from_roots,
    get_entities,
    ids,
    invalidate,
    load,
    memory,
    modified,
    stats,
    upsert_entities,
)
from graphctx.errors import BackendError
from graphctx.kernel.ports import GraphStore
from graphctx.scope import Scope

# ---- close and reopen -------------------------------------------------------------------------


class DurabilityTests(_GraphSubject):
    """close(): a closed store refuses work; a durable store keeps what it was given across a reopen.

    Troubleshooting: `run()` after `close()` must raise `BackendUnavailable` (or another
    `BackendError`), never answer from a stale handle or reconnect silently, and `close()` must be
    safe to call twice (the fixture closes the store again). For the reopen test, provide the
    `reopen_graph_store` hook (open the same location again) or, for an in-memory store, declare
    `durable=False`. Since 1.1.0.
    """

    def _reopener(self, request: pytest.FixtureRequest) -> Callable[[GraphStore], GraphStore]:
        """The `reopen_graph_store` hook; skips (in-memory store) or fails (durable store) without it."""
        reopen: Callable[[GraphStore], GraphStore] | None
        try:
            reopen = request.getfixturevalue("reopen_graph_store")
        except NotImplementedError:  # the contract's default: no hook
            reopen = None
        if reopen is None:
            if not has_capability(self.subject_capabilities(request), "durable"):
                contract_skip(
                    request.node,
                    "adapter does not declare capability durable and provides no `reopen_graph_store` hook",
                    flags=("durable",),
                )
            pytest.fail(
                f"{type(self).__name__}: the store declares capabilities.durable=True (the default) but "
                "the test class provides no `reopen_graph_store` fixture. Add one returning a function "
                "that opens a new store on the same location, e.g.\n\n"
                "    @pytest.fixture\n"
                "    def reopen_graph_store(self, tmp_path):\n"
                "        return lambda store: AcmeGraphStore(tmp_path / 'graph')\n\n"
                "or declare durable=False if nothing survives close().",
                pytrace=False,
            )
        return reopen

    @requires(UPSERT, GET)
    def test_close_then_run_raises_backend_error(self, graph_store: GraphStore, scope: Scope) -> None:
        """After close(), reads and writes raise BackendUnavailable (or another BackendError)."""
        upsert_entities(graph_store, scope, [ent("a")])
        graph_store.close()
        with pytest.raises(BackendError):
            get_entities(graph_store, scope, ["a"])
        with pytest.raises(BackendError):
            upsert_entities(graph_store, scope, [ent("b")])

    @requires(UPSERT, FACTS, GET, HASHES, FROM_ROOTS)
    def test_close_then_reopen_keeps_data(
        self, graph_store: GraphStore, scope: Scope, request: pytest.FixtureRequest
    ) -> None:
        """Entities and facts written before close() are all there, unchanged, after a reopen on the same
        location (durable stores; needs the `reopen_graph_store` hook)."""
        reopen = self._reopener(request)
        entities, facts = memory()
        load(graph_store, scope, entities, facts)
        graph_store.close()
        reopened = reopen(graph_store)
        try:
            got = get_entities(reopened, scope, ids(entities))
            assert [entity_view(e) for e in got] == [expected_entity(e, scope) for e in entities]
            want = expected_from_roots(facts, ids(entities), include_invalid=True)
            got_facts = from_roots(reopened, scope, ids(entities), include_invalid=True).facts
            assert [fact_view(f) for f in got_facts] == [expected_fact(f, scope) for f in want]
            assert all_hashes(reopened, scope) == sorted((e.id, e.content_hash) for e in entities)
        finally:
            reopened.close()

    @requires(UPSERT, FACTS, GET, HASHES, FROM_ROOTS, FIND, DELETE, INVALIDATE, STATS)
    def test_close_then_reopen_keeps_every_kind_of_write(
        self, graph_store: GraphStore, scope: Scope, request: pytest.FixtureRequest
    ) -> None:
        """Upserts, replaces that change aliases, invalidations, deletes and a re-created id all survive
        a reopen: every read answers as it did before close() (since 1.2.0)."""
        reopen = self._reopener(request)
        entities, facts = memory()
        load(graph_store, scope, entities, facts)
        renamed = modified(entities[1], aliases=("new-alias",), summary="replaced")
        upsert_entities(graph_store, scope, [renamed])
        open_fact = next(f for f in facts if f.valid_to is None and f.object_id is not None)
        invalidate(graph_store, scope, [open_fact.id], datasets.T_CHANGE)
        delete_entities(graph_store, scope, ["db-redis", "inc-1"])
        upsert_entities(graph_store, scope, [ent("inc-1", "re-created incident")])
        all_ids = [*ids(entities), "inc-1"]

        def snapshot(store: GraphStore) -> list[Any]:
            return [
                [entity_view(e) for e in get_entities(store, scope, all_ids)],
                [
                    [(m.entity.id, m.field) for m in find_exact(store, scope, [probe])]
                    for probe in (
                        "pgw",
                        "PAY-502-UPSTREAM",
                        "new-alias",
                        "redis",
                        "checkout",
                        "payment-gateway",
                    )
                ],
                [fact_view(f) for f in from_roots(store, scope, all_ids, include_invalid=True).facts],
                all_hashes(store, scope),
                stats(store, scope).model_dump(exclude={"valid_facts"}),
            ]

        before = snapshot(graph_store)
        assert before[1][:4] == [[], [], [("svc-pay", "alias")], []]
        graph_store.close()
        reopened = reopen(graph_store)
        try:
            assert snapshot(reopened) == before
        finally:
            reopened.close()
