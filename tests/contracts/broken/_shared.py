"""What the broken adapters' files share: the fixtures that open a fresh adapter of a given class,
and the control classes running the same contract on the unbroken adapter.

The name does not match pytest's `test_*.py`, so this module is never collected on its own; a
broken file that imports a control class (`TestControlSqlite`, `TestControlTantivy`) has pytest
collect it there, under that file's node ids.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest
from tantivy import Occur, Query

from graphctx.adapters.qdrant import EdgeVectorIndex
from graphctx.adapters.sqlite import SqliteGraphStore, codec, traversal
from graphctx.adapters.sqlite.db import Key, json_list, ts
from graphctx.adapters.sqlite.entities import get_by_ids
from graphctx.adapters.tantivy import TantivyLexicalIndex
from graphctx.adapters.tantivy.index import _hit
from graphctx.adapters.tantivy.query import text_clauses
from graphctx.adapters.tantivy.schema import SCOPE_FIELDS
from graphctx.contracts.datasets import FakeEmbedder
from graphctx.contracts.graph import GraphStoreContract
from graphctx.contracts.lexical import LexicalIndexContract
from graphctx.contracts.vector import VectorIndexContract
from graphctx.kernel import templates as t
from graphctx.kernel import walk
from graphctx.kernel.dispatch import Handler
from graphctx.kernel.ports import LexicalDoc, LexicalHit
from graphctx.kernel.rules import fact_order
from graphctx.model import Fact
from graphctx.scope import Scope
from graphctx.settings import Settings


class InMemorySqlite:
    """`graph_store`: a fresh in-memory `store_class`, schema ensured, closed after the test."""

    store_class: ClassVar[type[SqliteGraphStore]] = SqliteGraphStore

    @pytest.fixture
    def graph_store(self) -> Iterator[SqliteGraphStore]:
        store = self.store_class(":memory:")
        store.ensure_schema()
        yield store
        store.close()


class InRamTantivy:
    """`lexical_index`: a fresh in-RAM `index_class`, closed after the test."""

    index_class: ClassVar[type[TantivyLexicalIndex]] = TantivyLexicalIndex

    @pytest.fixture
    def lexical_index(self) -> Iterator[TantivyLexicalIndex]:
        index = self.index_class(None)
        yield index
        index.close()


class TestControlSqlite(InMemorySqlite, GraphStoreContract):
    """The graph contract on the unbroken in-memory SQLite store."""


class TestControlTantivy(InRamTantivy, LexicalIndexContract):
    """The lexical contract on the unbroken in-RAM tantivy index."""


class InDirTantivy:
    """`lexical_index`: a fresh `index_class` in a directory of `tmp_path`, and the
    `reopen_lexical_index` hook that opens it again: for defects that only show across a reopen."""

    index_class: ClassVar[type[TantivyLexicalIndex]] = TantivyLexicalIndex

    @pytest.fixture
    def lexical_index(self, tmp_path: Path) -> Iterator[TantivyLexicalIndex]:
        index = self.index_class(tmp_path / "lexical")
        yield index
        index.close()

    @pytest.fixture
    def reopen_lexical_index(self, tmp_path: Path) -> Callable[[Any], TantivyLexicalIndex]:
        return lambda index: self.index_class(tmp_path / "lexical")


class TestControlTantivyOnDisk(InDirTantivy, LexicalIndexContract):
    """The lexical contract on the unbroken tantivy index in a directory, with the reopen hook."""


class OnDiskSqlite:
    """`graph_store` on a file in `tmp_path`, and the `reopen_graph_store` hook that opens it again:
    for defects that only show across a reopen."""

    store_class: ClassVar[type[SqliteGraphStore]] = SqliteGraphStore

    @pytest.fixture
    def graph_store(self, tmp_path: Path) -> Iterator[SqliteGraphStore]:
        store = self.store_class(tmp_path / "graph.db")
        store.ensure_schema()
        yield store
        store.close()

    @pytest.fixture
    def reopen_graph_store(self, tmp_path: Path) -> Callable[[Any], SqliteGraphStore]:
        def reopen(store: Any) -> SqliteGraphStore:
            again = self.store_class(tmp_path / "graph.db")
            again.ensure_schema()
            return again

        return reopen


class TestControlSqliteOnDisk(OnDiskSqlite, GraphStoreContract):
    """The graph contract on the unbroken SQLite store in a file, with the reopen hook."""


class InDirQdrantEdge:
    """`vector_index`: a fresh qdrant-edge `index_class` in `tmp_path`, and the model hook."""

    index_class: ClassVar[type[EdgeVectorIndex]] = EdgeVectorIndex
    dimension: ClassVar[int] = 32

    @pytest.fixture
    def vector_index(self, tmp_path: Path) -> Iterator[EdgeVectorIndex]:
        index = self.index_class(tmp_path / "vectors", FakeEmbedder(self.dimension).model_id, self.dimension)
        yield index
        index.close()

    @pytest.fixture
    def vector_index_for_model(self, tmp_path: Path) -> Callable[[str], EdgeVectorIndex]:
        return lambda model_id: self.index_class(tmp_path / "vectors", model_id, self.dimension)


class TestControlQdrantEdge(InDirQdrantEdge, VectorIndexContract):
    """The vector contract on the unbroken qdrant-edge index."""


def lexical_factory(index_class: type[TantivyLexicalIndex]) -> Callable[[Settings], TantivyLexicalIndex]:
    """A `graphctx certify` factory for a broken index class: a directory in the settings' data dir."""

    def create(settings: Settings) -> TantivyLexicalIndex:
        path = Path(settings.data_dir) / "lexical"
        path.mkdir(parents=True, exist_ok=True)
        return index_class(path)

    return create


