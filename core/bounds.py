"""The design's input bounds, in one place, and the checks that enforce them with typed errors."""

from __future__ import annotations

from collections.abc import Sequence

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
    size = len(value.encode("utf-8", errors="surrogatepass"))
    if size > limit:
        raise BoundExceeded(what, limit, size)
    if "\x00" in value:
        raise InputError(f"{what} contains a NUL character", field=what)
    if not allow_empty and not value.strip():
        raise InputError(f"{what} must not be empty", field=what)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InputError(f"{what} is not valid Unicode text (lone surrogate)", field=what) from exc
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
