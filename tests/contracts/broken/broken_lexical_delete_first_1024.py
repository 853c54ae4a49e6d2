"""Broken: delete builds one query of at most 1,024 id terms (a clause limit, as Lucene's) and
drops the ids past it, silently: deleting more ids at once leaves the rest searchable."""

from __future__ import annotations

from collections.abc import Sequence

from _shared import InRamTantivy, TestControlTantivy, lexical_factory  # noqa: F401

from graphctx.adapters.tantivy import TantivyLexicalIndex
from graphctx.contracts.lexical import LexicalIndexContract
from graphctx.scope import Scope


class DeleteCapped(TantivyLexicalIndex):
    name = "tantivy-delete-capped"

    def delete(self, scope: Scope, entity_ids: Sequence[str]) -> None:
        super().delete(scope, list(dict.fromkeys(entity_ids))[:1024])


class TestBrokenDeleteCapped(InRamTantivy, LexicalIndexContract):
    index_class = DeleteCapped


create_lexical_index = lexical_factory(DeleteCapped)
