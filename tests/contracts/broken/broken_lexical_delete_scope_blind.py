"""Broken on purpose: delete removes the entity id from every scope that holds it (a delete by entity id
term, without the scope).
"""

from __future__ import annotations

from collections.abc import Sequence

from _shared import InRamTantivy, RemembersScopes, TestControlTantivy, lexical_factory  # noqa: F401  (the control runs here)

from graphctx.adapters.tantivy import TantivyLexicalIndex
from graphctx.contracts.lexical import LexicalIndexContract
from graphctx.kernel.ports import LexicalDoc
from graphctx.scope import Scope


class DeleteEverywhere(RemembersScopes, TantivyLexicalIndex):
    name = "tantivy-delete-everywhere"

    def upsert(self, scope: Scope, docs: Sequence[LexicalDoc]) -> None:
        self._remember(scope)
        super().upsert(scope, docs)

    def delete(self, scope: Scope, entity_ids: Sequence[str]) -> None:
        for seen in {scope, *self.scopes_seen()}:
            super().delete(seen, entity_ids)


class TestBrokenDeleteEverywhere(InRamTantivy, LexicalIndexContract):
    index_class = DeleteEverywhere


create_lexical_index = lexical_factory(DeleteEverywhere)
