"""Broken on purpose: a delete is a tombstone (a soft delete, purged by a later merge) that reads filter
out -- and search filters it out of the engine's top k, after the cut: when deleted documents match
best, the answer comes back short. `hashes` and what is returned are right.
"""

from __future__ import annotations

from collections.abc import Sequence

from _shared import InRamTantivy, TestControlTantivy, lexical_factory  # noqa: F401  (the control runs here)

from graphctx.adapters.tantivy import TantivyLexicalIndex
from graphctx.contracts.lexical import LexicalIndexContract
from graphctx.kernel.ports import LexicalDoc, LexicalHit
from graphctx.scope import Scope


class DeletesFilteredAfterCut(TantivyLexicalIndex):
    name = "tantivy-deletes-filtered-after-cut"

    def _tombstones(self) -> set[tuple[Scope, str]]:
        dead: set[tuple[Scope, str]] = self.__dict__.setdefault("_dead", set())
        return dead

    def upsert(self, scope: Scope, docs: Sequence[LexicalDoc]) -> None:
        super().upsert(scope, docs)
        self._tombstones().difference_update((scope, d.entity_id) for d in docs)

    def delete(self, scope: Scope, entity_ids: Sequence[str]) -> None:
        self._tombstones().update((scope, e) for e in entity_ids)  # purged "later"

    def search(self, scope: Scope, text: str, k: int) -> list[LexicalHit]:
        hits = super().search(scope, text, k)
        return [h for h in hits if (scope, h.entity_id) not in self._tombstones()]  # the bug: after the cut

    def hashes(self, scope: Scope) -> dict[str, str]:
        return {e: h for e, h in super().hashes(scope).items() if (scope, e) not in self._tombstones()}


class TestBrokenLexicalDeletesFilteredAfterCut(InRamTantivy, LexicalIndexContract):
    index_class = DeletesFilteredAfterCut


create_lexical_index = lexical_factory(DeletesFilteredAfterCut)
