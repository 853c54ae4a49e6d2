"""Summaries end at a sentence boundary within a bound, never mid-sentence because a docstring wraps."""

from __future__ import annotations

import pytest

from graphctx.code.markdown import parse_markdown
from graphctx.code.summary import SUMMARY_CHARS, first_line


@pytest.mark.parametrize(
    ("docstring", "summary"),
    [
        (
            "Print a message\nand a newline to stdout.\n\nMore text.",
            "Print a message and a newline to stdout.",
        ),
        ("Help with x. More text here.", "Help with x."),
        ("Return the value, e.g. the total. Then more.", "Return the value, e.g. the total."),
        ("Written by J. Smith for us. More.", "Written by J. Smith for us."),
        ("Do it.\nArgs:\n    x: the thing", "Do it."),
        ("Compute it\n:param x: the thing", "Compute it"),
        ("Compute it\n>>> compute()\n1", "Compute it"),
        ("Return X for the given\nvalues of: a mapping.", "Return X for the given values of: a mapping."),
        ("", ""),
        ("   \n\n  Indented first\n  paragraph.\n", "Indented first paragraph."),
    ],
)
def test_a_docstring_summary_is_its_first_sentence(docstring, summary):
    assert first_line(docstring) == summary


def test_a_long_sentence_is_cut_at_a_word_boundary_with_an_ellipsis():
    text = " ".join(["word"] * 100) + "."
    summary = first_line(text)
    assert len(summary) <= SUMMARY_CHARS and summary.endswith("word…")


def test_a_section_summary_is_its_first_prose_sentence():
    doc = parse_markdown("a.md", b"# Title\n\n```\ncode. here.\n```\n\nThe guide\nexplains it. More.\n")
    assert doc.sections[0].summary == "The guide explains it."
