"""The HugeGraph schema of the Gremlin graph model, and its idempotent bootstrap over REST.

HugeGraph refuses writes without a schema and property filters without an index label, so every
label, key and index the shared translations touch is declared here, as constants of code.

Bootstrap reads the whole schema in one request and creates only what is missing, each element
with `check_exist: false`: HugeGraph then creates it under its schema lock, or -- when another
process won the race -- accepts an identical definition and refuses a different one. Index labels
are built by asynchronous tasks; bootstrap waits for each to succeed.

Index-label rules that shaped the list (hugegraph-core IndexLabelBuilder, 1.5.0):
* a new SECONDARY index whose fields extend an existing one's removes the shorter one, and a new one
  that is a prefix of an existing one is refused ("Repeated new index label"), so no field list here
  is a prefix of another on the same label;
* a SET-cardinality key can only be indexed alone, and querying it needs HugeGraph's CONTAINS
  predicate, which bytecode cannot express -- alias_key is therefore not indexed (the dialect
  filters aliases after the scope index);
* optional keys lead their composite index, so a scope-only query never picks an index that lacks
  the entities without that key.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from graphctx import deadlines
from graphctx.adapters.gremlin import keys
from graphctx.errors import BackendError, ConfigError
from graphctx.model import PREDICATES

from .rest import RestClient

TEXT, LONG, DOUBLE, BOOLEAN = "TEXT", "LONG", "DOUBLE", "BOOLEAN"

ALIAS_LABEL, ALIAS_EDGE = "alias", "alias_of"
ALIAS_VALUE, ALIAS_SCOPE = "alias_value", "alias_scope"
"""An `alias` vertex per (scope, alias key, entity), linked to its entity by `alias_of`: the index a SET
key cannot have (see the dialect). Neither carries the scope keys, so scoped traversals never see them."""

FACT_KEY = "fact_key"
"""Sort key of the fact edges: a hash of scope + fact id, set once at addE (HugeGraph cannot update a
sort key), so several facts between one pair of vertices are distinct edges."""

PROPERTY_KEYS: dict[str, tuple[str, str]] = {
    # name: (data type, cardinality)
    keys.TENANT_ID: (TEXT, "SINGLE"),
    keys.NAMESPACE: (TEXT, "SINGLE"),
    keys.GRAPH_ID: (TEXT, "SINGLE"),
    keys.ENTITY_ID: (TEXT, "SINGLE"),
    keys.NAME: (TEXT, "SINGLE"),
    keys.NAME_KEY: (TEXT, "SINGLE"),
    keys.TYPE: (TEXT, "SINGLE"),
    keys.ALIASES: (TEXT, "SINGLE"),
    keys.ALIAS_KEY: (TEXT, "SET"),
    keys.SUMMARY: (TEXT, "SINGLE"),
    keys.QUALIFIED_NAME: (TEXT, "SINGLE"),
    keys.PATH: (TEXT, "SINGLE"),
    keys.LINE_START: (LONG, "SINGLE"),
    keys.LINE_END: (LONG, "SINGLE"),
    keys.SIGNATURE: (TEXT, "SINGLE"),
    keys.SOURCE: (TEXT, "SINGLE"),
    keys.SEARCH_TEXT: (TEXT, "SINGLE"),
    keys.CONTENT_HASH: (TEXT, "SINGLE"),
    keys.SORT_KEY: (TEXT, "SINGLE"),
    keys.CREATED_AT: (LONG, "SINGLE"),
    keys.UPDATED_AT: (LONG, "SINGLE"),
    keys.FACT_ID: (TEXT, "SINGLE"),
    keys.PREDICATE: (TEXT, "SINGLE"),
    keys.SUBJECT_ID: (TEXT, "SINGLE"),
    keys.OBJECT_ID: (TEXT, "SINGLE"),
    keys.LITERAL: (BOOLEAN, "SINGLE"),
    keys.VALUE: (TEXT, "SINGLE"),
    keys.CONFIDENCE: (DOUBLE, "SINGLE"),
    keys.VALID_FROM: (LONG, "SINGLE"),
    keys.VALID_TO: (LONG, "SINGLE"),
    keys.ORDER_KEY: (TEXT, "SINGLE"),
    FACT_KEY: (TEXT, "SINGLE"),
    ALIAS_VALUE: (TEXT, "SINGLE"),
    ALIAS_SCOPE: (TEXT, "SINGLE"),
}

_SCOPE = [keys.TENANT_ID, keys.NAMESPACE, keys.GRAPH_ID]
ENTITY_PROPERTIES = [
    *_SCOPE, keys.ENTITY_ID, keys.NAME, keys.NAME_KEY, keys.TYPE, keys.ALIASES, keys.ALIAS_KEY,
    keys.SUMMARY, keys.QUALIFIED_NAME, keys.PATH, keys.LINE_START, keys.LINE_END, keys.SIGNATURE,
    keys.SOURCE, keys.CONTENT_HASH, keys.SORT_KEY, keys.CREATED_AT, keys.UPDATED_AT, keys.SEARCH_TEXT,
]  # fmt: skip
FACT_PROPERTIES = [
    *_SCOPE, keys.FACT_ID, keys.PREDICATE, keys.SUBJECT_ID, keys.OBJECT_ID, keys.LITERAL, keys.VALUE,
    keys.SOURCE, keys.CONFIDENCE, keys.VALID_FROM, keys.VALID_TO, keys.ORDER_KEY, keys.CREATED_AT,
    keys.UPDATED_AT, FACT_KEY,
]  # fmt: skip
FACT_SORT_KEY = FACT_KEY


def vertex_label() -> dict[str, Any]:
    # CUSTOMIZE_STRING: the dialect derives the vertex id from scope + entity id, so two scopes never
    # share a vertex. Every key is nullable: the translations set properties step by step.
    nullable = list(ENTITY_PROPERTIES)
    return {
        "name": keys.VERTEX_LABEL,
        "id_strategy": "CUSTOMIZE_STRING",
        "properties": ENTITY_PROPERTIES,
        "nullable_keys": nullable,
        "enable_label_index": True,
    }


PAD_PREFIX = "graphctx_pad_"


def padding_labels(next_id: int, count: int) -> list[dict[str, Any]]:
    """Unused edge labels created first on a fresh graph, so that the predicate labels' numeric ids
    all have the same number of digits. HugeGraph's text serializer (the memory backend) finds a
    vertex's edges of label 2 by the id prefix `<vertex>>2`, which also matches label 22: measured on
    1.5.0, `outE('calls')` returned the `owns` edges too, and `outE('calls','owns')` returned some twice."""
    last = next_id + count - 1
    width = len(str(last))
    start = max(next_id, 10 ** (width - 1))
    if len(str(start + count - 1)) != width:  # the run would cross a power of ten: skip past it
        start = 10**width
    return [
        {"name": f"{PAD_PREFIX}{i}", "source_label": keys.VERTEX_LABEL, "target_label": keys.VERTEX_LABEL,
         "properties": [], "nullable_keys": [], "enable_label_index": False}
        for i in range(next_id, start)
    ]  # fmt: skip


def alias_vertex_label() -> dict[str, Any]:
    return {
        "name": ALIAS_LABEL,
        "id_strategy": "CUSTOMIZE_STRING",
        "properties": [ALIAS_VALUE, ALIAS_SCOPE],
        "nullable_keys": [],
        "enable_label_index": False,
    }


def alias_edge_label() -> dict[str, Any]:
    return {
        "name": ALIAS_EDGE,
        "source_label": ALIAS_LABEL,
        "target_label": keys.VERTEX_LABEL,
        "frequency": "SINGLE",
        "properties": [],
        "nullable_keys": [],
        "enable_label_index": False,
    }


def edge_labels() -> list[dict[str, Any]]:
    """One label per allowlisted predicate (labels are constants of code)."""
    nullable = [k for k in FACT_PROPERTIES if k != FACT_SORT_KEY]  # a sort key cannot be nullable
    return [
        {
            "name": predicate,
            "source_label": keys.VERTEX_LABEL,
            "target_label": keys.VERTEX_LABEL,
            "frequency": "MULTIPLE",
            "sort_keys": [FACT_SORT_KEY],
            "properties": FACT_PROPERTIES,
            "nullable_keys": nullable,
            "enable_label_index": True,
        }
        for predicate in sorted(PREDICATES)
    ]


def index_labels() -> list[dict[str, Any]]:
    def secondary(name: str, base_type: str, base: str, fields: list[str]) -> dict[str, Any]:
        return {"name": name, "base_type": base_type, "base_value": base, "index_type": "SECONDARY",
                "fields": fields}  # fmt: skip

    vl = keys.VERTEX_LABEL
    out = [
        secondary(f"{vl}_by_scope", "VERTEX_LABEL", vl, _SCOPE),
        secondary(f"{vl}_by_name", "VERTEX_LABEL", vl, [keys.NAME_KEY, *_SCOPE]),
        secondary(f"{vl}_by_qualified_name", "VERTEX_LABEL", vl, [keys.QUALIFIED_NAME, *_SCOPE]),
        secondary(f"{ALIAS_LABEL}_by_value", "VERTEX_LABEL", ALIAS_LABEL, [ALIAS_VALUE, ALIAS_SCOPE]),
    ]
    for predicate in sorted(PREDICATES):
        out.append(secondary(f"{predicate}_by_scope", "EDGE_LABEL", predicate, _SCOPE))
        out.append(secondary(f"{predicate}_by_fact", "EDGE_LABEL", predicate, [keys.FACT_ID, *_SCOPE]))
    return out


@dataclass(frozen=True)
class Element:
    kind: str  # REST collection: propertykeys, vertexlabels, edgelabels, indexlabels
    body: dict[str, Any]

    @property
    def name(self) -> str:
        return str(self.body["name"])


def declared(padding: Iterable[dict[str, Any]] = ()) -> list[Element]:
    """Everything the adapter needs, in creation order (keys, then labels, then indexes)."""
    elements = [
        Element("propertykeys", {"name": n, "data_type": dt, "cardinality": card})
        for n, (dt, card) in PROPERTY_KEYS.items()
    ]
    elements.append(Element("vertexlabels", vertex_label()))
    elements.append(Element("vertexlabels", alias_vertex_label()))
    elements += [Element("edgelabels", body) for body in padding]
    elements += [Element("edgelabels", body) for body in edge_labels()]
    elements.append(Element("edgelabels", alias_edge_label()))
    elements += [Element("indexlabels", body) for body in index_labels()]
    return elements


# what must match when an element already exists (HugeGraph answers names, not ids, over REST)
_COMPARED = {
    "propertykeys": ("data_type", "cardinality"),
    "vertexlabels": ("id_strategy",),
    "edgelabels": ("frequency", "sort_keys", "source_label", "target_label"),
    "indexlabels": ("base_type", "base_value", "index_type", "fields"),
}


def existing(rest: RestClient) -> dict[str, dict[str, dict[str, Any]]]:
    """{collection: {name: definition}} of the graph's schema, in one request."""
    schema = rest.get("schema") or {}
    return {kind: {str(e["name"]): e for e in schema.get(kind, [])} for kind in _COMPARED}


