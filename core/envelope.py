"""The evidence envelope: canonical JSON, the bytes/4 token estimate, and fitting under a budget.

The size of an answer must not depend on the instant it was produced, so timings are measured
against a fixed-width placeholder and `used_tokens` is an upper bound computed once.
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from graphctx.clock import iso
from graphctx.errors import BudgetError
from graphctx.kernel.templates import CATALOG_VERSION
from graphctx.scope import Scope
from graphctx.tokens import TokenCounter

ENVELOPE_VERSION = 1
_TIMING_PLACEHOLDER = 99999.999
_TOKENS_PLACEHOLDER = 99999
NAME_CHARS = 60
"""Omission records name what was cut by at most this many characters of each name."""
OMITTED_NAMES = 5
"""... and at most this many names (the count says how many were cut)."""


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
"""json.dumps's encoder for these arguments, made once: json.dumps builds a new one on every call
with non-default arguments (the budget serialises a hundred pieces per answer)."""


def dumps(data: Any) -> str:
    """The canonical serialisation every transport returns."""
    return _ENCODER.encode(data)


def size_bytes(data: Any) -> int:
    return len(dumps(data).encode("utf-8"))


class Envelope(dict[str, Any]):
    """A finished answer: the envelope, with the canonical JSON made when it was finished, which the
    transports send as it is (`canonical`) instead of serialising the answer a second time. Setting
    or removing a key drops it (made afresh when sent); a finished answer's nested values are final."""

    __slots__ = ("text",)

    def __init__(self, data: dict[str, Any], text: str | None) -> None:
        super().__init__(data)
        self.text = text

    def __setitem__(self, key: str, value: Any) -> None:
        self.text = None
        super().__setitem__(key, value)

    def __delitem__(self, key: str) -> None:
        self.text = None
        super().__delitem__(key)

    def pop(self, *args: Any) -> Any:
        self.text = None
        return super().pop(*args)

    def popitem(self) -> tuple[str, Any]:
        self.text = None
        return super().popitem()

    def setdefault(self, key: str, default: Any = None) -> Any:
        self.text = None
        return super().setdefault(key, default)

    def update(self, *args: Any, **kwargs: Any) -> None:
        self.text = None
        super().update(*args, **kwargs)

    def clear(self) -> None:
        self.text = None
        super().clear()

    def __ior__(self, other: Any) -> Envelope:  # type: ignore[override,misc]
        self.text = None
        return super().__ior__(other)


def canonical(data: Any) -> str:
    """`dumps(data)`, taken from a finished Envelope when it holds it."""
    if isinstance(data, Envelope) and data.text is not None:
        return data.text
    return dumps(data)


_VARYING = ("timings_ms", "budget", "isolation")
"""The envelope's keys measured with placeholders (their values must not decide what fits)."""


@functools.lru_cache(maxsize=256)
def _key(name: str) -> str:
    """An envelope key's JSON (a handful of fixed names, serialised once each)."""
    return dumps(name)


def _joined(data: dict[str, Any], parts: dict[str, str]) -> str:
    # the compact JSON of an object is "{" + ",".join(key ":" value) + "}": the parts already
    # serialised are reused, the others serialised here
    return "{" + ",".join(f"{_key(k)}:{parts[k] if k in parts else dumps(v)}" for k, v in data.items()) + "}"


def tokens_for(n_bytes: int) -> int:
    return math.ceil(n_bytes / 4)


@dataclass
class Option:
    """One way to render an entry, with what this rendering leaves out."""

    rendering: dict[str, Any]
    omissions: list[dict[str, Any]] = field(default_factory=list)


