"""The vector contract against the flat (numpy, exact) index: as the writer, and as a reader in the
same process reading what a writer published (every write goes through the writer, every read
through a read-only handle on the same directory)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from graphctx.adapters.flat import FlatVectorIndex
from graphctx.contracts.datasets import FakeEmbedder
from graphctx.contracts.vector import VectorIndexContract
from graphctx.kernel.ports import Capabilities, VectorHit, VectorRecord
from graphctx.scope import Scope

DIMENSION = 32
MODEL_ID = FakeEmbedder(DIMENSION).model_id


class TestFlat(VectorIndexContract):
    @pytest.fixture
    def vector_index(self, tmp_path: Path) -> Iterator[FlatVectorIndex]:
        index = FlatVectorIndex(tmp_path / "vectors", MODEL_ID, DIMENSION)
        yield index
        index.close()

    @pytest.fixture
    def vector_index_for_model(self, tmp_path: Path) -> Callable[[str], FlatVectorIndex]:
        return lambda model_id: FlatVectorIndex(tmp_path / "vectors", model_id, DIMENSION)


class WriterAndReader:
    """Writes through a writer, reads through a read-only index on the same files."""

    name = "flat"

    def __init__(self, path: Path) -> None:
        self.writer = FlatVectorIndex(path, MODEL_ID, DIMENSION)
        self.reader = FlatVectorIndex(path, MODEL_ID, DIMENSION, read_only=True)
        self.model_id, self.dimension = MODEL_ID, DIMENSION

    @property
    def capabilities(self) -> Capabilities:
        return self.reader.capabilities

    def upsert(self, scope: Scope, records: Sequence[VectorRecord]) -> None:
        self.writer.upsert(scope, records)

    def delete(self, scope: Scope, entity_ids: Sequence[str]) -> None:
        self.writer.delete(scope, entity_ids)

    def search(self, scope: Scope, vector: Sequence[float], k: int) -> list[VectorHit]:
        return self.reader.search(scope, vector, k)

    def hashes(self, scope: Scope) -> dict[str, str]:
        return self.reader.hashes(scope)

    def flush(self) -> None:
        self.writer.flush()

    def close(self) -> None:
        self.reader.close()
        self.writer.close()


class TestFlatReadOnlyReader(VectorIndexContract):
    @pytest.fixture
    def vector_index(self, tmp_path: Path) -> Iterator[WriterAndReader]:
        index = WriterAndReader(tmp_path / "vectors")
        yield index
        index.close()


class CodedBeforeEverySearch(FlatVectorIndex):
    """Every search runs on int8 codes (built in this thread first, whatever the scope's size), so
    the whole contract holds the pruned path to brute force's answers."""

    def search(self, scope: Scope, vector: Sequence[float], k: int) -> list[VectorHit]:
        if isinstance(scope, Scope):
            self.build_codes(scope)
        return super().search(scope, vector, k)


class TestFlatCoded(VectorIndexContract):
    @pytest.fixture
    def vector_index(self, tmp_path: Path) -> Iterator[FlatVectorIndex]:
        index = CodedBeforeEverySearch(tmp_path / "vectors", MODEL_ID, DIMENSION, codes_min_rows=1)
        yield index
        index.close()
