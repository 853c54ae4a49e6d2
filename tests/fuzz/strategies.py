"""Hypothesis strategies for hostile request bodies: every field of an operation's request model
filled with values of the right shape, of the wrong shape, at and past every bound, and text that
breaks Unicode (lone surrogates, NUL, byte order marks), plus keys the model does not know."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from graphctx import api, bounds

NASTY_TEXT = [
    "",
    " ",
    "\x00",
    "a\x00b",
    "\ud800",
    "x\udfffy",
    "\ufeffcheckout-api",
    "checkout-api",
    "svc-1",
    "Commerce",
    "PAY-502-UPSTREAM",
    "shop.cart.Cart.total",
    "a/b.py::f",
    "' OR 1=1 --",
    "g.V().drop()",
    "tenant_id:other",
    "\u202etxet",
    "🙂" * 10,
    "x" * (bounds.NAME_BYTES + 1),
    "y" * (bounds.QUERY_BYTES - 1),
    "z" * (bounds.QUERY_BYTES + 1),
    " ".join(["why does the checkout service keep failing under load"] * 40),  # long prose, ~2 KiB
    "2025-01-01T00:00:00Z",
    "9999-12-31T23:59:59-23:59",
    "0001-01-01T00:00:00+23:59",
]
NASTY_INTS = [0, -1, 1, 2, 3, 255, 256, 20_000, 20_001, 2**31, 2**63, -(2**63) - 1, 10**30]
NASTY_FLOATS = [0.0, -0.0, 0.5, 1.0, 1.5, float("nan"), float("inf"), float("-inf"), 1e308]

texts = st.one_of(
    st.sampled_from(NASTY_TEXT),
    st.text(max_size=40),
    st.text(st.characters(codec=None, exclude_categories=()), max_size=20),  # surrogates included
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from(NASTY_INTS),
    st.integers(),
    st.sampled_from(NASTY_FLOATS),
    texts,
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(texts, st.sampled_from(["id", "name"])), inner, max_size=4),
    ),
    max_leaves=12,
)

ENTITY_FIELDS = {
    "id": texts,
    "name": texts,
    "type": st.one_of(st.sampled_from(["service", "team", "Bad Type", "a" * 65]), texts),
    "aliases": st.one_of(
        st.lists(texts, max_size=4), st.lists(st.just("a"), min_size=65, max_size=65), json_values
    ),
    "summary": st.one_of(texts, st.just("s" * (bounds.SUMMARY_BYTES + 1))),
    "source": st.one_of(texts, st.just("w" * (bounds.SELECTOR_BYTES + 1))),
    "qualified_name": texts,
    "path": texts,
    "line_start": st.one_of(st.sampled_from(NASTY_INTS), json_values),
    "line_end": st.sampled_from(NASTY_INTS),
    "signature": texts,
    "created_at": texts,
    "updated_at": texts,
    "tenant_id": texts,
    "namespace": texts,
}
FACT_FIELDS = {
    "subject_id": st.one_of(st.sampled_from(["svc-1", "team-1", "nobody"]), texts),
    "predicate": st.one_of(st.sampled_from(["owned_by", "depends_on", "note", "DROP"]), texts),
    "object_id": st.one_of(st.sampled_from(["svc-1", "team-1", "nobody"]), texts),
    "value": st.one_of(texts, st.just("v" * (bounds.FACT_VALUE_BYTES + 1))),
    "source": st.one_of(texts, st.just("w" * (bounds.SELECTOR_BYTES + 1))),
    "confidence": st.one_of(st.sampled_from(NASTY_FLOATS), json_values),
    "valid_from": texts,
    "valid_to": texts,
    "id": texts,
}


VALID_ENTITY = {"id": "fz-1", "name": "fuzzed entity", "summary": "made by the fuzz suite"}
VALID_FACT = {"subject_id": "svc-1", "predicate": "depends_on", "object_id": "team-1"}
VALID_BODY: dict[str, dict[str, Any]] = {
    "recall": {"query": "checkout-api"},
    "search": {"query": "checkout"},
    "explain": {"name": "checkout-api"},
    "neighbourhood": {"name": "checkout-api"},
    "path": {"source": "checkout-api", "target": "Commerce"},
    "symbol": {"name": "checkout-api"},
    "callers": {"name": "checkout-api"},
    "callees": {"name": "checkout-api"},
    "impact": {"files": ["a.py"]},
    "remember": {"entities": [VALID_ENTITY], "facts": [VALID_FACT]},
    "forget": {"fact_ids": ["f_nothing"]},
}


def _mutated(base: dict[str, Any], fields: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """`base` (valid) with one to three fields replaced by hostile values: what reaches the stores."""
    names = sorted(fields)
    return st.lists(st.sampled_from(names), min_size=1, max_size=3, unique=True).flatmap(
        lambda picked: st.fixed_dictionaries({n: fields[n] for n in picked}).map(lambda d: {**base, **d})
    )


def _record(fields: dict[str, st.SearchStrategy[Any]], base: dict[str, Any]) -> st.SearchStrategy[Any]:
    known = st.fixed_dictionaries({}, optional={k: st.one_of(v, json_values) for k, v in fields.items()})
    return st.one_of(
        _mutated(base, fields), _mutated(base, fields), known, known.map(lambda d: {**d, "x": 1})
    )


def _field(name: str) -> st.SearchStrategy[Any]:
    specific: dict[str, st.SearchStrategy[Any]] = {
        "query": texts,
        "name": texts,
        "source": texts,
        "target": texts,
        "max_tokens": st.sampled_from(NASTY_INTS),
        "depth": st.sampled_from(NASTY_INTS),
        "max_depth": st.sampled_from(NASTY_INTS),
        "limit": st.sampled_from(NASTY_INTS),
        "direction": st.sampled_from(["in", "out", "both", "sideways"]),
        "edge_types": st.lists(st.one_of(st.sampled_from(["owned_by", "calls"]), texts), max_size=20),
        "as_of": texts,
        "include_ids": st.booleans(),
        "include_history": st.booleans(),
        "tenant_id": st.one_of(st.just("fuzz"), texts),
        "namespace": st.sampled_from(["default", "other", "elsewhere", "\ud800"]),
        "graph_id": st.one_of(st.just(""), texts),
        "entities": st.lists(_record(ENTITY_FIELDS, VALID_ENTITY), max_size=3),
        "facts": st.lists(_record(FACT_FIELDS, VALID_FACT), max_size=3),
        "entity_ids": st.lists(texts, max_size=3),
        "fact_ids": st.lists(texts, max_size=3),
        "files": st.lists(texts, max_size=3),
        "diff": st.one_of(texts, st.just("--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n-a\n+b\n")),
    }
    return st.one_of(specific.get(name, texts), specific.get(name, texts), json_values)


def payloads(operation: str) -> st.SearchStrategy[Any]:
    """A request body for `operation`: mostly a valid body with hostile fields, sometimes anything."""
    fields = {name: _field(name) for name in api.OPERATIONS[operation].request.model_fields}
    base = VALID_BODY.get(operation, {})
    anything = st.fixed_dictionaries({}, optional=fields)
    return st.one_of(
        _mutated(base, fields),
        _mutated(base, fields),
        _mutated(base, fields),
        anything,
        anything.map(lambda d: {**d, "unknown_field": True}),
        json_values,
    )


PROSE = " ".join(["why does the checkout service keep failing under load"] * 40)
EXTREME = ["9999-12-31T23:59:59-23:59", "0001-01-01T00:00:00+23:59"]
KNOWN: dict[str, list[Any]] = {  # hostile bodies that once were 500s: sent first, every run
    "recall": [{"query": PROSE}, {"query": "a", "as_of": EXTREME[0]}, {"query": "a", "as_of": EXTREME[1]}],
    "search": [{"query": PROSE}],
    "explain": [{"name": "checkout-api", "as_of": EXTREME[1]}],
    "remember": [
        {"entities": [{**VALID_ENTITY, "line_start": 10**30}]},
        {"entities": [{**VALID_ENTITY, "line_end": 2**63}]},
        {"entities": [{**VALID_ENTITY, "updated_at": EXTREME[0]}]},
        {"entities": [{**VALID_ENTITY, "source": "s" * (5 * 1024 * 1024 // 2)}]},
        {"facts": [{**VALID_FACT, "source": "\ud800"}]},
        {"facts": [{**VALID_FACT, "source": "a\x00b"}]},
        {"facts": [{**VALID_FACT, "source": "w" * 100_000}]},
        {"facts": [{**VALID_FACT, "valid_from": EXTREME[1]}]},
        {"facts": [{**VALID_FACT, "confidence": float("nan")}]},
        {"entities": [{**VALID_ENTITY, "\ud800": 1}]},
    ],
}
