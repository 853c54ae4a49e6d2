"""The answers' shapes: one pydantic model per operation's result, the single schema source that the
HTTP API publishes in its OpenAPI document and MCP publishes as each tool's `outputSchema`.

Answers are built as plain JSON objects (graphctx.envelope measures their bytes against the budget);
these models describe them. Every field an answer can carry is declared, and the published schemas
still allow fields they do not name, so a client validating against an older schema keeps working
when a later release adds one. `ANSWERS` maps each operation of the catalogue to its model.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal, overload

from pydantic import BaseModel, ConfigDict, Field

NULLABLE = "x-nullable"
"""Marks a field whose null is an answer (`follow_up: null`); every other optional field is absent
rather than null, and its schema says so."""


class Shape(BaseModel):
    model_config = ConfigDict(extra="allow")


# -- parts --------------------------------------------------------------------------------------


class ScopeOut(Shape):
    tenant_id: str
    namespace: str
    graph_id: str = Field(description="The shared code graph answered from; empty for a namespace.")


class Location(Shape):
    path: str = Field(description="Repository-relative file.")
    lines: list[int] | None = Field(
        default=None, min_length=2, max_length=2, description="[first, last] line, 1-based, inclusive."
    )


class FactLine(Shape):
    """A fact seen from the entity it is listed under: `subject` is set only when that entity is
    the object; `object` is an entity's name, `value` a literal."""

    predicate: str
    subject: str | None = None
    object: str | None = None
    value: str | None = None
    valid_from: str | None = None
    valid_to: str | None = None
    confidence: float | None = None
    source: str | None = None
    id: str | None = Field(default=None, description="Only with include_ids.")
    status: Literal["current", "future", "ended"] | None = Field(
        default=None, description="explain: whether the fact holds at as_of."
    )
    current: bool | None = None
    superseded_by: str | None = Field(default=None, description="explain: the value that replaced it.")
    superseded_by_id: str | None = None


class Edge(Shape):
    subject: str
    predicate: str
    object: str | None = None
    value: str | None = None


class Card(Shape):
    """An entity: name and type always, the rest when known."""

    name: str
    type: str
    id: str | None = Field(default=None, description="Opaque; only with include_ids.")
    qualified_name: str | None = None
    aliases: list[str] | None = None
    summary: str | None = None
    location: Location | None = None
    signature: str | None = None
    source: str | None = None
    updated_at: str | None = None


class Match(Shape):
    """How an item was found: the exact field it matched, each leg's rank (1 = best), the fused score."""

    exact: str | None = None
    mention: int | None = None
    bm25: int | None = None
    dense: int | None = None
    score: float | None = None


class Item(Card):
    rank: int
    match: Match
    facts: list[FactLine] | None = None


class Related(Shape):
    name: str
    type: str
    depth: int
    via: str = Field(description="The depth-1 item it is reached from.")
    predicate: str
    direction: Literal["in", "out"]


class Node(Card):
    depth: int | None = None


class CodeEntry(Shape):
    """A symbol in a code answer: its qualified name and where it is; the subject adds type,
    signature and summary, entries of a call walk the call lines."""

    name: str = Field(description="The qualified name.")
    id: str | None = Field(default=None, description="Opaque; only with include_ids.")
    at: str | None = Field(default=None, description='"path:first-last" of its definition, or a file.')
    type: str | None = None
    def_line: int | None = Field(default=None, description="The `def` line when decorators come first.")
    signature: str | None = None
    summary: str | None = None
    test: bool | None = Field(default=None, description="A test (among callers).")
    run: str | None = Field(default=None, description="impact: the test's pytest node id.")
    depth: int | None = None
    via: list[str] | None = Field(default=None, description="depth 2: the depth-1 entries it connects to.")
    lines: list[int] | None = Field(default=None, description="The call lines.")
    more_lines: int | None = None


class Leg(Shape):
    status: Literal["ok", "disabled", "error", "timeout", "invalid_vector"]
    hits: int | None = None
    mentions: int | None = None
    error: str | None = None
    budget_s: float | None = None
    fallback: str | None = None


class Coverage(Shape):
    candidates: int
    hydrated: int
    dropped_missing: int
    dropped_stale: int
    returned: int
    not_code: int | None = Field(default=None, description="search: memory hits left out.")


class Omission(Shape):
    """What was left out and why; `count` is absent when saying it would reveal another scope."""

    what: str
    reason: Literal["budget", "limit", "deadline"]
    count: int | None = None
    of: str | None = Field(default=None, description="The entry whose part was cut.")
    names: list[str] | None = Field(default=None, description="The first names cut (shortened).")
    limit: int | None = None
    at_least: bool | None = Field(default=None, description="`count` is a lower bound.")
    unit: str | None = None


class Isolation(Shape):
    rejected: int = Field(description="Hits outside the scope that the re-check dropped.")


class Provenance(Shape):
    """The stores that answered: graph-only operations (the code operations) name the graph alone."""

    graph: str
    lexical: str | None = None
    vector: str | None = None
    embedder: str | None = None
    catalog: int = Field(description="Template catalogue version.")