class Budget:
    """Fits entries into an envelope so its JSON never exceeds `limit_bytes`."""

    def __init__(
        self,
        envelope: dict[str, Any],
        max_tokens: int,
        byte_cap: int | None = None,
        counter: TokenCounter | None = None,
    ) -> None:
        self.envelope = envelope
        self.counter = counter
        if counter is not None:  # fixed-width room for the count, so reporting it never overflows
            budget = envelope.setdefault("budget", {})
            budget["counted"] = {"tokenizer": counter.name, "used_tokens": _TOKENS_PLACEHOLDER}
        self.limit = max_tokens * 4 if byte_cap is None else min(max_tokens * 4, byte_cap)
        envelope.setdefault("omissions", [])
        envelope["truncated"] = False
        self._reserved: dict[str, dict[str, Any]] = {}

    def _placeholders(self) -> dict[str, Any]:
        """The varying keys as measured: fixed-width placeholders for timings, the token count and
        the isolation count."""
        envelope = self.envelope
        probe: dict[str, Any] = {
            "budget": {
                **envelope.get("budget", {}),
                "used_tokens": _TOKENS_PLACEHOLDER,
                "unused_tokens": _TOKENS_PLACEHOLDER,
            }
        }
        if "timings_ms" in envelope:
            probe["timings_ms"] = dict.fromkeys(envelope["timings_ms"], _TIMING_PLACEHOLDER)
        if "isolation" in envelope:  # how many foreign hits were dropped must not decide what fits
            probe["isolation"] = {"rejected": _TOKENS_PLACEHOLDER}
        return probe

    def measure(self) -> int:
        """Size with fixed-width placeholders for timings, the token count and the isolation count."""
        return size_bytes({**self.envelope, **self._placeholders()})

    def fits(self) -> bool:
        return self.measure() <= self.limit

    def require_fit(self, what: str) -> None:
        if not self.fits():
            raise BudgetError(
                f"{what} does not fit in {self.limit // 4} tokens ({self.measure()} bytes needed); "
                "raise max_tokens",
                needed_tokens=tokens_for(self.measure()),
                max_tokens=self.limit // 4,
            )

    def reserve(self, key: str) -> None:
        """Keep room for a section placed later, so that naming its cut can never overflow."""
        self.envelope.setdefault(key, [])
        self._reserved[key] = {"what": key, "count": _TOKENS_PLACEHOLDER, "reason": "budget"}
        self.envelope["omissions"].append(self._reserved[key])

    def place(self, key: str, entries: list[tuple[str, list[Option]]], *, required: int = 0) -> None:
        """Place ranked entries under the budget without wasting it (docs/architecture.md, "Budget").

        1. The first `required` entries take their richest option that fits, or it is a BudgetError.
        2. The others take their shortest option, in rank order, as many as fit. When not all fit,
           room for naming the rest is kept first (a record of at most OMITTED_NAMES names of at most
           NAME_CHARS characters), so naming the cut can never evict an entry that fits.
        3. Each placed entry, in rank order, is then enriched to its richest option that still fits.

        More budget therefore never places fewer entries, entries are shortened before any is
        dropped, and the answer never exceeds the budget."""
        target: list[dict[str, Any]] = self.envelope.setdefault(key, [])
        omissions: list[dict[str, Any]] = self.envelope["omissions"]
        reserved = self._reserved.pop(key, None)
        if reserved is not None:
            del omissions[next(i for i, o in enumerate(omissions) if o is reserved)]
        base_items, base_omissions = list(target), list(omissions)
        chosen: list[Option] = []
        record: dict[str, Any] | None = None
        # The compact JSON of a list is "[" + ",".join(items) + "]", so the envelope's size is the
        # size with both lists empty plus each element's size and a comma between elements: each
        # element is serialised once here instead of the whole envelope at every step.
        target[:], omissions[:] = [], []
        frame = self.measure()
        sizes: dict[int, int] = {}

        def size(item: dict[str, Any]) -> int:
            known = sizes.get(id(item))
            if known is None:
                known = sizes[id(item)] = size_bytes(item)
            return known

        def render() -> bool:
            target[:] = [*base_items, *(o.rendering for o in chosen)]
            omissions[:] = [*base_omissions, *(r for o in chosen for r in o.omissions)]
            used = frame + sum(map(size, target)) + max(0, len(target) - 1)
            used += sum(map(size, omissions)) + max(0, len(omissions) - 1)
            if record is not None:  # changes between renders: measured afresh
                used += size_bytes(record) + (1 if omissions else 0)
                omissions.append(record)
            return used <= self.limit

        for label, options in entries[:required]:
            for option in options:
                chosen.append(option)
                if render():
                    break
                chosen.pop()
            else:
                render()
                raise BudgetError(
                    f"the subject {label!r} does not fit in {self.limit // 4} tokens; raise max_tokens",
                    max_tokens=self.limit // 4,
                )
        rest = entries[len(chosen) :]
        fixed = len(chosen)
        if not self._fill_shortest(chosen, rest, render):
            del chosen[fixed:]
            record = {"what": key, "count": _TOKENS_PLACEHOLDER, "reason": "budget"}
            record["names"] = ["x" * NAME_CHARS] * OMITTED_NAMES
            named = render()
            if not named:  # not even the names fit: the record keeps the count (a cut is never silent)
                del record["names"]
            self._fill_shortest(chosen, rest, render)

            def describe() -> dict[str, Any]:
                left = [label for label, _ in entries[len(chosen) :]]
                cut: dict[str, Any] = {"what": key, "count": len(left), "reason": "budget"}
                if named:
                    cut["names"] = [label[:NAME_CHARS] for label in left[:OMITTED_NAMES]]
                return cut

            record = describe()
            # the real record is no larger than the room kept for it: take more entries while they fit
            while len(chosen) < len(entries):
                chosen.append(entries[len(chosen)][1][-1])
                before, record = record, (describe() if len(chosen) < len(entries) else None)
                if not render():
                    chosen.pop()
                    record = before
                    break
        for position in range(fixed, len(chosen)):
            current = chosen[position]
            for option in entries[position][1]:
                if option is current:
                    break
                chosen[position] = option
                if render():
                    break
                chosen[position] = current
        render()
        self.require_fit("the envelope")

    @staticmethod
    def _fill_shortest(
        chosen: list[Option], rest: list[tuple[str, list[Option]]], render: Callable[[], bool]
    ) -> bool:
        """Append each entry's shortest option while it fits; False at the first that does not."""
        for _, options in rest:
            chosen.append(options[-1])
            if not render():
                chosen.pop()
                render()
                return False
        return True

    def note(self, omission: dict[str, Any]) -> None:
        """Record an omission decided elsewhere (clamps, deadlines); it must fit too."""
        self.envelope["omissions"].append(omission)
        self.require_fit("the envelope with its omissions")

    def finish(self, timings_ms: dict[str, float]) -> Envelope:
        """The finished answer. Its bulk is serialised once, here: the final measure and the JSON
        the transports send are made of the same parts (only the small varying keys twice)."""
        envelope = self.envelope
        envelope["truncated"] = envelope["truncated"] or bool(envelope["omissions"])
        parts = {k: dumps(v) for k, v in envelope.items() if k not in _VARYING}
        measured = len(_joined({**envelope, **self._placeholders()}, parts).encode("utf-8"))
        used = tokens_for(measured)
        envelope["budget"] = {**envelope.get("budget", {}), "used_tokens": used}
        if "max_tokens" in envelope["budget"]:
            envelope["budget"]["unused_tokens"] = max(0, envelope["budget"]["max_tokens"] - used)
        envelope["timings_ms"] = {k: min(round(v, 3), _TIMING_PLACEHOLDER) for k, v in timings_ms.items()}
        if self.counter is not None:
            counted = min(self.counter.count(_joined(envelope, parts)), _TOKENS_PLACEHOLDER)
            envelope["budget"]["counted"] = {"tokenizer": self.counter.name, "used_tokens": counted}
        return Envelope(envelope, _joined(envelope, parts))


def open_envelope(
    op: str,
    scope: Scope,
    *,
    as_of: datetime,
    backends: dict[str, str],
    max_tokens: int,
    rejected: int = 0,
    counter: TokenCounter | None = None,
) -> tuple[dict[str, Any], Budget]:
    """A new answer of operation `op` (explain, path, neighbourhood and the code operations) and the
    budget it is placed under. `backends` is the stores' description (their provenance)."""
    envelope: dict[str, Any] = {
        "v": ENVELOPE_VERSION,
        "op": op,
        "scope": scope.as_dict(),
        "as_of": iso(as_of),
        "isolation": {"rejected": rejected},
        "omissions": [],
        "truncated": False,
        "provenance": {**backends, "catalog": CATALOG_VERSION},
        "budget": {"max_tokens": max_tokens},
        "timings_ms": {"total": 0.0},
    }
    return envelope, Budget(envelope, max_tokens, counter=counter)
