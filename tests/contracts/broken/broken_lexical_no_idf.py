"""Broken on purpose: search scores a document by how often the query's words occur in it (term
frequency alone, as a hand-written index or a `LIKE` count does), with no inverse document frequency:
a word every document holds weighs as much as a word only one holds. Hits, scopes, order by (score,
id) and k are right.
"""

from __future__ import annotations

import re
from collections import Counter

from _shared import InRamTantivy, RemembersDocs, TestControlTantivy, lexical_factory, words  # noqa: F401

from graphctx.contracts.lexical import LexicalIndexContract
from graphctx.kernel.ports import LexicalHit
from graphctx.scope import Scope


class NoIdf(RemembersDocs):
    name = "tantivy-no-idf"

    def search(self, scope: Scope, text: str, k: int) -> list[LexicalHit]:
        query = [w.lower() for w in re.findall(r"\w+", text)]
        hits = []
        for h in super().search(scope, text, 100):  # every match (the suite's scopes hold few)
            counts = Counter(w.lower() for w in words(self.kept()[scope, h.entity_id]))
            tf = sum(counts[w] for w in query) or 0.5  # the bug: no idf, no length norm
            hits.append(h.model_copy(update={"score": float(tf)}))
        hits.sort(key=lambda h: (-h.score, h.entity_id))
        return hits[: max(1, min(k, 100))]


class TestBrokenNoIdf(InRamTantivy, LexicalIndexContract):
    index_class = NoIdf


create_lexical_index = lexical_factory(NoIdf)