def graph_factory(store_class: type[SqliteGraphStore]) -> Callable[[Settings], SqliteGraphStore]:
    """A `graphctx certify` factory for a broken store class: a file in the settings' data dir."""

    def create(settings: Settings) -> SqliteGraphStore:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        store = store_class(settings.data_dir / "graph.db")
        store.ensure_schema()
        return store

    return create


# ---- traversals that bind the scope on the first hop only ----------------------------------------

_HOP = """
SELECT * FROM (
  SELECT f.*, f.{near} AS near, f.{far} AS far,
         ROW_NUMBER() OVER (PARTITION BY f.{near} ORDER BY {order}) AS rn,
         COUNT(*) OVER (PARTITION BY f.{near}) AS total
  FROM facts AS f
  JOIN entities AS s ON {s} s.id = f.subject_id
  JOIN entities AS o ON {o} o.id = f.object_id
  WHERE {f} f.{near} IN (SELECT value FROM json_each(?4))
    AND (?5 = 0 OR f.predicate IN (SELECT value FROM json_each(?6)))
    AND (f.valid_from IS NULL OR f.valid_from <= ?7) AND (f.valid_to IS NULL OR f.valid_to > ?7)
) WHERE rn <= ?8
"""
_FIELDS = {"tenant_id": "?1", "namespace": "?2", "graph_id": "?3"}


def hop_sql(direction: str, bound: frozenset[str]) -> str:
    """The reference hop query binding only the scope fields in `bound` (on the fact and both ends)."""
    near, far = ("subject_id", "object_id") if direction == "out" else ("object_id", "subject_id")
    order = "f.predicate, f.object_id, f.id" if direction == "out" else "f.subject_id, f.predicate, f.id"

    def on(alias: str) -> str:
        return "".join(f"{alias}.{c} = {p} AND " for c, p in _FIELDS.items() if c in bound)

    return _HOP.format(near=near, far=far, order=order, s=on("s"), o=on("o"), f=on("f"))


