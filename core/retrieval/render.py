"""How entities and facts appear in an envelope: concise, sourced, opaque ids only on request."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from graphctx.clock import compact_iso
from graphctx.envelope import Option
from graphctx.model import Entity, Fact

SHORT_SUMMARY_CHARS = 160


def entity_card(entity: Entity, *, include_ids: bool, summary_chars: int | None = None) -> dict[str, Any]:
    card: dict[str, Any] = {"name": entity.name, "type": entity.type}
    if include_ids:
        card["id"] = entity.id
    if entity.qualified_name and entity.qualified_name != entity.name:
        card["qualified_name"] = entity.qualified_name
    if entity.aliases:
        card["aliases"] = list(entity.aliases)
    summary = entity.summary
    if summary_chars is not None and len(summary) > summary_chars:
        summary = summary[:summary_chars].rstrip() + "…"
    if summary:
        card["summary"] = summary
    if entity.path:
        location: dict[str, Any] = {"path": entity.path}
        if entity.line_start:
            location["lines"] = [entity.line_start, entity.line_end or entity.line_start]
        card["location"] = location
    if entity.signature:
        card["signature"] = entity.signature
    if entity.source:
        card["source"] = entity.source
    if entity.updated_at:
        card["updated_at"] = compact_iso(entity.updated_at)
    return card


def fact_line(fact: Fact, root_id: str, names: Mapping[str, str], *, include_ids: bool) -> dict[str, Any]:
    line: dict[str, Any] = {}
    if fact.subject_id == root_id:
        line["predicate"] = fact.predicate
        if fact.object_id is not None:
            line["object"] = names.get(fact.object_id, fact.object_id)
    else:
        line["subject"] = names.get(fact.subject_id, fact.subject_id)
        line["predicate"] = fact.predicate
    if fact.value is not None:
        line["value"] = fact.value
    if fact.valid_from:
        line["valid_from"] = compact_iso(fact.valid_from)
    if fact.valid_to:
        line["valid_to"] = compact_iso(fact.valid_to)
    if fact.confidence != 1.0:
        line["confidence"] = fact.confidence
    if fact.source:
        line["source"] = fact.source
    if include_ids:
        line["id"] = fact.id
    return line


def facts_about(entity_id: str, facts: Sequence[Fact]) -> list[Fact]:
    """Facts touching the entity in a stable reading order: outgoing first, by predicate."""
    mine = [f for f in facts if entity_id in (f.subject_id, f.object_id)]
    return sorted(mine, key=lambda f: (f.subject_id != entity_id, f.predicate, f.object_id or "", f.id))


def item_options(
    base: dict[str, Any], label: str, fact_lines: list[dict[str, Any]], key: str = "facts"
) -> list[Option]:
    """Richest first: every fact, then halving the facts, then none, then a short summary."""
    options: list[Option] = []
    keep = len(fact_lines)
    while True:
        rendering = dict(base)
        if fact_lines:
            rendering[key] = fact_lines[:keep]
        dropped = len(fact_lines) - keep
        omissions = [{"what": key, "of": label, "count": dropped, "reason": "budget"}] if dropped else []
        options.append(Option(rendering, omissions))
        if keep == 0:
            break
        keep //= 2
    if "summary" in base and len(base["summary"]) > SHORT_SUMMARY_CHARS:
        short = {k: v for k, v in options[-1].rendering.items()}
        short["summary"] = base["summary"][:SHORT_SUMMARY_CHARS].rstrip() + "…"
        omissions = [*options[-1].omissions, {"what": "summary", "of": label, "reason": "budget"}]
        options.append(Option(short, omissions))
    return options
