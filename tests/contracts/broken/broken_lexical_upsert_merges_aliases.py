"""Broken on purpose: an upsert merges a document's aliases with those it had (a multi-valued field
updated by appending, as a partial update does) instead of replacing them: an alias removed from the
entity keeps finding it until the document is deleted.
"""

from __future__ import annotations

from collections.abc import Sequence

from _shared import InRamTantivy, RemembersDocs, TestControlTantivy, lexical_factory  # noqa: F401

from graphctx.contracts.lexical import LexicalIndexContract
from graphctx.kernel.ports import LexicalDoc
from graphctx.scope import Scope


class MergesAliases(RemembersDocs):
    name = "tantivy-upsert-merges-aliases"

    def upsert(self, scope: Scope, docs: Sequence[LexicalDoc]) -> None:
        merged = []
        for new in docs:
            old = self.kept().get((scope, new.entity_id))
            aliases = new.aliases if old is None else tuple(dict.fromkeys([*old.aliases, *new.aliases]))
            merged.append(new.model_copy(update={"aliases": aliases}))  # the bug: the old aliases stay
        super().upsert(scope, merged)


class TestBrokenMergesAliases(InRamTantivy, LexicalIndexContract):
    index_class = MergesAliases


create_lexical_index = lexical_factory(MergesAliases)
