"""`LexicalIndex` on tantivy: BM25 over approved text plus identifier-aware and exact-name fields.

Every upsert/delete call commits and reloads before it returns, so a write the caller saw succeed is
durable and searchable (the index journal may then mark it complete); `flush()` only reloads.

After `defer_durability()` (asked by a service that acknowledges writes before the disk commit) an
upsert/delete goes to a small in-memory index (the overlay, committed in RAM: no fsync) and is searchable
at once; `flush()` writes the pending documents to disk in one commit and then drops them from the
overlay. A search reads the disk index and the overlay from one consistent moment: a key pending in the
overlay (upserted or deleted) hides its disk document. Scores of overlay hits come from the overlay's
own statistics until the flush (at most one flush interval): read-after-write is exact, the BM25 rank
of a just-written document is approximate for that long.

Layout changes (new fields or analysers, `schema.LAYOUT`): an index directory written with another
layout is rebuilt. Opening it reads the scopes the old index held (they are stored fields), records them
in `rebuild.json`, replaces the old files with an empty index of the current layout, and reports them
through `rebuild_scopes()`; the service refills those scopes from the graph, which is authoritative, and
calls `rebuild_done()`. A crash in between leaves `rebuild.json`, so the next open refills again.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
import threading
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from types import TracebackType
from typing import Any

from tantivy import DocAddress, Document, Index, IndexWriter, Query, Searcher

from graphctx.adapters.tantivy.analysis import EN_ANALYSER, analysis_caches, english_analyser
from graphctx.adapters.tantivy.query import WEIGHTS, Weights, scope_filter, search_query
from graphctx.adapters.tantivy.schema import CONTENT_HASH, ENTITY_ID, KEY, LAYOUT, SCOPE_FIELDS, build_schema
from graphctx.adapters.tantivy.writer import WRITER_HEAP, WriterProcess, commit, deletes, open_writer, upserts
from graphctx.bounds import clamp
from graphctx.errors import BackendError, BackendUnavailable, GraphctxError, InputError, ReadOnly
from graphctx.kernel.ports import CacheSizes, Capabilities, LexicalDoc, LexicalHit, QueuedWrites
from graphctx.scope import Scope

log = logging.getLogger(__name__)
MAX_K = 100
_TIE_PAD = 16  # fetched beyond k so a tie at the k-th score can be ordered by entity id
_OVERLAY_HEAP = 15_000_000  # tantivy's minimum per indexing thread
LAYOUT_FILE = "graphctx-layout.json"
REBUILD_FILE = "rebuild.json"


class TantivyLexicalIndex:
    """One index directory (or RAM when `path` is None) with one writer for the object's life."""

    name = "tantivy"
    _commit = staticmethod(commit)

    def __init__(self, path: Path | None, weights: Weights = WEIGHTS, *, read_only: bool = False) -> None:
        """`read_only` takes no writer (and so no writer lock): another process may write the same
        directory, and every read first reloads to the last commit it made."""
        self._path = path
        self._schema = build_schema()
        self._english = english_analyser()
        self._lock = threading.Lock()
        self.weights = weights
        self._rebuild: list[Scope] = []
        self.read_only = read_only
        self._open = True
        self._copy: Path | None = None
        self._overlay: Index | None = None
        self._overlay_writer: IndexWriter | None = None
        self._pending: dict[str, Document | None] = {}
        """Per key, the document (None: deleted) written since the last flush, newest last."""
        self._olock = threading.Lock()  # the overlay and _pending; never held across a disk commit
        self._flush_lock = threading.Lock()
        self._child: WriterProcess | None = None
        self._sent: deque[str] = deque()  # calls sent to the child ahead, not answered yet
        self._seen_meta: bytes | None = None
        """meta.json as it was just before the last reload of a read-only index (see _before_read)."""
        try:
            if path is None:
                self._index = Index(self._schema)
            elif read_only:
                self._index = self._open_read_only(path)
            else:
                path.mkdir(parents=True, exist_ok=True)
                self._rebuild = _upgrade(path)
                self._index = Index(self._schema, path=str(path), reuse=True)
                _write_json(path / LAYOUT_FILE, {"layout": LAYOUT})
            # custom analysers are not persisted: register before any writer or query needs one
            self._index.register_tokenizer(EN_ANALYSER, self._english)
            self._writer: IndexWriter | None = None if read_only else open_writer(self._index)
        except ValueError as exc:
            where = str(path) if path else "RAM"
            if "LockBusy" in str(exc):
                raise BackendUnavailable(
                    f"tantivy index at {where} is locked by another writer (another process or an "
                    "open TantivyLexicalIndex on the same directory)"
                ) from exc
            raise BackendError(f"cannot open tantivy index at {where}: {exc}") from exc
        self._index.reload()

    def _open_read_only(self, path: Path) -> Index:
        """Readers take tantivy's meta lock, a file in the index directory; where that directory
        cannot be written (a read-only volume, nobody can be writing) the index is read from a
        private copy, removed at close. An index of another layout (or one whose rebuild has not
        finished) cannot be read: a writer rebuilds it first."""
        if _layout(path) not in (None, LAYOUT) or (path / REBUILD_FILE).exists():
            raise BackendUnavailable(
                f"tantivy index at {path} has an older layout; the next write command (or `graphctx "
                "serve`) rebuilds it from the graph"
            )
        try:
            return Index.open(str(path))
        except ValueError as exc:
            if "Lockfile" not in str(exc):
                raise
        self._copy = Path(tempfile.mkdtemp(prefix="graphctx-lexical-"))
        shutil.copytree(path, self._copy, dirs_exist_ok=True, ignore=shutil.ignore_patterns("*.lock"))
        return Index.open(str(self._copy))

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(
            durable=self._path is not None,
            concurrent_readers=True,
            exact_search=True,
            in_process=True,
            extra={"identifier_analysis": True, "exact_identifier_field": True, "stemming": True},
        )

    # writes ---------------------------------------------------------------------------------------

    def upsert(self, scope: Scope, docs: Sequence[LexicalDoc]) -> None:
        if docs:
            self._write("upsert", scope, docs, upserts(scope, docs))

    def delete(self, scope: Scope, entity_ids: Sequence[str]) -> None:
        if entity_ids:
            self._write("delete", scope, entity_ids, deletes(scope, entity_ids))

    @contextmanager
    def writer_process(self) -> Iterator[QueuedWrites | None]:
        """For a long run of writes: while inside, a child process holds the writer and makes each
        upsert/delete (writer.py), which still returns once committed and searchable here; the
        yielded `QueuedWrites` sends calls ahead instead. Yields None (and writes here) for an index
        in RAM, read-only or deferring durability, or when the child cannot start."""
        with self._lock:
            started = self._start_child()
        try:
            yield _Queued(self) if started else None
        finally:
            if started:
                with self._lock:
                    self._stop_child()

    def _start_child(self) -> bool:
        if self._path is None or self._overlay is not None or self._writer is None or not self._open:
            return False
        writer, self._writer = self._writer, None
        writer.wait_merging_threads()  # consumes the writer and releases the directory lock
        try:
            self._child = WriterProcess(self._path)
        except GraphctxError as exc:
            log.warning("tantivy writes stay in this process: %s", exc.message)
            self._writer = open_writer(self._index)
            return False
        return True

    def _stop_child(self) -> None:
        child, self._child = self._child, None
        if child is not None:
            while self._sent:  # answers still owed come before the close's
                with suppress(GraphctxError):
                    child.receive(self._sent.popleft())
            child.close()
        if self._open:
            self._writer = open_writer(self._index)
            self._index.reload()

    def _send(self, op: str, scope: Scope, payload: Sequence[Any]) -> None:
        with self._lock:
            self._check_open()
            if self._child is None:
                raise BackendUnavailable("the tantivy writer process is not running")
            self._child.send(op, scope, payload)
            self._sent.append(op)

    def _receive(self) -> None:
        """The oldest call sent and not yet answered: committed (then searchable here) or raised."""
        with self._lock:
            if self._child is None or not self._sent:
                return
            self._child.receive(self._sent.popleft())
            self._index.reload()

    def defer_durability(self) -> bool:
        """Writes searchable at once through the overlay, durable at `flush()` (module docstring)."""
        with self._lock:
            if self._writer is None or self._path is None:
                return False
            if self._overlay is None:
                overlay = Index(self._schema)
                overlay.register_tokenizer(EN_ANALYSER, self._english)
                self._overlay_writer = overlay.writer(heap_size=_OVERLAY_HEAP, num_threads=1)
                self._overlay = overlay
            return True

    def flush(self) -> None:
        """Deferred: the pending documents to disk in one commit, then out of the overlay."""
        if self._overlay is None:
            with self._lock:
                self._check_open()
                self._index.reload()
            return
        with self._flush_lock:
            with self._olock:
                batch = dict(self._pending)
            with self._lock:
                self._check_open()
                if batch:
                    self._commit(self._live_writer(), "flush", batch.items())
                self._index.reload()
            if not batch:
                return
            with self._olock:  # the disk holds them now; a key written again since stays pending
                writer = self._overlay_writer
                assert writer is not None and self._overlay is not None
                for key, document in batch.items():
                    if self._pending.get(key, _GONE) is document:
                        del self._pending[key]
                        writer.delete_documents_by_term(KEY, key)
                writer.commit()
                self._overlay.reload()

    def pending(self) -> int:
        """Documents written but not yet durable (0 unless deferred)."""
        with self._olock:
            return len(self._pending)

    def close(self) -> None:
        try:
            if self._overlay is not None and self._open and self._writer is not None:
                self.flush()  # a failure leaves the writes journaled: the next open replays them
        finally:
            self._close()

    def _close(self) -> None:
        with self._lock:
            self._open = False
            writer, self._writer = self._writer, None
            if writer is not None:
                writer.wait_merging_threads()  # consumes the writer and releases the directory lock
            child, self._child = self._child, None
            if child is not None:
                child.close()
            if self._copy is not None:
                shutil.rmtree(self._copy, ignore_errors=True)
                self._copy = None

    def __enter__(self) -> TantivyLexicalIndex:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def caches(self) -> CacheSizes:
        """The identifier analysis memo (two LRUs, per process) and the writer's indexing heap."""
        out: CacheSizes = {
            name: {"entries": size, "max_entries": limit} for name, size, limit in analysis_caches()
        }
        if self._writer is not None:
            out["tantivy_writer_heap"] = {"bytes": WRITER_HEAP, "max_bytes": WRITER_HEAP}
        if self._overlay is not None:
            out["tantivy_overlay_heap"] = {"bytes": _OVERLAY_HEAP, "max_bytes": _OVERLAY_HEAP}
            out["tantivy_overlay_pending"] = {"entries": self.pending()}
        return out

    # reads ----------------------------------------------------------------------------------------

    def search(self, scope: Scope, text: str, k: int) -> list[LexicalHit]:
        """At most k (clamped to 1..100) hits, score descending, then entity id ascending."""
        if not isinstance(text, str):
            raise InputError(f"lexical query must be a string, got {type(text).__name__}", field="query")
        if isinstance(k, bool) or not isinstance(k, int):
            raise InputError(f"k must be an integer, got {type(k).__name__}", field="k")
        k = clamp(k, 1, MAX_K)
        self._before_read()
        query = search_query(self._schema, scope, text, self._english, self.weights)
        if query is None:
            return []
        disk, overlay, shadow = self._searchers()
        hits = _top(disk, query, k, shadow)
        if overlay is not None:
            hits += _top(overlay, query, k, frozenset())
        hits.sort(key=lambda h: (-h.score, h.entity_id))
        return hits[:k]

    def _searchers(self) -> tuple[Searcher, Searcher | None, frozenset[str]]:
        """The disk index, the overlay and the keys pending in it, from one moment: a flush reloads
        the disk before it drops anything from the overlay, under the same lock as this."""
        if self._overlay is None:
            return self._index.searcher(), None, frozenset()
        with self._olock:
            return self._index.searcher(), self._overlay.searcher(), frozenset(self._pending)

    def hashes(self, scope: Scope) -> dict[str, str]:
        """{entity_id: content_hash} for every document of the scope, read from one snapshot."""
        self._before_read()
        disk, overlay, shadow = self._searchers()
        query = scope_filter(self._schema, scope)
        out = {
            _text(d, ENTITY_ID): _text(d, CONTENT_HASH)
            for d in _all(disk, query)
            if _text(d, KEY) not in shadow
        }
        if overlay is not None:
            out.update((_text(d, ENTITY_ID), _text(d, CONTENT_HASH)) for d in _all(overlay, query))
        return out

    # layout changes -------------------------------------------------------------------------------

    def rebuild_scopes(self) -> list[Scope]:
        """The scopes an index of an older layout held, to be refilled from the graph."""
        return list(self._rebuild)

    def rebuild_done(self) -> None:
        """The refill finished: forget the old layout's scopes."""
        if self._path is not None:
            (self._path / REBUILD_FILE).unlink(missing_ok=True)
        self._rebuild = []

    # internals ------------------------------------------------------------------------------------

    def _check_open(self) -> None:
        if not self._open:
            raise BackendUnavailable("tantivy lexical index is closed")

    def _before_read(self) -> None:
        self._check_open()
        if self.read_only and self._path is not None and self._copy is None:
            self._catch_up(self._path)

    def _catch_up(self, path: Path) -> None:
        """Reload to another process's last commit, when there is one since the last reload. Every
        commit replaces meta.json (its opstamp grows), so equal bytes mean no commit since; the
        bytes are read before the reload, so the searcher is never older than what they say. A
        reload on every read cost 0.09 ms and left a cold searcher (a 10,000-entity search 0.88 ms
        instead of 0.65); reading meta.json costs 0.01 ms."""
        try:
            meta = (path / "meta.json").read_bytes()
        except OSError:
            meta = None  # being replaced, or gone: reload and let tantivy say
        if meta is None or meta != self._seen_meta:
            self._index.reload()
            self._seen_meta = meta

    def _live_writer(self) -> IndexWriter:
        self._check_open()
        if self._writer is None:
            raise ReadOnly("the tantivy lexical index is open read-only")
        return self._writer

    def _write(
        self, op: str, scope: Scope, payload: Sequence[Any], entries: Iterable[tuple[str, Document | None]]
    ) -> None:
        """Replace (or, with None, remove) each key's document; one commit for the whole call (in the
        overlay when deferred, by the child process inside `writer_process`)."""
        if self._child is not None:
            while self._sent:  # calls sent ahead are answered first, in order
                self._receive()
            with self._lock:
                self._check_open()
                if self._child is not None:
                    self._child.call(op, scope, payload)
                    self._index.reload()
                    return
        if self._overlay is not None:
            with self._olock:
                self._check_open()
                writer = self._overlay_writer
                assert writer is not None
                written: dict[str, Document | None] = {}
                self._commit(writer, op, entries, written)
                self._pending.update(written)
                self._overlay.reload()
            return
        with self._lock:
            self._commit(self._live_writer(), op, entries)
            self._index.reload()


