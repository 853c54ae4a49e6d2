"""What the indexes hold for an entity: approved text only (names, aliases, qualified names, summaries)."""

from __future__ import annotations

from graphctx.kernel.ports import LexicalDoc
from graphctx.model import Entity


def lexical_doc(entity: Entity) -> LexicalDoc:
    return LexicalDoc(
        entity_id=entity.id,
        name=entity.name,
        aliases=entity.aliases,
        type=entity.type,
        qualified_name=entity.qualified_name or "",
        path=entity.path or "",
        summary=entity.summary,
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
    return ". ".join(p for p in parts if p)
