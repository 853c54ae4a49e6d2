"""The set of stores a service runs on, opened by name from settings through the registry."""

from __future__ import annotations

from dataclasses import dataclass

from graphctx import registry
from graphctx.kernel.ports import Embedder, GraphStore, IndexJournal, LexicalIndex, VectorIndex
from graphctx.settings import Settings


@dataclass
class Stores:
    graph: GraphStore
    lexical: LexicalIndex
    journal: IndexJournal
    vector: VectorIndex | None = None
    embedder: Embedder | None = None

    def close(self) -> None:
        for store in (self.vector, self.lexical, self.graph, self.journal):
            if store is not None:
                store.close()

    def describe(self) -> dict[str, str]:
        return {
            "graph": self.graph.name,
            "lexical": self.lexical.name,
            "vector": self.vector.name if self.vector else "none",
            "embedder": self.embedder.model_id if self.embedder else "none",
        }


def open_stores(settings: Settings) -> Stores:
    """Open every store named in settings; close what was opened if a later one fails."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    opened: list[object] = []
    try:
        graph = registry.factory("graph", settings.graph_backend)(settings)
        opened.append(graph)
        journal = registry.factory("journal", settings.journal_backend)(settings)
        opened.append(journal)
        lexical = registry.factory("lexical", settings.lexical_backend)(settings)
        opened.append(lexical)
        embedder = registry.factory("embedder", settings.embedder)(settings)
        vector = registry.factory("vector", settings.vector_backend)(
            settings, embedder.model_id, embedder.dimension
        )
        return Stores(graph=graph, lexical=lexical, journal=journal, vector=vector, embedder=embedder)
    except BaseException:
        for store in reversed(opened):
            store.close()  # type: ignore[attr-defined]
        raise
