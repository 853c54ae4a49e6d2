"""The evidence envelope: canonical JSON, the bytes/4 token estimate, and fitting under a budget.

The size of an answer must not depend on the instant it was produced, so timings are measured
against a fixed-width placeholder and `used_tokens` is an upper bound computed once.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from graphctx.clock import iso
from graphctx.errors import BudgetError
from graphctx.kernel.templates import CATALOG_VERSION
from graphctx.scope import Scope

ENVELOPE_VERSION = 1
_TIMING_PLACEHOLDER = 99999.999
_TOKENS_PLACEHOLDER = 99999
NAME_CHARS = 60
"""Omission records name what was cut by at most this many characters of each name."""


def dumps(data: Any) -> str:
    """The canonical serialisation every transport returns."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def size_bytes(data: Any) -> int:
    return len(dumps(data).encode("utf-8"))


def tokens_for(n_bytes: int) -> int:
    return math.ceil(n_bytes / 4)


@dataclass
class Option:
    """One way to render an entry, with what this rendering leaves out."""

    rendering: dict[str, Any]
    omissions: list[dict[str, Any]] = field(default_factory=list)


class Budget:
    """Fits entries into an envelope so its JSON never exceeds `limit_bytes`."""

    def __init__(self, envelope: dict[str, Any], max_tokens: int, byte_cap: int | None = None) -> None:
        self.envelope = envelope
        self.limit = max_tokens * 4 if byte_cap is None else min(max_tokens * 4, byte_cap)
        envelope.setdefault("omissions", [])
        envelope["truncated"] = False
        self._reserved: dict[str, dict[str, Any]] = {}

    def measure(self) -> int:
        """Size with fixed-width placeholders for timings, the token count and the isolation count."""
        probe = dict(self.envelope)
        if "timings_ms" in probe:
            probe["timings_ms"] = dict.fromkeys(probe["timings_ms"], _TIMING_PLACEHOLDER)
        probe["budget"] = {**probe.get("budget", {}), "used_tokens": _TOKENS_PLACEHOLDER}
        if "isolation" in probe:  # how many foreign hits were dropped must not decide what fits
            probe["isolation"] = {"rejected": _TOKENS_PLACEHOLDER}
        return size_bytes(probe)

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
        """Append each entry's richest option that fits; stop at the first entry none of whose
        options fit and name what was left out. `required` entries must fit or it is a BudgetError."""
        target: list[dict[str, Any]] = self.envelope.setdefault(key, [])
        omissions: list[dict[str, Any]] = self.envelope["omissions"]
        reserved = self._reserved.pop(key, None)
        if reserved is not None:
            del omissions[next(i for i, o in enumerate(omissions) if o is reserved)]
        placed: list[tuple[str, Option]] = []
        for index, (label, options) in enumerate(entries):
            for option in options:
                target.append(option.rendering)
                omissions.extend(option.omissions)
                if self.fits():
                    placed.append((label, option))
                    break
                self._unplace(key, option)
            else:
                if index < required:
                    raise BudgetError(
                        f"the subject {label!r} does not fit in {self.limit // 4} tokens; raise max_tokens",
                        max_tokens=self.limit // 4,
                    )
                self._omit_rest(key, placed, [name for name, _ in entries[index:]])
                return

    def _unplace(self, key: str, option: Option) -> None:
        self.envelope[key].pop()
        omissions = self.envelope["omissions"]
        del omissions[len(omissions) - len(option.omissions) :]

    def _omit_rest(self, key: str, placed: list[tuple[str, Option]], labels: list[str]) -> None:
        """Name what was left out; give back placed entries until the naming fits. The record always
        stays (with fewer or no names if need be): a cut is never silent."""
        record: dict[str, Any] = {"what": key, "count": 0, "reason": "budget"}
        self.envelope["omissions"].append(record)

        def describe(with_names: bool) -> None:
            record["count"] = len(labels)
            record.pop("names", None)
            if with_names:
                record["names"] = [label[:NAME_CHARS] for label in labels[:5]]

        describe(True)
        while not self.fits() and placed:
            label, option = placed.pop()
            self.envelope["omissions"].remove(record)  # the entry's own omissions sit before the record
            self._unplace(key, option)
            self.envelope["omissions"].append(record)
            labels.insert(0, label)
            describe(True)
        if not self.fits():
            describe(False)
        self.require_fit("the envelope")

    def note(self, omission: dict[str, Any]) -> None:
        """Record an omission decided elsewhere (clamps, deadlines); it must fit too."""
        self.envelope["omissions"].append(omission)
        self.require_fit("the envelope with its omissions")

    def finish(self, timings_ms: dict[str, float]) -> dict[str, Any]:
        self.envelope["truncated"] = self.envelope["truncated"] or bool(self.envelope["omissions"])
        used = tokens_for(self.measure())
        self.envelope["budget"] = {**self.envelope.get("budget", {}), "used_tokens": used}
        self.envelope["timings_ms"] = {
            k: min(round(v, 3), _TIMING_PLACEHOLDER) for k, v in timings_ms.items()
        }
        return self.envelope


def open_envelope(
    op: str, scope: Scope, *, as_of: datetime, backends: dict[str, str], max_tokens: int, rejected: int = 0
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
    return envelope, Budget(envelope, max_tokens)
