"""Congruence: any GraphStore must answer exactly like the reference SQLite store on identical data.

The contract classes in `graphctx.contracts.graph` check each promise on small hand-made graphs;
this differential run loads the canonical memory and code datasets into the store under test and
into the reference, then runs the same probes -- several hundred parameter combinations over every
template -- on both and compares the answers field by field. The catalogue fixes a total order for
every answer, so lists are compared in order. Only `created_at` and `updated_at` are ignored (stores
may stamp them); instants are compared in UTC and confidences to 9 decimals. Where an answer must
raise, the error types must match.

In pytest::

    from graphctx.contracts.congruence import GraphCongruenceContract

    class TestAcmeCongruence(GraphCongruenceContract):
        @pytest.fixture
        def graph_store(self):
            store = AcmeGraphStore(...)
            store.ensure_schema()
            yield store
            store.close()

Outside pytest (a script, a notebook, a CI step against a staging server)::

    from graphctx.contracts.congruence import compare_graph_stores, reference_graph_store

    differences = compare_graph_stores(reference_graph_store(tmp_dir), AcmeGraphStore(...), scratch_scope)
    print("\\n\\n".join(differences) or "congruent")

The reference is found through the `graphctx.graph_stores` entry point named "sqlite", so this
module never imports an adapter.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime
from itertools import product
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from graphctx import registry
from graphctx.contracts import datasets
from graphctx.contracts._markers import requires
from graphctx.contracts.graph import (
    AFTER_T0,
    CLEAR,
    DELETE,
    FACTS,
    FIND,
    FROM_ROOTS,
    GET,
    HASHES,
    INVALIDATE,
    NEIGHBOURHOOD,
    PATH,
    STATS,
    UPSERT,
    _GraphSubject,
    edge,
    ent,
    modified,
)
from graphctx.errors import GraphctxError
from graphctx.kernel import templates as t
from graphctx.kernel.ports import GraphStore
from graphctx.scope import Scope
from graphctx.settings import Settings

__all__ = [
    "GROUPS",
    "REFERENCE_BACKEND",
    "GraphCongruenceContract",
    "Probe",
    "compare_graph_stores",
    "probes",
    "reference_graph_store",
]

REFERENCE_BACKEND = "sqlite"
_STAMPS = frozenset({"created_at", "updated_at"})
_MAX_DIFF_LINES = 60


def reference_graph_store(data_dir: Path) -> GraphStore:
    """A fresh reference store in `data_dir` (created if missing), schema ensured."""
    store: GraphStore = registry.factory("graph", REFERENCE_BACKEND)(Settings(data_dir=data_dir))
    return store


# ---- probes -----------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Probe:
    """One template call, run on both stores."""

    template: t.Template[Any, Any]
    params: BaseModel

    def describe(self) -> str:
        shown = self.params.model_dump(mode="json", exclude_defaults=True)
        for key in ("entities", "facts"):
            if key in shown:
                shown[key] = [item.get("id") for item in shown[key]]
        text = json.dumps(shown, ensure_ascii=False, sort_keys=True)
        return f"{self.template} {text if len(text) <= 400 else text[:400] + '...'}"


def _p(template: t.Template[Any, Any], **params: Any) -> Probe:
    return Probe(template, template.params(**params))


_MEMORY_IDS = [e.id for e in datasets.memory_entities()]
_CODE_IDS = [e.id for e in datasets.code_entities()]
_ALL_IDS = _MEMORY_IDS + _CODE_IDS
_ROOT_SETS: list[tuple[str, ...]] = [
    *((i,) for i in _ALL_IDS),
    ("svc-checkout", "svc-pay"),
    ("m-add", "f-price"),
    ("missing", "t-add"),
    ("missing",),
    tuple(_MEMORY_IDS),
    tuple(_CODE_IDS),
]
_AS_OF: list[datetime | None] = [datasets.T0, AFTER_T0, datasets.T_CHANGE, datasets.T_NOW, None]
_DIRECTIONS = ("out", "in", "both")


def _dataset_load() -> list[Probe]:
    entities = datasets.memory_entities() + datasets.code_entities()
    facts = datasets.memory_facts() + datasets.code_facts()
    return [_p(t.ENTITY_UPSERT, entities=tuple(entities)), _p(t.FACT_UPSERT, facts=tuple(facts))]


def _get_probes() -> list[Probe]:
    out = [
        _p(t.ENTITY_GET, ids=tuple(_ALL_IDS)),
        _p(t.ENTITY_GET, ids=tuple(reversed(_ALL_IDS))),
        _p(t.ENTITY_GET, ids=("team-pay", "missing", "m-add", "team-pay", "repo", "svc-", "M-ADD")),
        _p(t.ENTITY_GET, ids=()),
    ]
    out += [_p(t.ENTITY_GET, ids=(i,)) for i in _ALL_IDS]
    return out + [_p(t.ENTITY_NAMES, ids=p.params.ids) for p in out]  # type: ignore[attr-defined]


def _find_probes() -> list[Probe]:
    entities = datasets.memory_entities() + datasets.code_entities()
    names = [e.name for e in entities]
    aliases = [a for e in entities for a in e.aliases]
    qualified = [e.qualified_name for e in entities if e.qualified_name]
    value_sets: list[tuple[str, ...]] = [
        *((n,) for n in names),
        *((n.upper(),) for n in names),
        *((a.swapcase(),) for a in aliases),
        tuple(names),
        tuple(aliases),
        tuple(a.upper() for a in aliases),
        tuple(_ALL_IDS),
        tuple(i.upper() for i in _ALL_IDS),
        tuple(qualified),
        tuple(q.lower() for q in qualified),
        ("cart", "Cart", "CART"),
        ("checkout", "checkout-api", "svc-checkout", "CHECKOUT"),
        ("redis", "redis-sessions", "db-redis", "shop.cart", "repo", "shop"),
        ("payments", "PAYMENTS TEAM", "pay", "payment"),
        ("no such value",),
    ]
    fields_sets: list[tuple[str, ...]] = [
        ("id", "qualified_name", "name", "alias"),
        ("name",),
        ("alias",),
        ("id", "qualified_name"),
        ("name", "alias"),
    ]
    out = [_p(t.ENTITY_FIND_EXACT, values=v, fields=f) for v, f in product(value_sets, fields_sets)]
    for limit in (1, 2, 3, 7):
        out.append(_p(t.ENTITY_FIND_EXACT, values=tuple(names + aliases + _ALL_IDS), limit=limit))
    return out


def _hash_probes() -> list[Probe]:
    afters = ("", "adr-12", "m", "m-add", "svc-checkout", "t-add", "zzz", "~")
    return [_p(t.ENTITY_HASHES, after=a, limit=n) for a, n in product(afters, (1, 3, 5, 1000))]


def _from_roots_probes() -> list[Probe]:
    out = [
        _p(t.FACTS_FROM_ROOTS, roots=r, direction=d, as_of=a)
        for r, d, a in product(_ROOT_SETS, _DIRECTIONS, _AS_OF)
    ]
    out += [
        _p(t.FACTS_FROM_ROOTS, roots=r, direction=d, include_invalid=True)
        for r, d in product(_ROOT_SETS, _DIRECTIONS)
    ]
    for predicates in (
        ("owned_by",),
        ("depends_on", "affected"),
        ("contains",),
        ("calls", "imports"),
        ("leads",),
    ):
        out.append(_p(t.FACTS_FROM_ROOTS, roots=tuple(_ALL_IDS), predicates=predicates, include_invalid=True))
        out.append(
            _p(t.FACTS_FROM_ROOTS, roots=("svc-checkout", "mod-cart"), predicates=predicates, as_of=AFTER_T0)
        )
    for limit in (1, 2, 3, 9):
        out.append(_p(t.FACTS_FROM_ROOTS, roots=tuple(_ALL_IDS), include_invalid=True, limit=limit))
        out.append(_p(t.FACTS_FROM_ROOTS, roots=("svc-checkout",), as_of=AFTER_T0, limit=limit))
    return out


def _neighbourhood_probes() -> list[Probe]:
    out = [
        _p(t.NEIGHBOURHOOD, roots=r, direction=d, depth=depth, as_of=a)
        for r, d, depth, a in product(_ROOT_SETS, _DIRECTIONS, (1, 2), (AFTER_T0, datasets.T_NOW))
    ]
    for roots in (("svc-checkout",), ("m-add",), ("mod-cart", "svc-pay"), tuple(_MEMORY_IDS)):
        for per_direction, limit in ((1, 50), (2, 50), (20, 1), (20, 2), (20, 3), (1, 2)):
            out.append(
                _p(
                    t.NEIGHBOURHOOD,
                    roots=roots,
                    depth=2,
                    per_direction_limit=per_direction,
                    limit=limit,
                    as_of=AFTER_T0,
                )
            )
        for edge_types in (("contains",), ("calls", "tested_by"), ("depends_on",), ("owned_by", "caused")):
            out.append(_p(t.NEIGHBOURHOOD, roots=roots, depth=2, edge_types=edge_types, as_of=datasets.T_NOW))
    return out


def _path_probes() -> list[Probe]:
    out = [
        _p(t.SHORTEST_PATH, source=s, target=g, direction=d, as_of=a)
        for s, g, d, a in product(_MEMORY_IDS, _MEMORY_IDS, _DIRECTIONS, (AFTER_T0, datasets.T_NOW))
    ]
    out += [
        _p(t.SHORTEST_PATH, source=s, target=g, direction=d)
        for s, g, d in product(_CODE_IDS, _CODE_IDS, _DIRECTIONS)
    ]
    for source, target in (
        ("svc-inv", "team-pay"),
        ("t-add", "repo"),
        ("adr-12", "team-com"),
        ("inc-1", "team-pay"),
    ):
        for max_depth in (1, 2, 3):
            out.append(
                _p(t.SHORTEST_PATH, source=source, target=target, max_depth=max_depth, as_of=datasets.T_NOW)
            )
        for edge_types in (("contains",), ("calls", "tested_by", "contains"), ("depends_on", "owned_by")):
            out.append(
                _p(t.SHORTEST_PATH, source=source, target=target, edge_types=edge_types, as_of=AFTER_T0)
            )
    out += [
        _p(t.SHORTEST_PATH, source="svc-checkout", target="m-add"),
        _p(t.SHORTEST_PATH, source="missing", target="m-add"),
        _p(t.SHORTEST_PATH, source="m-add", target="missing"),
    ]
    return out


def _write_probes() -> list[Probe]:
    """A sequence: writes of each kind, the reads they affect, then a clear."""
    memory = {e.id: e for e in datasets.memory_entities()}
    facts = datasets.memory_facts()
    replaced = next(f for f in facts if (f.subject_id, f.object_id) == ("svc-checkout", "svc-inv"))
    closing = next(f for f in facts if (f.subject_id, f.object_id) == ("svc-checkout", "svc-pay"))
    reads = [
        _p(t.SCOPE_STATS),
        _p(t.ENTITY_HASHES),
        _p(
            t.ENTITY_FIND_EXACT,
            values=("pgw", "payments-gw", "PAY-502-UPSTREAM", "svc-new", "inventory", "redis"),
        ),
        _p(t.ENTITY_GET, ids=(*_ALL_IDS, "svc-new")),
        _p(t.FACTS_FROM_ROOTS, roots=(*_ALL_IDS, "svc-new"), include_invalid=True),
        _p(t.FACTS_FROM_ROOTS, roots=(*_ALL_IDS, "svc-new"), as_of=datasets.T_NOW),
        _p(t.NEIGHBOURHOOD, roots=("svc-checkout", "svc-new"), depth=2, limit=200, as_of=datasets.T_NOW),
        _p(t.SHORTEST_PATH, source="svc-new", target="team-com", as_of=datasets.T_NOW),
    ]
    return [
        _p(
            t.ENTITY_UPSERT,
            entities=(
                modified(memory["svc-inv"], summary="Stock reservations and holds."),
                modified(memory["svc-pay"], aliases=("pgw", "payments-gw")),
                ent("svc-new", "new-service", type="service", aliases=("inventory",)),
                memory["team-pay"],
            ),
        ),
        _p(
            t.FACT_UPSERT,
            facts=(
                edge("svc-new", "svc-pay", "depends_on"),
                facts[0],
                replaced.model_copy(update={"confidence": 0.4, "source": "congruence"}),
            ),
        ),
        _p(
            t.FACT_UPSERT, facts=(edge("svc-new", "team-pay", "owned_by"), edge("svc-new", "missing", "uses"))
        ),
        *reads,
        _p(t.FACT_INVALIDATE, ids=(closing.id, "missing"), valid_to=datasets.T_NOW),
        _p(t.ENTITY_DELETE, ids=("db-redis", "missing", "db-redis")),
        *reads,
        _p(t.SCOPE_CLEAR),
        _p(t.SCOPE_CLEAR),
        _p(t.SCOPE_STATS),
        _p(t.ENTITY_HASHES),
    ]


_GROUPS = {
    "entity.get_by_ids": _get_probes,
    "entity.find_exact": _find_probes,
    "entity.hashes": _hash_probes,
    "fact.from_roots": _from_roots_probes,
    "graph.neighbourhood": _neighbourhood_probes,
    "graph.shortest_path": _path_probes,
    "scope.stats": lambda: [_p(t.SCOPE_STATS)],
    "writes": _write_probes,
}
GROUPS: tuple[str, ...] = tuple(_GROUPS)
"""Probe groups, in the order they run; "writes" changes the data and runs last."""


def probes(group: str) -> list[Probe]:
    """The probes of one group (see GROUPS)."""
    return _GROUPS[group]()


# ---- comparing --------------------------------------------------------------------------------


def _normal(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _normal(v) for k, v in value.items() if k not in _STAMPS}
    if isinstance(value, list | tuple):
        return [_normal(v) for v in value]
    if isinstance(value, datetime):
        moment = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        return moment.isoformat()
    if isinstance(value, float):
        return round(value, 9)
    return value


def _outcome(store: GraphStore, scope: Scope, probe: Probe) -> Any:
    """The answer as plain data, or the type of the error raised instead."""
    try:
        result = store.run(probe.template, scope, probe.params)
    except GraphctxError as exc:
        return {"raised": type(exc).__name__}
    except Exception as exc:  # an untyped error is itself a difference worth reporting
        return {"raised": f"{type(exc).__name__} (untyped): {str(exc)[:200]}"}
    if not isinstance(result, BaseModel):
        return {"returned": f"{type(result).__name__}, not a {probe.template.result.__name__}"}
    return {"result": _normal(result.model_dump())}


def _render(probe: Probe, expected: Any, actual: Any) -> str:
    def lines(value: Any) -> list[str]:
        return json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False, default=str).splitlines()

    diff = list(
        difflib.unified_diff(
            lines(expected), lines(actual), f"expected ({REFERENCE_BACKEND} reference)", "actual (candidate)",
            n=2, lineterm="",
        )
    )  # fmt: skip
    if len(diff) > _MAX_DIFF_LINES:
        diff = [*diff[:_MAX_DIFF_LINES], f"... {len(diff) - _MAX_DIFF_LINES} more diff lines"]
    return "\n".join([probe.describe(), *("  " + line for line in diff)])


def _compare(
    reference: GraphStore, candidate: GraphStore, scope: Scope, run: Iterable[Probe]
) -> Iterator[str]:
    for probe in run:
        expected = _outcome(reference, scope, probe)
        actual = _outcome(candidate, scope, probe)
        if expected != actual:
            yield _render(probe, expected, actual)


def compare_graph_stores(
    reference: GraphStore,
    candidate: GraphStore,
    scope: Scope,
    *,
    groups: Sequence[str] = GROUPS,
    load: bool = True,
) -> list[str]:
    """Load the memory and code datasets into both stores (unless `load` is False), run the probes of
    `groups` on both and return one readable difference per probe whose answers differ: the template
    and its parameters, then a unified diff of the expected (reference) and actual (candidate) answer.

    Probes of templates the candidate does not declare in `capabilities.templates` are left out.
    Both stores are written to in `scope` (the "writes" group also clears it): use a scratch scope
    that is empty in both. An empty list means the candidate is congruent with the reference.
    """
    unknown = [g for g in groups if g not in _GROUPS]
    if unknown:
        raise ValueError(f"unknown congruence group(s) {unknown}; choose from {list(GROUPS)}")
    declared = candidate.capabilities.templates
    selected = [p for g in GROUPS if g in groups for p in probes(g)]
    run = [*(_dataset_load() if load else ()), *selected]
    return list(_compare(reference, candidate, scope, (p for p in run if p.template.name in declared)))


# ---- the pytest mixin -------------------------------------------------------------------------


class GraphCongruenceContract(_GraphSubject):
    """The store under test answers every probe exactly like the reference SQLite store.

    Write the same `graph_store` fixture as for GraphStoreContract; the reference is created in a
    temporary directory through the `sqlite` entry point."""

    @pytest.fixture
    def reference_graph_store(self, tmp_path: Path) -> Iterator[GraphStore]:
        """A fresh reference store (SQLite, file-based) for this test."""
        store = reference_graph_store(tmp_path / "congruence-reference")
        yield store
        store.close()

    def _assert_congruent(
        self, reference: GraphStore, candidate: GraphStore, scope: Scope, group: str
    ) -> None:
        differences = compare_graph_stores(reference, candidate, scope, groups=(group,))
        shown = "\n\n".join(differences[:15])
        more = f"\n\n... and {len(differences) - 15} more" if len(differences) > 15 else ""
        assert not differences, (
            f"{len(differences)} answer(s) differ from the {REFERENCE_BACKEND} reference:\n\n{shown}{more}"
        )

    @requires(UPSERT, FACTS, GET)
    def test_get_by_ids_matches_reference(
        self, graph_store: GraphStore, reference_graph_store: GraphStore, scope: Scope
    ) -> None:
        """Hydration answers equal the reference's on the memory and code datasets."""
        self._assert_congruent(reference_graph_store, graph_store, scope, "entity.get_by_ids")

    @requires(UPSERT, FACTS, FIND)
    def test_find_exact_matches_reference(
        self, graph_store: GraphStore, reference_graph_store: GraphStore, scope: Scope
    ) -> None:
        """Exact lookups over every field, casing and limit equal the reference's."""
        self._assert_congruent(reference_graph_store, graph_store, scope, "entity.find_exact")

    @requires(UPSERT, FACTS, HASHES)
    def test_entity_hashes_match_reference(
        self, graph_store: GraphStore, reference_graph_store: GraphStore, scope: Scope
    ) -> None:
        """Hash pages (every `after` and page size) equal the reference's."""
        self._assert_congruent(reference_graph_store, graph_store, scope, "entity.hashes")

    @requires(UPSERT, FACTS, FROM_ROOTS)
    def test_facts_from_roots_match_reference(
        self, graph_store: GraphStore, reference_graph_store: GraphStore, scope: Scope
    ) -> None:
        """Facts from roots for every root, direction, as_of, predicate list and limit equal the reference."""
        self._assert_congruent(reference_graph_store, graph_store, scope, "fact.from_roots")

    @requires(UPSERT, FACTS, NEIGHBOURHOOD)
    def test_neighbourhood_matches_reference(
        self, graph_store: GraphStore, reference_graph_store: GraphStore, scope: Scope
    ) -> None:
        """Neighbourhoods, truncation and omitted counts included, equal the reference's."""
        self._assert_congruent(reference_graph_store, graph_store, scope, "graph.neighbourhood")

    @requires(UPSERT, FACTS, PATH)
    def test_shortest_path_matches_reference(
        self, graph_store: GraphStore, reference_graph_store: GraphStore, scope: Scope
    ) -> None:
        """Shortest paths between every pair, direction, as_of, depth and allowlist equal the reference's."""
        self._assert_congruent(reference_graph_store, graph_store, scope, "graph.shortest_path")

    @requires(UPSERT, FACTS, STATS)
    def test_scope_stats_match_reference(
        self, graph_store: GraphStore, reference_graph_store: GraphStore, scope: Scope
    ) -> None:
        """Scope statistics equal the reference's."""
        self._assert_congruent(reference_graph_store, graph_store, scope, "scope.stats")

    @requires(
        UPSERT, FACTS, GET, FIND, HASHES, FROM_ROOTS, NEIGHBOURHOOD, PATH, STATS, INVALIDATE, DELETE, CLEAR
    )
    def test_writes_match_reference(
        self, graph_store: GraphStore, reference_graph_store: GraphStore, scope: Scope
    ) -> None:
        """Write results (counts, errors) and the reads after them equal the reference's."""
        self._assert_congruent(reference_graph_store, graph_store, scope, "writes")
