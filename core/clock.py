"""Time, injectable so tests and benchmarks can pin it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(UTC)


def iso(ts: datetime | None) -> str | None:
    """Fixed-width ISO-8601 UTC with microseconds, so envelope sizes do not depend on the instant."""
    if ts is None:
        return None
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=UTC)
    return ts.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def compact_iso(ts: datetime | None) -> str | None:
    """Short form for facts: a date when the time is midnight UTC, else seconds precision."""
    if ts is None:
        return None
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=UTC)
    ts = ts.astimezone(UTC)
    if (ts.hour, ts.minute, ts.second, ts.microsecond) == (0, 0, 0, 0):
        return ts.strftime("%Y-%m-%d")
    return ts.strftime("%Y-%m-%dT%H:%M:%SZ")
