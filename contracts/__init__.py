"""graphctx contract suite: certifies any GraphStore, LexicalIndex or VectorIndex adapter, and the
read trunk over a trio of them. See docs/adapters.md.

Usage (in the adapter's own tests):

    from graphctx.contracts import GraphStoreContract

    class TestMyGraphStore(GraphStoreContract):
        @pytest.fixture
        def graph_store(self):
            store = MyGraphStore(...)
            yield store
            store.close()

Override only the fixture and the contract's documented hooks (`contract_hooks`, e.g.
`reopen_graph_store` for a durable graph store); the guard fails on anything else.

Pin the contract version you certified against: new minor versions add tests
(docs/contracts-changelog.md).
"""

from __future__ import annotations

try:
    import pytest
except ImportError as exc:  # pragma: no cover - only without the test extra
    raise ImportError("graphctx.contracts needs pytest: pip install 'graphctx[contracts]'") from exc

CONTRACT_VERSION = "1.6.0"

# Contract modules live in site-packages for adapter authors; rewrite their asserts so failures
# show values, as they would in the author's own tests.
pytest.register_assert_rewrite(
    "graphctx.contracts._base",
    "graphctx.contracts.graph",
    "graphctx.contracts.lexical",
    "graphctx.contracts.vector",
    "graphctx.contracts.retrieval",
    "graphctx.contracts.congruence",
)

from graphctx.contracts._markers import known_broken, requires  # noqa: E402
from graphctx.contracts.congruence import GraphCongruenceContract, compare_graph_stores  # noqa: E402
from graphctx.contracts.datasets import DATASET_VERSION, FakeEmbedder  # noqa: E402
from graphctx.contracts.graph import GraphStoreContract, GraphStoreCoreContract  # noqa: E402
from graphctx.contracts.lexical import LexicalIndexContract, LexicalIndexCoreContract  # noqa: E402
from graphctx.contracts.retrieval import RetrievalContract  # noqa: E402
from graphctx.contracts.vector import VectorIndexContract, VectorIndexCoreContract  # noqa: E402

__all__ = [
    "CONTRACT_VERSION",
    "DATASET_VERSION",
    "FakeEmbedder",
    "GraphCongruenceContract",
    "GraphStoreContract",
    "GraphStoreCoreContract",
    "LexicalIndexContract",
    "LexicalIndexCoreContract",
    "RetrievalContract",
    "VectorIndexContract",
    "VectorIndexCoreContract",
    "compare_graph_stores",
    "known_broken",
    "requires",
]
