"""Client records into validated entities and facts, every problem named by where it is.

A batch is checked whole before anything is written: each record's schema and bounds, its scope,
and every fact's endpoints (in the batch or in the store). Problems are collected (up to
`MAX_REPORTED`) and raised as one `InputError` (or `NotFound` for missing endpoints) whose message
names the first record, field and bound, and whose `details.errors` lists each of them.

The JSONL reader (`jsonl_records`) is the one place a bulk file is decoded: one object per line,
`"kind": "entity" | "fact"`; its checks are per line and name the line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import IO, Any, Generic, TypeVar

from pydantic import ValidationError

from graphctx import bounds
from graphctx.errors import BoundExceeded, GraphctxError, InputError, NotFound, ScopeError, from_validation
from graphctx.kernel.templates import own_derived_ids
from graphctx.model import Entity, Fact
from graphctx.scope import Scope

T = TypeVar("T", Entity, Fact)

MAX_REPORTED = 20
LINE_BYTES = bounds.SUMMARY_BYTES * 4
"""The longest JSONL line accepted (a record with a full summary and aliases fits well inside)."""
KINDS = ("entity", "fact")
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def _nesting(text: str) -> int:
    """How deep arrays and objects nest in a JSON text (strings skipped), before parsing it."""
    depth = deepest = 0
    for char in _STRING.sub("", text):
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _int(literal: str) -> int:
    if len(literal.lstrip("-")) > bounds.MAX_INT_DIGITS:
        raise ValueError(
            f"an integer of {len(literal.lstrip('-'))} digits, over the bound of {bounds.MAX_INT_DIGITS}"
        )
    return int(literal)


@dataclass(frozen=True)
class Located(Generic[T]):
    """A validated record, where it came from, and the fields the record itself set."""

    item: T
    where: str
    given: frozenset[str]


@dataclass
class Problems:
    """Collects per-record errors; `raise_if_any` raises the first with all of them listed."""

    errors: list[dict[str, Any]] = field(default_factory=list)
    first: GraphctxError | None = None
    total: int = 0

    def add(self, where: str, exc: GraphctxError) -> None:
        self.total += 1
        if self.first is None:
            self.first = exc
            self.first_where = where
        if len(self.errors) < MAX_REPORTED:
            self.errors.append({"record": where, "code": exc.code, "message": exc.message, **exc.details})

    def raise_if_any(self) -> None:
        if self.first is None:
            return
        more = f" (and {self.total - 1} more problem(s); nothing was written)" if self.total > 1 else ""
        message = f"{self.first_where}: {self.first.message}{more}"
        if self.total == 1:
            message += " (nothing was written)"
        kind = type(self.first) if isinstance(self.first, NotFound | ScopeError) else InputError
        raise kind(message, errors=self.errors, count=self.total)


def parse(model: type[T], data: object, where: str, scope: Scope, now: datetime) -> Located[T]:
    """One record: validated, its scope checked and stamped, `updated_at` defaulted to now."""
    if isinstance(data, model):
        item, given = data, frozenset(data.model_fields_set)
    elif isinstance(data, Mapping):
        try:
            item = model.model_validate(dict(data))
        except ValidationError as exc:
            raise from_validation(exc, default_loc="record") from None
        given = frozenset(str(k) for k in data)
    else:
        raise InputError(f"expected an object, got {type(data).__name__}", field="record")
    for name, value in scope.as_dict().items():
        have = getattr(item, name)
        if have not in (None, value):
            raise ScopeError(f"the record names {name} {have[:40]!r}, outside the caller's scope", field=name)
    if isinstance(item, Fact) and (item.id.startswith("e_") or "valid_from" in given):
        # fact.upsert's id rule, here so a bulk load refuses before its first batch; a fact that gives
        # no valid_from may keep the stored one (timeline), so its f_ id waits for the write plan
        own_derived_ids((item,))
    stamped = item.model_copy(update={**scope.as_dict(), "updated_at": item.updated_at or now})
    return Located(stamped, where, given)


def validate(
    scope: Scope, records: Iterable[tuple[str, str, object]], now: datetime
) -> tuple[list[Located[Entity]], list[Located[Fact]]]:
    """Every record of a batch ((where, kind, data) in batch order), every problem collected before
    raising; more than `bounds.BULK_RECORDS` records is refused before the rest is read."""
    problems = Problems()
    ents: list[Located[Entity]] = []
    fs: list[Located[Fact]] = []
    for count, (where, kind, data) in enumerate(records, start=1):
        if count > bounds.BULK_RECORDS:
            raise BoundExceeded("records", bounds.BULK_RECORDS, count, unit="entries")
        try:
            if kind == "fact":
                fs.append(_checked(Fact, data, where, scope, now))
            else:
                ents.append(_checked(Entity, data, where, scope, now))
        except GraphctxError as exc:
            problems.add(where, exc)
    problems.raise_if_any()
    return ents, fs


def _checked(model: type[T], data: object, where: str, scope: Scope, now: datetime) -> Located[T]:
    if isinstance(data, GraphctxError):  # a line the reader could not turn into a record
        raise data
    return parse(model, data, where, scope, now)


def check_endpoints(facts: Iterable[Located[Fact]], batch_ids: set[str], stored_ids: set[str]) -> None:
    """Every endpoint is an entity of the batch or of the store."""
    problems = Problems()
    for f in facts:
        for name in ("subject_id", "object_id"):
            endpoint = getattr(f.item, name)
            if endpoint is not None and endpoint not in batch_ids and endpoint not in stored_ids:
                problems.add(
                    f.where,
                    NotFound(
                        f"{name} {endpoint[:80]!r} is neither an entity of this batch nor of the store",
                        field=name,
                        entity_id=endpoint[:80],
                    ),
                )
    problems.raise_if_any()


class _Cut(bytes):
    """The first bytes of a line longer than the bound; `size` is the whole line's length."""

    size: int


