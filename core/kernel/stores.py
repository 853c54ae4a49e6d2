"""The set of stores a service runs on, opened by name from settings through the registry."""

from __future__ import annotations

from dataclasses import dataclass

from graphctx import registry
from graphctx.datadir import DataDirHandle, Mode, open_data_dir
from graphctx.kernel.ports import Embedder, GraphStore, IndexJournal, LexicalIndex, VectorIndex
from graphctx.settings import Settings


@dataclass
class Stores:
    graph: GraphStore
    lexical: LexicalIndex
    journal: IndexJournal
    vector: VectorIndex | None = None
    embedder: Embedder | None = None
    data_dir: DataDirHandle | None = None
    """The data directory as opened (mode, and the writer lock while open); None for stores built
    by hand (tests, benchmarks), which are writable."""

    @property
    def mode(self) -> Mode:
        return self.data_dir.mode if self.data_dir is not None else "write"

    @property
    def in_process(self) -> bool:
        """Every store's reads compute in this process (Capabilities.in_process)."""
        stores = (self.graph, self.lexical, self.vector)
        return all(s.capabilities.in_process for s in stores if s is not None)

    def close(self) -> None:
        try:
            for store in (self.vector, self.lexical, self.graph, self.journal):
                if store is not None:
                    store.close()
        finally:
            if self.data_dir is not None:
                self.data_dir.release()

    def describe(self) -> dict[str, str]:
        return {
            "graph": self.graph.name,
            "lexical": self.lexical.name,
            "vector": self.vector.name if self.vector else "none",
            "embedder": self.embedder.model_id if self.embedder else "none",
        }


def open_stores(settings: Settings, mode: Mode = "write") -> Stores:
    """Open every store named in settings, to read or to write; close what was opened if a later
    one fails.

    "read" never creates or writes anything, works beside a process writing the same data
    directory and refuses writes (`ReadOnly`); so does "write" when `settings.read_only` is set.
    "write" takes the data directory's writer lock first (`DataDirLocked` if another process holds
    it). Adapters see the mode as `settings.read_only`."""
    if settings.read_only:
        mode = "read"
    handle = open_data_dir(settings, mode)
    settings = settings.model_copy(update={"read_only": mode == "read"})
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
        return Stores(
            graph=graph, lexical=lexical, journal=journal, vector=vector, embedder=embedder, data_dir=handle
        )
    except BaseException:
        for store in reversed(opened):
            store.close()  # type: ignore[attr-defined]
        handle.release()
        raise
