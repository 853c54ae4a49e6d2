"""The adapter author's documents link only to files and sections that exist."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = [
    "docs/adapters.md",
    "docs/gremlin-dialects.md",
    "docs/contracts-changelog.md",
]
LINK = re.compile(r"\]\(([^)#\s]*)(#[^)\s]*)?\)")


def anchors(text: str) -> set[str]:
    return {
        re.sub(r"[^a-z0-9 _-]", "", h.strip().lower()).replace(" ", "-")
        for h in re.findall(r"^#+ (.+)$", text, re.M)
    }


@pytest.mark.parametrize("doc", DOCS)
def test_every_link_resolves(doc: str) -> None:
    path = REPO / doc
    text = path.read_text()
    links = LINK.findall(text)
    assert links, f"{doc} has no links to check"
    for target, anchor in links:
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        resolved = (path.parent / target).resolve() if target else path
        assert resolved.exists(), f"{doc} links to {target}, which does not exist"
        if anchor and resolved.suffix == ".md":
            assert anchor[1:] in anchors(resolved.read_text()), (
                f"{doc} links to {target}{anchor}: no such section"
            )
