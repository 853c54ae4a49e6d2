"""The index writer's work (documents replaced by key, one commit per call), in this process or in a
child process that owns the writer for a long run of writes (`WriterProcess`).

The child (`python -m graphctx.adapters.tantivy.writer DIR`) is a fresh interpreter holding the
directory's writer lock; it gets calls on stdin ((op, scope, payload), pickled by
`multiprocessing.connection`), possibly sent ahead (it reads each as it comes, so a sender never
waits on a full pipe; one it cannot read is answered as failed), builds the next call's documents
while it commits the last, and answers each in order once it committed, on its own copy of stdout.
Building documents (identifier analysis, Python) and tantivy's indexing then run beside the caller's
process: on a 2-core machine the repository indexer's next graph batch is prepared meanwhile. The
calls, their order and their commits are those the parent would make, with the same writer
settings, so the index and its BM25 statistics are too."""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterable, Sequence
from contextlib import suppress
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tantivy import Document, Index, IndexWriter

from graphctx.adapters.tantivy.analysis import EN_ANALYSER, english_analyser
from graphctx.adapters.tantivy.schema import KEY, WireDoc, build_schema, doc_key, to_document
from graphctx.errors import BackendError, BackendUnavailable, GraphctxError
from graphctx.garbage import fewer_collections
from graphctx.scope import Scope

if TYPE_CHECKING:  # the child gets WireDocs and never imports the models (numpy, pydantic)
    from graphctx.kernel.ports import LexicalDoc

WRITER_HEAP = 64_000_000
START_S = 60.0  # a fresh interpreter importing tantivy: well under a second on a quiet machine
CLOSE_S = 120.0  # the child waits for tantivy's merges before it releases the lock
EXIT_S = 10.0  # from its last answer (or a failure) to its exit, before it is killed


def open_writer(index: Index) -> IndexWriter:
    """One indexing thread: the segments, and so the statistics a merge purges, do not depend on
    how documents are spread across threads."""
    return index.writer(heap_size=WRITER_HEAP, num_threads=1)


def upserts(scope: Scope, docs: Sequence[LexicalDoc | WireDoc]) -> Iterable[tuple[str, Document | None]]:
    """(key, document) per entity, the last of a batch winning; built one at a time while writing,
    so a 100k batch never holds 100k documents in memory."""
    latest = {doc.entity_id: doc for doc in docs}
    return ((doc_key(scope, doc.entity_id), to_document(scope, doc)) for doc in latest.values())


def deletes(scope: Scope, entity_ids: Sequence[str]) -> list[tuple[str, Document | None]]:
    return [(doc_key(scope, entity_id), None) for entity_id in dict.fromkeys(entity_ids)]


def commit(
    writer: IndexWriter,
    op: str,
    entries: Iterable[tuple[str, Document | None]],
    written: dict[str, Document | None] | None = None,
) -> None:
    """Replace (or, with None, remove) each key's document, then one commit; a failure rolls back."""
    try:
        for key, document in entries:
            writer.delete_documents_by_term(KEY, key)
            if document is not None:
                writer.add_document(document)
            if written is not None:
                written[key] = document
        writer.commit()
    except Exception as exc:
        writer.rollback()  # nothing of a failed call stays pending for the next commit
        if isinstance(exc, ValueError | RuntimeError):
            raise BackendError(f"tantivy {op} failed: {exc}") from exc
        raise


