"""Broken: the unique upsert key joins tenant, namespace, graph id and entity id with ':' -- a
character scope selectors may hold: tenant `acme:eu`/namespace `prod` and tenant `acme`/namespace
`eu:prod` share every key, so a write (upsert or delete) in one removes the other's document."""

from __future__ import annotations

from collections.abc import Sequence

from _shared import InRamTantivy, RemembersScopes, TestControlTantivy, lexical_factory  # noqa: F401

from graphctx.adapters.tantivy import TantivyLexicalIndex
from graphctx.contracts.lexical import LexicalIndexContract
from graphctx.kernel.ports import LexicalDoc
from graphctx.scope import Scope


def colon(s: Scope) -> str:
    return ":".join((s.tenant_id, s.namespace, s.graph_id))


class ColonKey(RemembersScopes, TantivyLexicalIndex):
    name = "tantivy-colon-key"

    def _colliding(self, scope: Scope) -> list[Scope]:
        return [s for s in self.scopes_seen() if s != scope and colon(s) == colon(scope)]

    def upsert(self, scope: Scope, docs: Sequence[LexicalDoc]) -> None:
        self._remember(scope)
        for s in self._colliding(scope):  # the key term delete hits the other scope's document
            super().delete(s, [d.entity_id for d in docs])
        super().upsert(scope, docs)

    def delete(self, scope: Scope, entity_ids: Sequence[str]) -> None:
        for s in self._colliding(scope):
            super().delete(s, entity_ids)
        super().delete(scope, entity_ids)


class TestBrokenColonKey(InRamTantivy, LexicalIndexContract):
    index_class = ColonKey


create_lexical_index = lexical_factory(ColonKey)
