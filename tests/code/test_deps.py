"""The import scan that decides which unchanged files may depend on a changed module: every import
statement found, and nothing glued to a longer word."""

from __future__ import annotations

import random
import re

from graphctx.code import deps
from graphctx.code.deps import imported_modules

# the scan's definition: each pattern preceded by a word boundary, found left to right
_FROM = re.compile(rb"\bfrom\s+(\.*)\s*([A-Za-z_][\w.]*)?\s+import\b")
_IMPORT = re.compile(
    rb"\bimport\s+([A-Za-z_][\w.]*(?:\s+as\s+\w+)?(?:\s*,\s*[A-Za-z_][\w.]*(?:\s+as\s+\w+)?)*)"
)


def _spans(pattern: re.Pattern[bytes], text: bytes) -> list[tuple[int, int, tuple[bytes | None, ...]]]:
    return [(m.start(), m.end(), m.groups()) for m in pattern.finditer(text)]


def _found(pattern: re.Pattern[bytes], text: bytes) -> list[tuple[int, int, tuple[bytes | None, ...]]]:
    return [(m.start(), m.end(), m.groups()) for m in deps._matches(pattern, text)]


def test_names_every_import_statement_and_its_prefixes():
    text = b"import os.path, json as j\nfrom .sib import x\nfrom .. import up\nif 1: import a.b\n"
    got = imported_modules("pkg.sub.mod", False, text)
    assert got >= {"os", "os.path", "json", "pkg.sub.sib", "pkg", "a", "a.b"}


def test_a_keyword_glued_to_a_longer_word_is_not_an_import():
    """`import b` inside `xfrom a import b` is still read as one (the scan over-approximates)."""
    text = b"reimport os\nxfrom a import b\n_import c\nfrom_x import y\nimport_z\nmyfrom q import r\n"
    assert imported_modules("m", False, text) == {"b", "y", "r"}


def test_the_scan_finds_exactly_what_the_word_bounded_patterns_find():
    """Adversarial texts (keywords inside words, overlapping candidates, continuations) and random
    ones: the same matches, at the same places, as finditer with a leading word boundary."""
    cases = [
        b"xfrom from a import b",
        b"ximport import os",
        b"fromfrom x import y import z",
        b"a.from b import c",
        b"1import x, y as z",
        b"from\\\n  pkg import (a)",
        b"_from . import x; import  y ,z",
        b"importimport a",
        b"from . import",
    ]
    rng = random.Random(7)
    alphabet = [b"from", b"import", b" ", b"\n", b".", b"x", b"_", b"as", b",", b"1", b"\\\n", b"\t", b"y.z"]
    cases += [b"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40))) for _ in range(3000)]
    for text in cases:
        assert _found(deps._FROM, text) == _spans(_FROM, text), text
        assert _found(deps._IMPORT, text) == _spans(_IMPORT, text), text