class WriterProcess:
    """The parent's end: `call` returns once the child committed, or raises its failure typed."""

    def __init__(self, path: Path) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - the child's for its life, closed in _kill
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "graphctx.adapters.tantivy.writer", str(path)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._stderr,
                env=env,
            )
        except OSError as exc:
            self._stderr.close()
            raise BackendUnavailable(f"cannot start the tantivy writer process: {exc}") from exc
        assert self._proc.stdin is not None and self._proc.stdout is not None
        self._to = Connection(os.dup(self._proc.stdin.fileno()), readable=False)
        self._from = Connection(os.dup(self._proc.stdout.fileno()), writable=False)
        self._proc.stdin.close()
        self._proc.stdout.close()
        # its start is confirmed by the first answer read, not waited for here: calls can be sent
        # (the pipe holds them) while the fresh interpreter imports, beside the caller's own work
        self._starting = True

    def call(self, op: str, scope: Scope, payload: Sequence[Any]) -> None:
        self.send(op, scope, payload)
        self.receive(op)

    def send(self, op: str, scope: Scope, payload: Sequence[Any]) -> None:
        """One call on its way; the child answers calls in the order they were sent (`receive`).
        Documents go as WireDocs (anything else as it is, for the child to refuse)."""
        from graphctx.kernel.ports import LexicalDoc  # this end runs in the parent, which has it

        items = list(payload)
        if op == "upsert":
            items = [WireDoc.of(d) if isinstance(d, LexicalDoc) else d for d in items]
        try:
            self._to.send((op, scope, items))
        except OSError as exc:
            raise self._gone(op) from exc

    def receive(self, op: str) -> None:
        """The answer to the oldest call not yet answered: returns once it is committed."""
        self._answer(op, None)

    def close(self) -> None:
        """Ask the child to finish (merges, lock released) and wait for it; killed if it cannot."""
        try:
            self._to.send(("close", None, []))
            self._answer("close", CLOSE_S)
        except (GraphctxError, OSError):
            pass  # gone or stuck: killed below, and the lock goes with the process
        finally:
            self._kill()

    def _answer(self, op: str, timeout: float | None) -> None:
        if self._starting:
            self._starting = False
            self._answer("start", START_S)
        try:
            if timeout is not None and not self._from.poll(timeout):
                raise BackendUnavailable(
                    f"the tantivy writer process did not answer {op} within {timeout:.0f} s"
                )
            status, message = self._from.recv()
        except (EOFError, OSError) as exc:
            raise self._gone(op) from exc
        if status != "ok":
            raise BackendError(f"tantivy {op} failed: {message}")

    def _gone(self, op: str) -> BackendUnavailable:
        self._proc.poll()
        self._stderr.seek(0)
        tail = self._stderr.read()[-400:].decode(errors="replace").strip()
        why = f"; it said: {tail}" if tail else ""
        return BackendUnavailable(
            f"the tantivy writer process ended during {op} (exit {self._proc.returncode}){why}"
        )

    def _kill(self) -> None:
        if self._proc.poll() is None:
            try:
                self._proc.wait(timeout=EXIT_S)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        for end in (self._to, self._from):
            end.close()
        self._stderr.close()


# (op, its entries or the failure building them); None: the parent is gone
_Ahead = queue.Queue[tuple[str, list[tuple[str, Document | None]] | Exception] | None]
# (op, scope, payload) as the parent sent it; None: the parent is gone
_Inbox = queue.Queue[tuple[str, Any, list[Any]] | None]


def _serve(path: Path, calls: Connection, answers: Connection) -> None:
    try:
        index = Index(build_schema(), path=str(path), reuse=True)
        index.register_tokenizer(EN_ANALYSER, english_analyser())
        writer = open_writer(index)
    except ValueError as exc:
        answers.send(("error", f"cannot open the writer at {path}: {exc}"))
        return
    answers.send(("ok", None))
    # calls are read as soon as they come, so the parent never waits on a full pipe (it bounds what
    # it sends ahead); the next call's documents are built while this one commits (the commit
    # waits outside the GIL)
    inbox: _Inbox = queue.Queue()
    ahead: _Ahead = queue.Queue(1)
    threading.Thread(target=_read_calls, args=(calls, inbox), daemon=True).start()
    threading.Thread(target=_build_ahead, args=(inbox, ahead), daemon=True).start()
    failed: str | None = None
    while (item := ahead.get()) is not None:
        op, entries = item
        if op == "close":
            writer.wait_merging_threads()
            answers.send(("ok", None))
            return
        if failed is not None:  # the parent stops at a failure: what it sent after is not written
            answers.send(("error", f"not written after an earlier failure ({failed})"))
            continue
        try:
            if isinstance(entries, Exception):
                raise entries
            commit(writer, op, entries)
        except GraphctxError as exc:
            failed = exc.message
        except Exception as exc:  # anything else is reported too: the parent must never wait forever
            failed = f"{type(exc).__name__}: {exc}"
        answers.send(("ok", None) if failed is None else ("error", failed))
    # the parent is gone: what was not committed is dropped with the writer


def _read_calls(calls: Connection, inbox: _Inbox) -> None:
    while True:
        try:
            inbox.put(calls.recv())
        except (EOFError, OSError):
            inbox.put(None)
            return
        except Exception as exc:  # a call that cannot be unpickled is answered as failed, never hangs
            inbox.put(("unreadable", None, [exc]))


def _build_ahead(inbox: _Inbox, ahead: _Ahead) -> None:
    while True:
        call = inbox.get()
        if call is None:
            ahead.put(None)
            return
        op, scope, payload = call
        if op == "close":
            ahead.put((op, []))
            return
        if op == "unreadable":
            ahead.put((op, payload[0]))
            continue
        try:
            built: list[tuple[str, Document | None]] | Exception = (
                list(upserts(scope, payload)) if op == "upsert" else deletes(scope, payload)
            )
        except Exception as exc:
            built = exc
        ahead.put((op, built))


def main() -> None:
    # answers go on a private copy of stdout; anything printed goes to stderr
    answers = Connection(os.dup(1), readable=False)
    os.dup2(2, 1)
    # BrokenPipeError: the parent is gone; its journal has what it did not see answered
    with suppress(BrokenPipeError), fewer_collections():  # documents die once committed
        _serve(Path(sys.argv[1]), Connection(0, writable=False), answers)


if __name__ == "__main__":
    main()
