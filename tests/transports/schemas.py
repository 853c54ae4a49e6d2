"""Checking an answer against a published JSON schema with every declared object closed, so that a
field the answer models do not declare fails (the published schemas leave objects open)."""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator


def closed(schema: Any) -> Any:
    if isinstance(schema, list):
        return [closed(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: closed(v) for k, v in schema.items()}
    if "properties" in out:
        out["additionalProperties"] = False
    return out


def check(schema: dict[str, Any], data: Any, label: str) -> None:
    errors = sorted(Draft202012Validator(closed(schema)).iter_errors(data), key=lambda e: list(e.path))
    assert not errors, f"{label}: {errors[0].message} at {list(errors[0].path)}"
