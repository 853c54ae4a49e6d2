"""Broken on purpose: an upsert writes its batch in two bulk steps -- delete every key of the batch, then
add every document -- instead of replacing document by document: a batch naming an id twice leaves
two documents for it (both versions' words match, the id comes back twice). Batches naming each id
once are right.
"""

from __future__ import annotations

from collections.abc import Sequence

from _shared import InRamTantivy, TestControlTantivy, lexical_factory  # noqa: F401  (the control runs here)

from graphctx.adapters.tantivy import TantivyLexicalIndex
from graphctx.adapters.tantivy.schema import KEY, doc_key, to_document
from graphctx.contracts.lexical import LexicalIndexContract
from graphctx.kernel.ports import LexicalDoc
from graphctx.scope import Scope


class BatchDeletesThenAdds(TantivyLexicalIndex):
    name = "tantivy-batch-deletes-then-adds"

    def upsert(self, scope: Scope, docs: Sequence[LexicalDoc]) -> None:
        if not docs:
            return
        with self._lock:
            writer = self._live_writer()
            for d in docs:
                writer.delete_documents_by_term(KEY, doc_key(scope, d.entity_id))
            for d in docs:  # the bug: every version of a repeated id is added after the deletes
                writer.add_document(to_document(scope, d))
            writer.commit()
            self._index.reload()


class TestBrokenBatchDeletesThenAdds(InRamTantivy, LexicalIndexContract):
    index_class = BatchDeletesThenAdds


create_lexical_index = lexical_factory(BatchDeletesThenAdds)