class LaterHopsBind(SqliteGraphStore):
    """Neighbourhood and shortest path whose first hop binds the whole scope and whose later hops
    bind only `later_hops_bind` (the defect: a subclass names what it forgets)."""

    later_hops_bind: ClassVar[frozenset[str]] = frozenset(_FIELDS)

    def handlers(self) -> Mapping[str, Handler]:
        return {
            **super().handlers(),
            t.NEIGHBOURHOOD.name: self._bind(self._neighbourhood),
            t.SHORTEST_PATH.name: self._bind(self._path),
        }

    def _hop(self, conn: sqlite3.Connection, key: Key, p: Any, as_of: str, per_node: int) -> Any:
        calls = [0]

        def hop(frontier: Sequence[str]) -> walk.Hop:
            calls[0] += 1
            if calls[0] == 1:
                return traversal.hop(
                    conn, key, frontier, direction=p.direction, edge_types=p.edge_types, as_of=as_of,
                    per_node=per_node,
                )  # fmt: skip
            steps, cut = [], 0
            bound = (*key, json_list(frontier), len(p.edge_types), json_list(p.edge_types), as_of, per_node)
            for d in {"out": ("out",), "in": ("in",), "both": ("out", "in")}[p.direction]:
                for row in conn.execute(hop_sql(d, self.later_hops_bind), bound):
                    if row["rn"] == 1:
                        cut += max(0, row["total"] - per_node)
                    steps.append(walk.Step(row["near"], row["far"], codec.fact(row)))
            steps.sort(key=walk.step_order)
            return walk.Hop(steps, cut)

        return hop

    def _neighbourhood(self, conn: sqlite3.Connection, key: Key, p: t.NeighbourhoodParams, now: str) -> Any:
        as_of = ts(p.as_of) or now
        return walk.neighbourhood(
            [e.id for e in get_by_ids(conn, key, p.roots)],
            depth=p.depth,
            limit=p.limit,
            hop=self._hop(conn, key, p, as_of, p.per_direction_limit),
            hydrate=lambda ids: get_by_ids(conn, key, ids),
        )

    def _path(self, conn: sqlite3.Connection, key: Key, p: t.ShortestPathParams, now: str) -> Any:
        as_of = ts(p.as_of) or now
        return walk.shortest_path(
            p.source,
            p.target,
            max_depth=p.max_depth,
            hop=self._hop(conn, key, p, as_of, 2**62),
            hydrate=lambda ids: get_by_ids(conn, key, ids),
        )


# ---- traversals with a hook at every step a defect can hide in -----------------------------------


