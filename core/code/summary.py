"""Summaries of docstrings and document sections: the first sentence of the first paragraph, cut
at a word boundary with … only when that sentence is longer than the bound (never mid-word, and
never a first line that stops mid-sentence because the docstring wraps)."""

from __future__ import annotations

import re

from graphctx.redact import redact

SUMMARY_CHARS = 200
"""A summary is the first sentence, cut at a word boundary beyond this many characters."""

_SENTENCE_END = re.compile(r"[.!?](?=\s|$)")
_HEADING = re.compile(r"^[A-Z][A-Za-z ]{0,24}:$")
_ABBREVIATIONS = ("e.g", "i.e", "etc", "vs", "cf", "approx", "incl", "Mr", "Dr", "No")


def _first_sentence(text: str) -> str:
    for match in _SENTENCE_END.finditer(text):
        before = text[: match.start()]
        word = before.rsplit(None, 1)[-1] if before.split() else ""
        if word.rstrip(".").endswith(_ABBREVIATIONS) or (len(word) == 1 and word.isupper()):
            continue  # "e.g. x", "i.e. y", an initial: not the end of a sentence
        return text[: match.end()]
    return text


def first_line(text: str | None, limit: int = SUMMARY_CHARS) -> str:
    """A docstring's summary: its first paragraph up to the end of its first sentence, cut at a
    word boundary with … only when that sentence is longer than `limit` characters. A field list,
    doctest, bullet or heading line ends the paragraph."""
    if not text:
        return ""
    paragraph: list[str] = []
    for raw in text.strip().splitlines():
        line = raw.strip()
        if not line:
            if paragraph:
                break
            continue
        if paragraph and (line.startswith((":", "@", ">>>", "-", "*")) or _HEADING.match(line)):
            break  # a field list, doctest, bullet or section heading ("Args:") starts: the summary ended
        paragraph.append(line)
    return redact(shorten(_first_sentence(" ".join(paragraph)), limit))


def shorten(text: str, limit: int) -> str:
    """Text cut to at most `limit` characters at a word boundary, ending with … when cut."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space > limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:-") + "…"
