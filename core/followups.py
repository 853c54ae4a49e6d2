"""Follow-ups as calls: an answer names the next call to make as `op {"arg": value}`, and the CLI
reads it back to print the command line that does the same. Only the standard library: the CLI's
human output of an answer sent by `graphctx serve` needs this and nothing of the envelope."""

from __future__ import annotations

import json
import re
from typing import Any


def call(op: str, **args: Any) -> str:
    """A follow-up as the exact call to make: `op {"arg": value}`, the tool and its JSON arguments
    over MCP and HTTP; the CLI prints it as the command line that does the same."""
    return f"`{op} {json.dumps(args, ensure_ascii=False)}`"


_CALL = re.compile(r"`([a-z_]+) (?=\{)")


def calls_in(text: str) -> list[tuple[str, dict[str, Any]]]:
    """The calls a follow-up names (see `call`), in order; text that is not one is skipped."""
    found = []
    decoder = json.JSONDecoder()
    for match in _CALL.finditer(text):
        try:
            args, end = decoder.raw_decode(text, match.end())
        except json.JSONDecodeError:
            continue
        if isinstance(args, dict) and text[end : end + 1] == "`":
            found.append((match.group(1), args))
    return found
