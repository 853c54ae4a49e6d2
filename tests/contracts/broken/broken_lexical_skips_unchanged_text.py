"""Broken on purpose: an upsert skips documents whose text is unchanged (a write-saving comparison that
leaves the content hash out), so a new content hash alone is never stored: `hashes` keeps reporting the
old one, and reconcile re-indexes those entities on every run.
"""

from __future__ import annotations

from collections.abc import Sequence

from _shared import InRamTantivy, RemembersDocs, TestControlTantivy, lexical_factory  # noqa: F401

from graphctx.contracts.lexical import LexicalIndexContract
from graphctx.kernel.ports import LexicalDoc
from graphctx.scope import Scope


def _text(d: LexicalDoc) -> dict[str, object]:
    return d.model_dump(exclude={"content_hash"})


class SkipsUnchangedText(RemembersDocs):
    name = "tantivy-skips-unchanged-text"

    def upsert(self, scope: Scope, docs: Sequence[LexicalDoc]) -> None:
        kept = self.kept()
        fresh = [
            d for d in docs if (scope, d.entity_id) not in kept or _text(kept[scope, d.entity_id]) != _text(d)
        ]
        super().upsert(scope, fresh)  # the bug: a new hash with the same text is not written


class TestBrokenSkipsUnchangedText(InRamTantivy, LexicalIndexContract):
    index_class = SkipsUnchangedText


create_lexical_index = lexical_factory(SkipsUnchangedText)
