"""Markdown documents split by heading into sections, and the symbols each section mentions:
qualified names written out, or backticked names that point at exactly one known symbol."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from graphctx.code.summary import first_line
from graphctx.redact import redact

HEADING_CHARS = 200

_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_BACKTICK = re.compile(r"`([^`\n]{1,200})`")
_DOTTED = re.compile(r"(?<![\w.])[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
_SLUG_DROP = re.compile(r"[^\w\- ]+")


@dataclass
class Section:
    slug: str
    heading: str
    start: int
    end: int
    summary: str = ""
    text: list[str] = field(default_factory=list)


@dataclass
class Document:
    relpath: str
    lines: int
    title: str
    sections: list[Section]


def slugify(heading: str) -> str:
    slug = _SLUG_DROP.sub("", heading.strip().lower()).replace(" ", "-")
    return slug or "section"


def parse_markdown(relpath: str, data: bytes) -> Document:
    lines = data.decode("utf-8", errors="replace").splitlines()
    sections: list[Section] = []
    seen: dict[str, int] = {}
    fence: str | None = None
    title = ""

    def open_section(heading: str, line: int) -> None:
        heading = redact(heading.strip()[:HEADING_CHARS]) or "(untitled)"
        base = slugify(heading)
        seen[base] = seen.get(base, 0) + 1
        slug = base if seen[base] == 1 else f"{base}-{seen[base]}"
        if sections:
            sections[-1].end = max(sections[-1].start, line - 1)
        sections.append(Section(slug, heading, line, line))

    for number, line in enumerate(lines, start=1):
        fence_match = _FENCE.match(line)
        if fence is not None:
            if (
                fence_match
                and fence_match.group(1)[0] == fence[0]
                and len(fence_match.group(1)) >= len(fence)
            ):
                fence = None
            if sections:
                sections[-1].text.append(line)
            continue
        if fence_match:
            fence = fence_match.group(1)
            if sections:
                sections[-1].text.append(line)
            continue
        atx = _ATX.match(line)
        setext = _SETEXT.match(line) if number > 1 else None
        if atx:
            open_section(atx.group(2), number)
        elif (
            setext
            and lines[number - 2].strip()
            and not _ATX.match(lines[number - 2])
            and (not sections or sections[-1].start != number - 1)
        ):
            # the previous line was a paragraph line; it becomes the heading
            if sections and sections[-1].text and sections[-1].text[-1] == lines[number - 2]:
                sections[-1].text.pop()
            open_section(lines[number - 2], number - 1)
        elif sections:
            sections[-1].text.append(line)
        if not title and line.strip():
            title = (atx.group(2) if atx else line.strip())[:HEADING_CHARS]
    total = max(1, len(lines))
    if sections:
        sections[-1].end = total
    for section in sections:
        section.summary = _first_paragraph_line(section.text)
    return Document(relpath, total, redact(title), sections)


def _first_paragraph_line(text: list[str]) -> str:
    """The section's first prose paragraph (outside code fences), summarised to its first sentence."""
    fence = False
    paragraph: list[str] = []
    for line in text:
        stripped = line.strip()
        if _FENCE.match(line):
            fence = not fence
            if paragraph:
                break
            continue
        if fence or _SETEXT.match(line):
            continue
        if not stripped:
            if paragraph:
                break
            continue
        paragraph.append(stripped)
    return first_line("\n".join(paragraph))


class MentionIndex:
    """Known symbols by qualified name and by every dotted suffix of it (for backticked names)."""

    def __init__(self, qualified: dict[str, str]) -> None:
        self.qualified = qualified  # qualified name -> entity id
        self.suffixes: dict[str, set[str]] = {}
        for qname, entity_id in qualified.items():
            parts = qname.split(".")
            for i in range(1, len(parts)):
                self.suffixes.setdefault(".".join(parts[i:]), set()).add(entity_id)

    def mentions(self, text: list[str]) -> dict[str, list[int]]:
        """entity id -> 0-based offsets of the lines (within `text`) that mention it."""
        found: dict[str, list[int]] = {}
        for offset, line in enumerate(text):
            hits: set[str] = set()
            for dotted in _DOTTED.findall(line):
                entity_id = self.qualified.get(dotted.rstrip("."))
                if entity_id is not None:
                    hits.add(entity_id)
            for raw in _BACKTICK.findall(line):
                name = raw.strip().removesuffix("()")
                entity_id = self.qualified.get(name)
                if entity_id is None:
                    owners = self.suffixes.get(name, ())
                    entity_id = next(iter(owners)) if len(owners) == 1 else None
                if entity_id is not None:
                    hits.add(entity_id)
            for entity_id in hits:
                found.setdefault(entity_id, []).append(offset)
        return found