_GONE = object()


class _Queued:
    """`QueuedWrites` into the writer process: calls sent ahead, answered in order by `done()`."""

    def __init__(self, index: TantivyLexicalIndex) -> None:
        self._index = index

    def upsert(self, scope: Scope, docs: Sequence[LexicalDoc]) -> None:
        if docs:
            self._index._send("upsert", scope, docs)

    def delete(self, scope: Scope, entity_ids: Sequence[str]) -> None:
        if entity_ids:
            self._index._send("delete", scope, entity_ids)  # the child drops repeated ids (deletes)

    def pending(self) -> int:
        return len(self._index._sent)

    def done(self) -> None:
        self._index._receive()


def _hit(stored: Document, score: float) -> LexicalHit:
    tenant_id, namespace, graph_id = (_text(stored, f) for f in SCOPE_FIELDS)
    return LexicalHit(
        entity_id=_text(stored, ENTITY_ID),
        score=float(score),
        tenant_id=tenant_id,
        namespace=namespace,
        graph_id=graph_id,
        content_hash=_text(stored, CONTENT_HASH),
    )


def _top(searcher: Searcher, query: Query, k: int, skip: frozenset[str]) -> list[LexicalHit]:
    """The k best hits (and everything tied with the k-th score) whose key is not in `skip`."""
    limit = k + len(skip) + _TIE_PAD
    while True:
        found = searcher.search(query, limit, count=False).hits
        kept: list[tuple[float, DocAddress | Document]] = list(found)
        if skip:  # only then is every candidate's key read
            kept = [(s, d) for s, d in ((s, searcher.doc(a)) for s, a in found) if _text(d, KEY) not in skip]
        # done when everything tied with the k-th kept score is inside what was fetched
        if len(found) < limit or (len(kept) >= k and found[-1][0] < kept[k - 1][0]):
            break
        limit *= 4
    cutoff = kept[k - 1][0] if len(kept) >= k else float("-inf")
    return [
        _hit(d if isinstance(d, Document) else searcher.doc(d), score) for score, d in kept if score >= cutoff
    ]