def ensure(rest: RestClient, *, task_timeout_s: float, sleep: Callable[[float], None] = time.sleep) -> int:
    """Create what is missing; returns how many elements were created (0 on a second run)."""
    have = existing(rest)
    _check_compatible(declared(), have)
    missing = [p for p in PREDICATES if p not in have["edgelabels"]]
    padding: list[dict[str, Any]] = []
    if len(missing) == len(PREDICATES):  # a fresh graph: keep the predicate label ids one width
        ids = [int(e.get("id", 0)) for e in have["edgelabels"].values()]
        padding = padding_labels(max(ids, default=0) + 1, len(PREDICATES) + 1)  # + alias_of
    created = 0
    tasks: list[tuple[str, int]] = []
    for element in declared(padding):
        if element.name in have[element.kind]:
            created += _append_properties(rest, element, have[element.kind][element.name])
            continue
        answer = rest.post(f"schema/{element.kind}", {**element.body, "check_exist": False})
        created += 1
        task = int(answer.get("task_id") or 0) if isinstance(answer, dict) else 0
        if task:
            tasks.append((element.name, task))
        if len(tasks) >= MAX_TASKS_IN_FLIGHT:
            wait_for_task(rest, *tasks.pop(0), timeout_s=task_timeout_s, sleep=sleep)
    for name, task in tasks:
        wait_for_task(rest, name, task, timeout_s=task_timeout_s, sleep=sleep)
    return created