class HookedTraversal(SqliteGraphStore):
    """Neighbourhood and shortest path computed as the reference computes them -- the hop's SQL, then
    the breadth-first bookkeeping of graphctx.kernel.walk, written out -- with one method per decision
    a hand-written traversal makes. A broken subclass overrides one of them (the defect); unbroken,
    it answers exactly as the reference."""

    def hop_sql(self, direction: str) -> str:
        """The statement of one hop in one direction, with its per-node cut (reference: catalogue order)."""
        return traversal._HOP_OUT if direction == "out" else traversal._HOP_IN

    def hop_filters(self, p: Any, first_hop: bool) -> tuple[str, tuple[str, ...]]:
        """The direction and the edge allowlist of a hop (reference: the request's, at every hop)."""
        return p.direction, p.edge_types

    def instant(self, p: Any, now: str) -> str:
        """The instant edges must be valid at (reference: as_of, else now)."""
        return ts(p.as_of) or now

    def keep(self, reached: list[str], room: int) -> list[str]:
        """The new nodes of a hop (in the order their edges came) that `limit` keeps (reference: the
        smallest ids)."""
        return sorted(reached)[: max(0, room)]

    def is_new(self, node: str, depth_of: dict[str, int], roots: list[str]) -> bool:
        """Whether a node reached by a hop is new (reference: not reached before, at any depth)."""
        return node not in depth_of

    def omitted(self, cut: int, dropped: set[str], followed: set[str]) -> int:
        """What `omitted` reports (reference: every step a limit left out)."""
        return cut + len(dropped - followed)

    def next_step(self, steps: list[walk.Step]) -> walk.Step:
        """The step a shortest path takes among those that still reach the target (reference: the
        smallest next id, then catalogue edge order between parallel edges)."""
        return min(steps, key=lambda s: (s.far, fact_order(s.fact)))

    # -------------------------------------------------------------------------------------------

    def handlers(self) -> Mapping[str, Handler]:
        return {
            **super().handlers(),
            t.NEIGHBOURHOOD.name: self._bind(self._neighbourhood),
            t.SHORTEST_PATH.name: self._bind(self._path),
        }

    def _hop(self, conn: sqlite3.Connection, key: Key, p: Any, now: str, per_node: int) -> walk.HopFn:
        calls = [0]

        def hop(frontier: Sequence[str]) -> walk.Hop:
            calls[0] += 1
            direction, edge_types = self.hop_filters(p, calls[0] == 1)
            bound = (
                *key,
                json_list(frontier),
                len(edge_types),
                json_list(edge_types),
                self.instant(p, now),
                per_node,
            )
            steps, cut = [], 0
            for d in {"out": ("out",), "in": ("in",), "both": ("out", "in")}[direction]:
                for row in conn.execute(self.hop_sql(d), bound):
                    if row["rn"] == 1:
                        cut += max(0, row["total"] - per_node)
                    steps.append(walk.Step(row["near"], row["far"], codec.fact(row)))
            steps.sort(key=walk.step_order)
            return walk.Hop(steps, cut)

        return hop

    def _neighbourhood(self, conn: sqlite3.Connection, key: Key, p: t.NeighbourhoodParams, now: str) -> Any:
        hop = self._hop(conn, key, p, now, p.per_direction_limit)
        roots = [e.id for e in get_by_ids(conn, key, p.roots)]
        depth_of = dict.fromkeys(roots, 0)
        edges: dict[str, Fact] = {}
        dropped: set[str] = set()
        cut = 0
        frontier = list(roots)
        for d in range(1, p.depth + 1):
            if not frontier:
                break
            h = hop(frontier)
            cut += h.cut
            reached = list(dict.fromkeys(s.far for s in h.steps if self.is_new(s.far, depth_of, roots)))
            frontier = self.keep(reached, p.limit - (len(depth_of) - len(roots)))
            depth_of.update(dict.fromkeys(frontier, d))
            for s in h.steps:
                if s.far in depth_of:
                    edges.setdefault(s.fact.id, s.fact)
                else:
                    dropped.add(s.fact.id)
        if not depth_of:
            return t.Subgraph()
        omitted = self.omitted(cut, dropped, set(edges))
        entities = {e.id: e for e in get_by_ids(conn, key, list(depth_of))}
        nodes = sorted(
            (t.Node(entity=entities[i], depth=d) for i, d in depth_of.items()),
            key=lambda n: (n.depth, n.entity.id),
        )
        return t.Subgraph(
            nodes=tuple(nodes),
            edges=tuple(sorted(edges.values(), key=fact_order)),
            truncated=omitted > 0,
            omitted=omitted,
        )

    def _path(self, conn: sqlite3.Connection, key: Key, p: t.ShortestPathParams, now: str) -> Any:
        hop = self._hop(conn, key, p, now, 2**62)
        ends = {e.id: e for e in get_by_ids(conn, key, [p.source, p.target])}
        if p.source not in ends or p.target not in ends:
            return t.PathResult()
        if p.source == p.target:
            return t.PathResult(nodes=(ends[p.source],))
        dist = {p.source: 0}
        forward: dict[str, list[walk.Step]] = {}
        frontier = [p.source]
        for depth in range(1, p.max_depth + 1):
            for s in hop(frontier).steps:
                if dist.setdefault(s.far, depth) == depth:
                    forward.setdefault(s.near, []).append(s)
            if p.target in dist:
                break
            frontier = sorted(n for n, d in dist.items() if d == depth)
            if not frontier:
                return t.PathResult()
        else:
            return t.PathResult()
        good = {p.target}
        for d in range(dist[p.target] - 1, -1, -1):
            good |= {
                n for n, nd in dist.items() if nd == d and any(s.far in good for s in forward.get(n, ()))
            }
        here, ids, facts = p.source, [p.source], []
        for _ in range(dist[p.target]):
            step = self.next_step([s for s in forward[here] if s.far in good])
            ids.append(step.far)
            facts.append(step.fact)
            here = step.far
        by_id = {e.id: e for e in get_by_ids(conn, key, ids)}
        return t.PathResult(nodes=tuple(by_id[i] for i in ids), edges=tuple(facts))