def _all(searcher: Searcher, query: Query) -> list[Document]:
    total: int = searcher.search(query, 1, count=True).count or 0  # type: ignore[attr-defined]
    if total == 0:
        return []
    return [searcher.doc(address) for _, address in searcher.search(query, total, count=False).hits]


def _text(stored: Document, field: str) -> str:
    value = stored.get_first(field)
    return value if isinstance(value, str) else ""


def _write_json(path: Path, data: object) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data), encoding="utf-8")
    os.replace(tmp, path)


def _layout(path: Path) -> int | None:
    """The layout of the graphctx index in `path`: None when there is none (or a foreign one, which
    the open then refuses), 1 for a graphctx index written before layouts were recorded."""
    marker = path / LAYOUT_FILE
    if marker.exists():
        try:
            return int(json.loads(marker.read_text(encoding="utf-8"))["layout"])
        except (ValueError, KeyError, TypeError, OSError):
            return 0
    meta = path / "meta.json"
    if not meta.exists():
        return None
    try:
        fields = {f["name"] for f in json.loads(meta.read_text(encoding="utf-8"))["schema"]}
    except (ValueError, KeyError, TypeError, OSError):
        return None  # not an index graphctx wrote: opening it reports the schema mismatch
    return 1 if {*SCOPE_FIELDS, KEY, ENTITY_ID, CONTENT_HASH} <= fields else None


def _stored_scopes(path: Path) -> list[Scope]:
    """Every scope the index in `path` holds, read with the schema it was written with."""
    old = Index.open(str(path))
    old.reload()
    searcher = old.searcher()
    total = searcher.num_docs
    seen: dict[tuple[str, str, str], None] = {}
    if total:
        for _, address in searcher.search(Query.all_query(), total).hits:
            stored = searcher.doc(address)
            seen.setdefault(tuple(_text(stored, f) for f in SCOPE_FIELDS), None)  # type: ignore[arg-type]
    return [Scope(*key) for key in seen]


def _upgrade(path: Path) -> list[Scope]:
    """Replace an index of another layout by an empty one of this layout; the scopes to refill."""
    pending = path / REBUILD_FILE
    layout = _layout(path)
    if layout not in (None, LAYOUT):
        scopes = [] if pending.exists() else _stored_scopes(path)
        if not pending.exists():
            _write_json(pending, [s.as_dict() for s in scopes])
        for child in path.iterdir():
            if child.name != REBUILD_FILE:
                shutil.rmtree(child) if child.is_dir() else child.unlink()
    if not pending.exists():
        return []
    return [Scope(**s) for s in json.loads(pending.read_text(encoding="utf-8"))]