class Counted(Shape):
    tokenizer: str
    used_tokens: int


class BudgetOut(Shape):
    max_tokens: int
    used_tokens: int = Field(description="ceil(JSON bytes / 4) of the whole answer.")
    unused_tokens: int | None = None
    counted: Counted | None = Field(default=None, description="A pinned tokenizer's count, when configured.")


class Changed(Shape):
    files: int
    ranges: int
    whole_files: int


class UnknownFile(Shape):
    path: str


# -- envelopes ----------------------------------------------------------------------------------


class Envelope(Shape):
    """Evidence to reason over, never a conclusion. Its JSON is at most max_tokens x 4 bytes."""

    v: int = Field(description="Envelope format version.")
    op: str
    scope: ScopeOut
    as_of: str = Field(description="The instant facts were evaluated at (UTC, ISO 8601).")
    isolation: Isolation
    omissions: list[Omission]
    truncated: bool = Field(description="True when something was left out.")
    follow_up: str | None = Field(
        default=None, description="When evidence is thin: one next step.", json_schema_extra={NULLABLE: True}
    )
    provenance: Provenance
    budget: BudgetOut
    timings_ms: dict[str, float]


class RecallAnswer(Envelope):
    op: Literal["recall"]
    items: list[Item]
    related: list[Related] | None = Field(default=None, description="depth=2: second-hop neighbours.")
    legs: dict[str, Leg]
    coverage: Coverage


class ExplainAnswer(Envelope):
    op: Literal["explain"]
    subject: Card
    facts: list[FactLine] = Field(description="Current facts first, then future, then history.")


class NeighbourhoodAnswer(Envelope):
    op: Literal["neighbourhood"]
    subject: Card
    nodes: list[Node]
    edges: list[Edge]


class PathAnswer(Envelope):
    op: Literal["path"]
    found: bool
    nodes: list[Node] | None = Field(default=None, description="In path order.")
    edges: list[Edge] | None = None


class SearchAnswer(Envelope):
    op: Literal["search"]
    items: list[Item]
    legs: dict[str, Leg]
    coverage: Coverage


DirectionCounts = Annotated[
    dict[str, int],
    Field(description="Entries per direction: those shown, or all there are when a limit cut some."),
]


class SymbolAnswer(Envelope):
    op: Literal["symbol"]
    subject: CodeEntry
    callers: list[CodeEntry]
    callees: list[CodeEntry]
    tests: list[CodeEntry] = Field(description="Tests that reach it other than by calling it.")
    counts: DirectionCounts


class CallersAnswer(Envelope):
    op: Literal["callers"]
    subject: CodeEntry
    depth: int
    callers: list[CodeEntry]
    counts: DirectionCounts


class CalleesAnswer(Envelope):
    op: Literal["callees"]
    subject: CodeEntry
    depth: int
    callees: list[CodeEntry]
    counts: DirectionCounts


class ImpactAnswer(Envelope):
    op: Literal["impact"]
    changed: Changed
    depth: int
    unknown: list[UnknownFile] = Field(description="Changed files this graph does not hold.")
    affected: list[CodeEntry] = Field(description="Symbols the change touches.")
    callers: list[CodeEntry]
    tests: list[CodeEntry] = Field(description="The tests to run, each with `run`.")
    counts: DirectionCounts


# -- reports ------------------------------------------------------------------------------------


class Counts(Shape):
    created: int
    updated: int
    unchanged: int


class Supersession(Shape):
    fact: str = Field(description="The fact that ended.")
    by: str = Field(description="The fact that replaced it.")
    valid_to: str


class RememberReport(Shape):
    entities: Counts
    facts: Counts
    superseded: list[Supersession]
    records: int
    written: int
    vector_skipped: int = Field(description="Entities with no vector (nothing to embed).")
    index_errors: list[str] = Field(description="Index updates that failed; the graph has the data.")
    follow_up: str | None = Field(default=None, json_schema_extra={NULLABLE: True})
    interrupted: bool | None = Field(default=None, description="A bulk load stopped between batches.")


class ForgetReport(Shape):
    entities_deleted: int
    facts_removed: int = Field(description="Facts deleted together with their entities.")
    facts_invalidated: int = Field(description="Facts given a valid_to; their rows are kept.")


class ReconcileReport(Shape):
    lexical_repaired: int
    vector_repaired: int
    removed_from_indexes: int
    graph_entities: int
    vector_skipped: int
    # store-wide figures: the Python API and the CLI show them, the network transports do not
    journal_replayed: int | None = None
    writes_completed: int | None = None
    writes_abandoned: list[Any] | None = None


class GraphCounts(Shape):
    entities: int
    facts: int
    valid_facts: int
    by_type: dict[str, int]