class TestControlHookedTraversal(InMemorySqlite, GraphStoreContract):
    """The graph contract on HookedTraversal unbroken: it must pass, or the hooked defects prove nothing."""

    store_class = HookedTraversal


# ---- index wrappers that know every scope they were given ---------------------------------------


class RemembersScopes:
    """Mixin for an index: records every scope written to, so a broken search can reach them."""

    def _remember(self, scope: Scope) -> None:
        seen: set[Scope] = self.__dict__.setdefault("_scopes_seen", set())
        seen.add(scope)

    def scopes_seen(self) -> list[Scope]:
        return sorted(
            self.__dict__.get("_scopes_seen", set()), key=lambda s: (s.tenant_id, s.namespace, s.graph_id)
        )


class RemembersDocs(TantivyLexicalIndex):
    """A tantivy index that also keeps every document it holds, by (scope, entity id), in memory: what
    a broken search or upsert needs to reason about documents as a hand-written index would."""

    def kept(self) -> dict[tuple[Scope, str], LexicalDoc]:
        docs: dict[tuple[Scope, str], LexicalDoc] = self.__dict__.setdefault("_kept_docs", {})
        return docs

    def upsert(self, scope: Scope, docs: Sequence[LexicalDoc]) -> None:
        super().upsert(scope, docs)
        self.kept().update(((scope, d.entity_id), d) for d in docs)

    def delete(self, scope: Scope, entity_ids: Sequence[str]) -> None:
        super().delete(scope, entity_ids)
        for entity_id in entity_ids:
            self.kept().pop((scope, entity_id), None)


def words(doc: LexicalDoc) -> list[str]:
    """The words of a document's searchable text, as written."""
    text = " ".join([doc.name, *doc.aliases, doc.qualified_name, doc.type, doc.path, doc.summary, doc.text])
    return re.findall(r"\w+", text)


def hit(searcher: Any, address: Any, score: float) -> LexicalHit:
    """The hit a Tantivy search found at `address` (the adapter's own decoding of a stored document)."""
    return _hit(searcher.doc(address), score)


class ScopeFieldBlindLexical(RemembersScopes, TantivyLexicalIndex):
    """A search whose scope clause binds every scope field but `forgets` (one hand-written clause
    per field, one of them left out)."""

    forgets: ClassVar[str]

    def upsert(self, scope: Scope, docs: Sequence[LexicalDoc]) -> None:
        self._remember(scope)
        super().upsert(scope, docs)

    def search(self, scope: Scope, text: str, k: int) -> list[LexicalHit]:
        k = max(1, min(k, 100))
        clauses = text_clauses(self._schema, text, self._english)
        if not clauses:
            return []
        values = dict(zip(SCOPE_FIELDS, (scope.tenant_id, scope.namespace, scope.graph_id), strict=True))
        scoped = [
            (Occur.Must, Query.term_query(self._schema, f, values[f]))
            for f in SCOPE_FIELDS
            if f != self.forgets
        ]
        query = Query.boolean_query([*scoped, (Occur.Must, Query.boolean_query(clauses))])
        searcher = self._index.searcher()
        hits = [hit(searcher, a, s) for s, a in searcher.search(query, 1000, count=False).hits]
        hits.sort(key=lambda h: (-h.score, h.entity_id))
        return hits[:k]
