"""The design's input bounds, in one place, and the checks that enforce them with typed errors."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from graphctx.errors import BoundExceeded, InputError

KIB = 1024
QUERY_BYTES = 4 * KIB
TASK_BYTES = 8 * KIB
SELECTOR_BYTES = 4 * KIB
FILE_LIST_ENTRIES = 100
DIFF_BYTES = 4 * KIB * KIB

NAME_BYTES = 1 * KIB
ALIAS_BYTES = 1 * KIB
ALIASES_PER_ENTITY = 64
SUMMARY_BYTES = 4 * KIB
SEARCH_TEXT_BYTES = 16 * KIB
FACT_VALUE_BYTES = 4 * KIB
ID_BYTES = 512
BULK_RECORDS = 100_000

MIN_TOKENS = 256
MAX_TOKENS = 20_000
DEFAULT_RECALL_TOKENS = 1_500
DEFAULT_CODE_TOKENS = 20_000
RECALL_JSON_BYTES = 32 * KIB
MAX_ENTRIES = 8
MAX_HOPS = 2
MAX_FACTS = 80
LEG_CANDIDATES = 10
RRF_K = 60
DEADLINE_S = 10.0
DENSE_DEADLINE_S = 2.0
NEIGHBOURHOOD_LIMIT = 200
PER_DIRECTION_LIMIT = 50
PATH_MAX_DEPTH = 4


def check_text(what: str, value: object, limit: int, *, allow_empty: bool = False) -> str:
    """A string within `limit` UTF-8 bytes with no NUL; otherwise a typed error naming the bound."""
    if not isinstance(value, str):
        raise InputError(f"{what} must be a string, got {type(value).__name__}", field=what)
    if value.isascii():  # one byte a character, no surrogate: the same checks without encoding
        if len(value) > limit:
            raise BoundExceeded(what, limit, len(value))
        if "\x00" in value:
            raise InputError(f"{what} contains a NUL character", field=what)
    else:
        size = len(value.encode("utf-8", errors="surrogatepass"))
        if size > limit:
            raise BoundExceeded(what, limit, size)
        problem = unicode_problem(value)
        if problem:
            raise InputError(f"{what} {problem}", field=what)
    if not allow_empty and not value.strip():
        raise InputError(f"{what} must not be empty", field=what)
    return value


MAX_DEPTH = 32
"""Deepest nesting of arrays and objects any request or record may have (records are flat; the
deepest real one nests 3 levels)."""
MAX_INT_DIGITS = 20
"""Longest integer literal a JSONL line may hold (int64 has 19 digits)."""


def unicode_problem(text: str) -> str | None:
    """The one rule for text anywhere in a request or record: valid Unicode (no lone surrogate, as
    `\\ud800` in JSON or CESU-8 bytes produce) and no NUL character. Invalid UTF-8 bytes (overlong
    forms included) never decode in the first place. Refused, never repaired or stored."""
    if "\x00" in text:
        return "contains a NUL character"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "is not valid Unicode text (lone surrogate)"
    return None


def check_tree(value: object, where: str = "body") -> None:
    """Every key and string of a decoded JSON value obeys `unicode_problem`, and it nests at most
    `MAX_DEPTH` levels: checked before anything is validated into work. The error names the field."""
    label = where or "the request"
    stack: list[tuple[object, str, int]] = [(value, where, 0)]
    while stack:
        item, path, depth = stack.pop()
        if isinstance(item, str):
            problem = unicode_problem(item)
            if problem:
                raise InputError(f"{path} {problem}", field=path)
        elif isinstance(item, dict | list):
            if depth >= MAX_DEPTH:
                raise BoundExceeded(f"nesting of {label}", MAX_DEPTH, depth + 1, unit="levels")
            if isinstance(item, dict):
                for key, child in item.items():
                    name = str(key)
                    problem = unicode_problem(name)
                    if problem:
                        raise InputError(f"a key of {path or label} {problem}", field=path)
                    stack.append((child, f"{path}.{name}" if path else name, depth + 1))
            else:
                stack.extend((child, f"{path}[{i}]", depth + 1) for i, child in enumerate(item))


EARLIEST = datetime(1, 1, 2, tzinfo=UTC)
LATEST = datetime(9999, 12, 30, tzinfo=UTC)
"""Instants graphctx accepts: any a stamp, a validity bound or `as_of` can hold in UTC, with a day to
spare either side, so converting and comparing them never overflows."""
LINE_MAX = 10**9
"""Largest line number a code entity may carry."""


def check_instant(value: datetime) -> datetime:
    """An instant within [EARLIEST, LATEST] once in UTC (naive means UTC); ValueError otherwise."""
    try:
        utc = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    except OverflowError:
        utc = None
    if utc is None or not EARLIEST <= utc <= LATEST:
        raise ValueError(
            f"{value.isoformat()[:40]} is outside the instants graphctx keeps "
            f"({EARLIEST.date()} to {LATEST.date()} UTC)"
        )
    return value


def check_query(value: object) -> str:
    return check_text("query", value, QUERY_BYTES)


def check_selector(what: str, value: object) -> str:
    return check_text(what, value, SELECTOR_BYTES)


def check_count(what: str, items: Sequence[object], limit: int) -> None:
    if len(items) > limit:
        raise BoundExceeded(what, limit, len(items), unit="entries")


def normalise_tokens(requested: int | None, default: int) -> int:
    """`max_tokens` is normalised into [256, 20000]; the envelope reports both values."""
    if requested is None:
        return default
    if isinstance(requested, bool) or not isinstance(requested, int):
        raise InputError(f"max_tokens must be an integer, got {type(requested).__name__}", field="max_tokens")
    return max(MIN_TOKENS, min(MAX_TOKENS, requested))


def clamp(value: int, low: int, high: int) -> int:
    return max(low, min(high, value))
