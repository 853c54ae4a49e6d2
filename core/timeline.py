"""Time-aware facts: which stored facts a batch of new ones supersedes, and who superseded whom.

A single-valued predicate (`graphctx.model.SINGLE_VALUED`, configurable) has one value at a time on
one side: `owned_by` per subject, `on_call_for` per object (the service). Within such a group the
periods never overlap: a fact that is still open when a later one starts ends at that start. Ends
only ever shorten a period, so applying a plan twice changes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from graphctx.model import Fact, Side

GroupKey = tuple[str, str, str]
"""(predicate, side, the entity on that side)."""

_BEGINNING = datetime.min.replace(tzinfo=UTC)


def group_key(fact: Fact, single: Mapping[str, Side]) -> GroupKey | None:
    side = single.get(fact.predicate)
    if side is None:
        return None
    anchor = fact.subject_id if side == "subject" else fact.object_id
    return None if anchor is None else (fact.predicate, side, anchor)


def _start(fact: Fact) -> datetime:
    return _utc(fact.valid_from) if fact.valid_from is not None else _BEGINNING


def _utc(when: datetime) -> datetime:
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


@dataclass(frozen=True)
class Supersession:
    fact_id: str
    by: str
    valid_to: datetime


@dataclass
class Timeline:
    """What a batch does to validity: the incoming facts in their final form, the stored facts it
    ends (id -> new valid_to) and which fact superseded which."""

    facts: list[Fact] = field(default_factory=list)
    ends: dict[str, datetime] = field(default_factory=dict)
    superseded: list[Supersession] = field(default_factory=list)


def resolve(
    incoming: Sequence[Fact],
    given: Sequence[frozenset[str]],
    stored: Iterable[Fact],
    single: Mapping[str, Side],
    now: datetime,
) -> Timeline:
    """`incoming` in batch order with the fields each record set (`given`); `stored` holds every
    stored fact of the incoming ids and of the single-valued groups they touch.

    - A record that does not set `valid_from` or `valid_to` keeps the stored value of an existing
      fact with its id (re-running a load never reopens what supersession or `forget` ended).
    - A new undated value of a single-valued group that already has a current value starts now.
    - Within a group, each fact still open when a later one starts ends at that start (the later
      one in batch order wins a tie)."""
    by_id = {f.id: f for f in stored}
    out: list[Fact] = []
    for fact, fields in zip(incoming, given, strict=True):
        old = by_id.get(fact.id)
        keep: dict[str, object] = {}
        if old is not None:
            if "valid_from" not in fields:
                keep["valid_from"] = old.valid_from
            if "valid_to" not in fields:
                keep["valid_to"] = old.valid_to
        out.append(fact.model_copy(update=keep) if keep else fact)

    groups: dict[GroupKey, dict[str, tuple[int, Fact]]] = {}
    for f in by_id.values():
        key = group_key(f, single)
        if key is not None:
            groups.setdefault(key, {})[f.id] = (0, f)
    for rank, fact in enumerate(list(out), start=1):
        key = group_key(fact, single)
        if key is None:
            continue
        members = groups.setdefault(key, {})
        placed = fact
        if fact.valid_from is None and fact.id not in by_id and _has_current(members.values(), fact, now):
            placed = out[rank - 1] = fact.model_copy(update={"valid_from": now})
        members[placed.id] = (rank, placed)

    timeline = Timeline()
    final = {f.id: f for f in out}
    for members in groups.values():
        ordered = sorted(members.values(), key=lambda m: (_start(m[1]), m[0], m[1].id))
        for i, (_, fact) in enumerate(ordered):
            nxt = ordered[i + 1][1] if i + 1 < len(ordered) else None
            if nxt is None:
                continue
            cut = _start(nxt)
            if fact.valid_to is not None and _utc(fact.valid_to) <= cut:
                continue
            timeline.superseded.append(Supersession(fact.id, nxt.id, cut))
            if fact.id in final:
                final[fact.id] = final[fact.id].model_copy(update={"valid_to": cut})
            else:
                timeline.ends[fact.id] = cut
    timeline.facts = [final[f.id] for f in out]
    return timeline


def _has_current(members: Iterable[tuple[int, Fact]], fact: Fact, now: datetime) -> bool:
    return any(other.id != fact.id and other.is_valid_at(now) for _, other in members)


def replacing_end(successor: Fact, single: Mapping[str, Side]) -> tuple[str | None, str | None]:
    """(entity id, literal value) of what a successor changed: the end its group does not anchor --
    the new owner of `owned_by` (grouped by subject), the new person `on_call_for` (by object)."""
    if single.get(successor.predicate) == "object":
        return successor.subject_id, None
    return successor.object_id, successor.value


def successors(facts: Sequence[Fact], single: Mapping[str, Side]) -> dict[str, Fact]:
    """For explain: fact id -> the fact of its single-valued group that starts where it ends."""
    starts: dict[tuple[GroupKey, datetime], Fact] = {}
    for f in facts:
        key = group_key(f, single)
        if key is not None and f.valid_from is not None:
            starts.setdefault((key, _utc(f.valid_from)), f)
    out: dict[str, Fact] = {}
    for f in facts:
        key = group_key(f, single)
        if key is None or f.valid_to is None:
            continue
        nxt = starts.get((key, _utc(f.valid_to)))
        if nxt is not None and nxt.id != f.id:
            out[f.id] = nxt
    return out