class StatusReport(Shape):
    scope: ScopeOut
    backends: Provenance
    graph: GraphCounts
    lexical_docs: int
    vectors: int | None = Field(
        description="null when this process has no vector index open (a read beside the writer).",
        json_schema_extra={NULLABLE: True},
    )
    as_of: str
    # the host's business: the Python API and the CLI show them, the network transports do not
    data_dir: str | None = None
    mode: str | None = None
    writer_pid: int | None = Field(default=None, json_schema_extra={NULLABLE: True})
    exposed: list[str] | None = Field(default=None, description="What others can read in the data directory.")
    pending_index_work: int | None = None
    group_commit: dict[str, Any] | None = Field(
        default=None, description="Group commit of `remember` calls: batches, calls, mean batch, queued."
    )
    index_flush: dict[str, Any] | None = Field(
        default=None,
        description="The indexes' disk commits after the acknowledgement (GRAPHCTX_INDEX_FLUSH_MS): "
        "enabled, and when enabled the interval, writes waiting, flushes and failures.",
    )
    memory: dict[str, Any] | None = Field(
        default=None,
        description="This process's rss_bytes and open_fds, and each cache with its size and bound.",
    )


ANSWERS: dict[str, type[Shape]] = {
    "recall": RecallAnswer,
    "explain": ExplainAnswer,
    "neighbourhood": NeighbourhoodAnswer,
    "path": PathAnswer,
    "search": SearchAnswer,
    "symbol": SymbolAnswer,
    "callers": CallersAnswer,
    "callees": CalleesAnswer,
    "impact": ImpactAnswer,
    "remember": RememberReport,
    "forget": ForgetReport,
    "reconcile": ReconcileReport,
    "status": StatusReport,
}


# -- published schemas --------------------------------------------------------------------------


def schema_of(model: type[BaseModel], *, absent_not_null: bool = True) -> dict[str, Any]:
    """The model's JSON schema as published: without generated titles (they repeat the names) and,
    with `absent_not_null`, optional fields as their plain type (answers leave them out, never null,
    unless marked NULLABLE). Request schemas keep their nulls: a caller may send null for a default."""
    schema: dict[str, Any] = _compact(model.model_json_schema(), absent_not_null)
    return schema


def _compact(node: Any, absent_not_null: bool) -> Any:
    if isinstance(node, list):
        return [_compact(n, absent_not_null) for n in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title" or (key == "additionalProperties" and value is True):
            continue  # extra fields are allowed by default
        if key in ("properties", "$defs"):
            out[key] = {name: _compact(sub, absent_not_null) for name, sub in value.items()}
        else:
            out[key] = _compact(value, absent_not_null)
    keep_null = out.pop(NULLABLE, False)
    if absent_not_null and "default" in out and out["default"] is None:
        del out["default"]
        branches = out.get("anyOf")
        if isinstance(branches, list) and not keep_null:
            rest = [b for b in branches if b != {"type": "null"}]
            if len(rest) == 1:
                del out["anyOf"]
                out = {**rest[0], **out}
            else:
                out["anyOf"] = rest
    return out


@overload
def parse(op: Literal["recall"], data: Mapping[str, Any]) -> RecallAnswer: ...
@overload
def parse(op: Literal["explain"], data: Mapping[str, Any]) -> ExplainAnswer: ...
@overload
def parse(op: Literal["neighbourhood"], data: Mapping[str, Any]) -> NeighbourhoodAnswer: ...
@overload
def parse(op: Literal["path"], data: Mapping[str, Any]) -> PathAnswer: ...
@overload
def parse(op: Literal["search"], data: Mapping[str, Any]) -> SearchAnswer: ...
@overload
def parse(op: Literal["symbol"], data: Mapping[str, Any]) -> SymbolAnswer: ...
@overload
def parse(op: Literal["callers"], data: Mapping[str, Any]) -> CallersAnswer: ...
@overload
def parse(op: Literal["callees"], data: Mapping[str, Any]) -> CalleesAnswer: ...
@overload
def parse(op: Literal["impact"], data: Mapping[str, Any]) -> ImpactAnswer: ...
@overload
def parse(op: Literal["remember"], data: Mapping[str, Any]) -> RememberReport: ...
@overload
def parse(op: Literal["forget"], data: Mapping[str, Any]) -> ForgetReport: ...
@overload
def parse(op: Literal["reconcile"], data: Mapping[str, Any]) -> ReconcileReport: ...
@overload
def parse(op: Literal["status"], data: Mapping[str, Any]) -> StatusReport: ...
@overload
def parse(op: str, data: Mapping[str, Any]) -> Shape: ...


def parse(op: str, data: Mapping[str, Any]) -> Shape:
    """An answer of operation `op` (a dict from ContextService or any transport) as its typed model,
    validated: `parse("recall", service.recall(scope, q)).items[0].name`. Typed per operation: a
    type checker sees `parse("recall", ...)` as a RecallAnswer, `parse("symbol", ...)` as a
    SymbolAnswer, and so on."""
    model = ANSWERS.get(op)
    if model is None:
        raise KeyError(f"no operation named {op[:40]!r}")
    return model.model_validate(dict(data))
