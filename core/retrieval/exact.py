"""Which parts of a query to try as exact identifiers: the whole query, quoted phrases, and tokens
that look like identifiers (dotted, snake_case, kebab-case, camelCase, with digits, paths, hosts)."""

from __future__ import annotations

import re

from graphctx import bounds

MAX_CANDIDATES = 16
_QUOTED = re.compile(r"[\"'`]([^\"'`]{1,256})[\"'`]")
_STRIP = "\"'`,;!?()[]{}<>"
_IDENTIFIER_HINT = re.compile(r"[._:/@\-#0-9]|[a-z][A-Z]")


def exact_candidates(query: str) -> list[str]:
    found: list[str] = [query, query.strip()]
    found += [m.group(1).strip() for m in _QUOTED.finditer(query)]
    for raw in query.split():
        token = raw.strip(_STRIP).rstrip(".:")
        if len(token) > 1 and _IDENTIFIER_HINT.search(token):
            found.append(token)
    kept = [c for c in dict.fromkeys(found) if c and len(c.encode("utf-8")) <= bounds.NAME_BYTES]
    return kept[:MAX_CANDIDATES]
