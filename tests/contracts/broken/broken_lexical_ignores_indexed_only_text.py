"""Broken on purpose: the index drops `LexicalDoc.text`, the indexed-only text (a symbol's docstring,
signature and referenced names): names, aliases, qualified names and summaries are found, but a
description of what the code does no longer finds it.
"""

from __future__ import annotations

from collections.abc import Sequence

from _shared import InRamTantivy, TestControlTantivy, lexical_factory  # noqa: F401  (the control runs here)

from graphctx.adapters.tantivy import TantivyLexicalIndex
from graphctx.contracts.lexical import LexicalIndexContract
from graphctx.kernel.ports import LexicalDoc
from graphctx.scope import Scope


class IgnoresIndexedOnlyText(TantivyLexicalIndex):
    name = "tantivy-ignores-indexed-only-text"

    def upsert(self, scope: Scope, docs: Sequence[LexicalDoc]) -> None:
        super().upsert(scope, [d.model_copy(update={"text": ""}) for d in docs])  # the bug


class TestBrokenIgnoresIndexedOnlyText(InRamTantivy, LexicalIndexContract):
    index_class = IgnoresIndexedOnlyText


create_lexical_index = lexical_factory(IgnoresIndexedOnlyText)
