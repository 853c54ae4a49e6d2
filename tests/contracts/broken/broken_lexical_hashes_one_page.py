"""Broken on purpose: `hashes` reads one page of 1,000 documents and stops: reconcile never sees the rest of a
large scope (and re-indexes it forever).
"""

from __future__ import annotations

from collections.abc import Sequence

from _shared import InRamTantivy, RemembersScopes, TestControlTantivy, lexical_factory  # noqa: F401  (the control runs here)

from graphctx.adapters.tantivy import TantivyLexicalIndex
from graphctx.contracts.lexical import LexicalIndexContract
from graphctx.kernel.ports import LexicalDoc
from graphctx.scope import Scope


class OnePageHashes(RemembersScopes, TantivyLexicalIndex):
    name = "tantivy-hashes-one-page"

    def upsert(self, scope: Scope, docs: Sequence[LexicalDoc]) -> None:
        self._remember(scope)
        super().upsert(scope, docs)

    def hashes(self, scope: Scope) -> dict[str, str]:
        return dict(list(super().hashes(scope).items())[:1000])


class TestBrokenOnePageHashes(InRamTantivy, LexicalIndexContract):
    index_class = OnePageHashes


create_lexical_index = lexical_factory(OnePageHashes)
