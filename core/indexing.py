"""What the indexes hold for an entity: approved text only (names, aliases, qualified names, summaries)
and its indexed-only search text, which the lexical index searches but never stores."""

from __future__ import annotations

from graphctx.kernel.ports import LexicalDoc
from graphctx.model import Entity

EMBEDDED_SEARCH_CHARS = 600
"""How much of the search text the dense leg embeds: a static model averages its tokens, so a long
docstring tail would only dilute the names and the first lines."""


def lexical_doc(entity: Entity) -> LexicalDoc:
    return LexicalDoc(
        entity_id=entity.id,
        name=entity.name,
        aliases=entity.aliases,
        type=entity.type,
        qualified_name=entity.qualified_name or "",
        path=entity.path or "",
        summary=entity.summary,
        text=entity.search_text,
        content_hash=entity.content_hash,
    )


def embedding_text(entity: Entity) -> str:
    """The text the dense leg embeds: names first, the summary last (static models average tokens)."""
    parts = [entity.name, *entity.aliases]
    if entity.qualified_name and entity.qualified_name != entity.name:
        parts.append(entity.qualified_name)
    parts.append(entity.type)
    if entity.summary:
        parts.append(entity.summary)
    if entity.search_text:
        parts.append(entity.search_text[:EMBEDDED_SEARCH_CHARS])
    return ". ".join(p for p in parts if p)