def bounded_lines(stream: IO[bytes], limit: int = LINE_BYTES) -> Iterator[bytes]:
    """The lines of a binary stream, none held in memory past `limit` bytes: a longer line comes cut
    (and is refused with its real size), so a huge or binary file without newlines costs no memory."""
    while line := stream.readline(limit + 1):
        if len(line) <= limit or line.endswith(b"\n"):
            yield line
            continue
        size = len(line)
        while (rest := stream.readline(1 << 16)) and not rest.endswith(b"\n"):
            size += len(rest)
        cut = _Cut(line[:64])
        cut.size = size + len(rest)
        yield cut


def jsonl_records(lines: Iterable[str | bytes]) -> Iterator[tuple[str, str, object]]:
    """(where, kind, record) per non-blank line of a JSONL bulk file; a line that is not a record
    comes as kind "" with the InputError naming it, so a caller can report every bad line at once.
    Blank lines are skipped; line numbers count every line."""
    for number, raw in enumerate(lines, start=1):
        where = f"line {number}"
        try:
            kind, record = _line(raw, number == 1)
        except InputError as exc:
            yield where, "", InputError(exc.message, line=number, **exc.details)
            continue
        if kind:
            yield where, kind, record


def _line(raw: str | bytes, first: bool) -> tuple[str, object]:
    if isinstance(raw, bytes):
        size = raw.size if isinstance(raw, _Cut) else len(raw)
        if size > LINE_BYTES:  # before decoding anything
            raise BoundExceeded("line", LINE_BYTES, size)
        if first and raw.startswith(_UTF16_BOMS):
            raise InputError("is UTF-16 (it starts with a UTF-16 byte order mark); save the file as UTF-8")
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InputError(
                f"is not UTF-8 (byte {exc.start + 1} of the line): save the file as UTF-8", field="line"
            ) from None
    if first:
        raw = raw.removeprefix("\ufeff")  # a UTF-8 byte order mark, as some editors write
    if not raw.strip():
        return "", None
    size = len(raw.encode("utf-8", errors="surrogatepass"))
    if size > LINE_BYTES:
        raise BoundExceeded("line", LINE_BYTES, size)
    problem = bounds.unicode_problem(raw)
    if problem:  # NUL bytes of a binary file; surrogates a decoder let through
        raise InputError(f"{problem}: not a UTF-8 text line", field="line")
    depth = _nesting(raw)
    if depth > bounds.MAX_DEPTH:
        raise BoundExceeded("nesting", bounds.MAX_DEPTH, depth, unit="levels")
    try:
        record = json.loads(raw, parse_int=_int)
    except (json.JSONDecodeError, RecursionError, ValueError) as exc:
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)[:120]
        raise InputError(f"not valid JSON ({reason})", field="line") from None
    if not isinstance(record, dict):
        raise InputError("expected a JSON object", field="line")
    bounds.check_tree(record, "")
    kind = record.pop("kind", None)
    if kind not in KINDS:
        raise InputError(f"kind must be 'entity' or 'fact', got {str(kind)[:40]!r}", field="kind")
    return str(kind), record