def _append_properties(rest: RestClient, element: Element, found: dict[str, Any]) -> int:
    """A vertex label created by an older graphctx lacks the keys added since (all nullable): append
    them, which HugeGraph allows on a label that holds data. Returns 1 when it appended."""
    if element.kind != "vertexlabels" or "properties" not in found:
        return 0
    missing = [p for p in element.body.get("properties", []) if p not in found["properties"]]
    if not missing:
        return 0
    rest.put(
        f"schema/vertexlabels/{element.name}?action=append",
        {"name": element.name, "properties": missing, "nullable_keys": missing},
    )
    return 1


def _check_compatible(elements: Iterable[Element], have: dict[str, dict[str, dict[str, Any]]]) -> None:
    for element in elements:
        found = have[element.kind].get(element.name)
        if found is None:
            continue
        for field in _COMPARED[element.kind]:
            if field in found and field in element.body and found[field] != element.body[field]:
                raise ConfigError(
                    f"HugeGraph schema element {element.kind[:-1]} {element.name!r} exists with "
                    f"{field}={found[field]!r}; graphctx needs {element.body[field]!r}. Use another graph "
                    "or remove the conflicting schema element.",
                    element=element.name,
                )


MAX_TASKS_IN_FLIGHT = 3
"""Index builds waiting at once. HugeGraph's distributed task scheduler (the one a multi-server hstore
cluster needs) starts a task at once only while one of its 4 schema workers is free; a task created
when all are busy stays NEW (measured on 1.5.0: its periodic pick-up never ran), and so its index
label stays CREATING for good."""

_DONE = {"success"}
_FAILED = {"failed", "cancelled", "cancelling"}


def wait_for_task(
    rest: RestClient, name: str, task: int, *, timeout_s: float, sleep: Callable[[float], None] = time.sleep
) -> None:
    """Poll an asynchronous schema task (index rebuild) until it succeeds."""
    deadline = time.monotonic() + timeout_s
    delay = 0.05
    while True:
        answer = rest.get(f"tasks/{task}") or {}
        status = str(answer.get("task_status", "")).lower()
        if status in _DONE:
            return
        if status in _FAILED:
            raise BackendError(
                f"HugeGraph task {task} building index label {name!r} ended {status}: "
                f"{str(answer.get('task_result', ''))[:300]}"
            )
        if time.monotonic() >= deadline:
            raise BackendError(
                f"HugeGraph task {task} building index label {name!r} did not finish within {timeout_s:g} s "
                f"(status {status or 'unknown'}); raise GRAPHCTX_HUGEGRAPH_SCHEMA_TASK_TIMEOUT_S"
            )
        sleep(deadlines.budget(delay, f"waiting for HugeGraph task {task}"))
        delay = min(delay * 2, 1.0)
