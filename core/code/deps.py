"""Which unchanged files might depend on a changed module, without parsing them.

A file's resolution only consults modules it names in an import statement (absolute or relative),
the packages above it, and — through those modules — their own imports and submodules. A regex
over the raw text finds every import statement (and, harmlessly, some that are not: in strings or
comments), so the reverse reachability built on it (graphctx.code.workspace) over-approximates the
files whose resolution can consult a changed module. Those files alone are parsed and re-resolved."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

_CONTINUATION = re.compile(rb"\\\r?\n")
# Each starts with its keyword, so re finds candidates by a fast literal search; the word boundary
# before the keyword is checked in `_matches` (a leading \b made the scan ten times slower).
_FROM = re.compile(rb"from\s+(\.*)\s*([A-Za-z_][\w.]*)?\s+import\b")
_IMPORT = re.compile(
    rb"import\s+([A-Za-z_][\w.]*(?:\s+as\s+\w+)?(?:\s*,\s*[A-Za-z_][\w.]*(?:\s+as\s+\w+)?)*)"
)
_AS = re.compile(rb"\s+as\s+\w+")
_WORD = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


def _matches(pattern: re.Pattern[bytes], text: bytes) -> Iterator[re.Match[bytes]]:
    """What finditer finds with a word boundary before the pattern: a match preceded by a word
    character is not one, and the search goes on from the next position (a later match may start
    inside it)."""
    pos = 0
    while (match := pattern.search(text, pos)) is not None:
        start = match.start()
        if start and text[start - 1] in _WORD:
            pos = start + 1
            continue
        yield match
        pos = match.end()


def _prefixes(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[: i + 1]) for i in range(len(parts))]


def imported_modules(
    module: str, is_package: bool, data: bytes, absolute: Callable[[str], str] | None = None
) -> set[str]:
    """Module names (and every dotted prefix) a file's import statements can name; `absolute`
    maps an absolute import to the module Python finds from this file (both are kept)."""
    text = _CONTINUATION.sub(b" ", data)
    package = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()
    for match in _matches(_FROM, text):
        dots, name = len(match.group(1)), (match.group(2) or b"").decode("ascii", "replace")
        if dots:
            parts = package.split(".") if package else []
            if dots - 1 > len(parts):
                continue
            base = parts[: len(parts) - (dots - 1)] if dots > 1 else parts
            name = ".".join([*base, *([name] if name else [])])
        elif name and absolute is not None:
            found.update(_prefixes(absolute(name)))
        if name:
            found.update(_prefixes(name))
    for match in _matches(_IMPORT, text):
        for item in _AS.sub(b"", match.group(1)).split(b","):
            name = item.strip().decode("ascii", "replace")
            if name:
                found.update(_prefixes(name))
                if absolute is not None:
                    found.update(_prefixes(absolute(name)))
    if package:
        found.update(_prefixes(package))  # relative imports by level name the enclosing packages
    return found
