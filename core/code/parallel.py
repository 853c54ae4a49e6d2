"""Parsing in parallel processes (the index_workers setting, GRAPHCTX_INDEX_WORKERS=N; unset, Python
files are parsed ahead by `Prefetch` and Go files here). `parallel_map`: a
pure per-file function mapped over the files by up to N worker processes, at most one per core, each
given a contiguous share of the files (balanced by bytes); the shares are joined in input order, so
every id, hash and fact is what the serial path gives. A run too small to share, or a worker that
fails, is parsed in this process: the answer is the same, only the time differs.

Workers are fresh interpreters running this module (`python -m graphctx.code.parallel`), fed one
pickle on stdin and answering one on stdout: no fork of a process that may hold threads and open
stores (a server), and, unlike multiprocessing's spawn, no re-import of the caller's `__main__`
(a script without a main guard must not run again per worker)."""

from __future__ import annotations

import contextlib
import importlib
import os
import pickle
import struct
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import IO, Any, Generic, TypeVar

T = TypeVar("T")
R = TypeVar("R")


def cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def shares(sizes: Sequence[int], n: int) -> list[tuple[int, int]]:
    """n contiguous [start, end) ranges of about equal total size (none empty)."""
    total = sum(sizes)
    bounds: list[tuple[int, int]] = []
    start, acc = 0, 0
    for i, size in enumerate(sizes):
        acc += size
        if len(bounds) < n - 1 and acc >= total * (len(bounds) + 1) / n and i + 1 < len(sizes):
            bounds.append((start, i + 1))
            start = i + 1
    bounds.append((start, len(sizes)))
    return [b for b in bounds if b[0] < b[1]]


def parallel_map(
    fn: Callable[[T], R],
    items: Sequence[T],
    sizes: Sequence[int],
    progress: Callable[[int], None] | None = None,
    *,
    workers: int = 1,
) -> list[R]:
    """fn over items, in order, in up to `workers` processes (at most the cores; the index_workers
    setting). `fn` is a module-level function; items and results pickle. `progress(done)` is called
    as items complete (every 200 in this process, per share in workers)."""
    n = max(1, min(workers, cores()))
    if n <= 1 or len(items) < 2 * n or "<" in fn.__qualname__:  # a lambda or closure: not importable
        return _serial(fn, items, progress)
    parts = shares(sizes, n)
    name = (fn.__module__, fn.__qualname__)
    with ThreadPoolExecutor(len(parts)) as threads:
        done = list(threads.map(lambda p: _run(name, list(items[p[0] : p[1]])), parts))
    out: list[R] = []
    for (start, end), got in zip(parts, done, strict=True):
        out.extend(got if got is not None else _serial(fn, items[start:end], None))
        if progress is not None:
            progress(end)
    return out


def _serial(fn: Callable[[T], R], items: Sequence[T], progress: Callable[[int], None] | None) -> list[R]:
    out: list[R] = []
    for n, item in enumerate(items, start=1):
        out.append(fn(item))
        if progress is not None and (n % 200 == 0 or n == len(items)):
            progress(n)
    return out


def _run(name: tuple[str, str], items: list[Any]) -> list[Any] | None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    try:
        payload = pickle.dumps((name, items), protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, AttributeError, TypeError):
        return None
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "graphctx.code.parallel"],
            input=payload,
            capture_output=True,
            env=env,
            check=False,
        )
    except OSError:
        return None
    if proc.returncode != 0:
        return None
    try:
        got = pickle.loads(proc.stdout)
    except (pickle.UnpicklingError, EOFError, ValueError):
        return None
    return got if isinstance(got, list) and len(got) == len(items) else None


def _function(name: tuple[str, str]) -> Any:
    module, qualname = name
    fn: Any = importlib.import_module(module)
    for part in qualname.split("."):
        fn = getattr(fn, part)
    return fn


def _worker() -> None:
    name, items = pickle.loads(sys.stdin.buffer.read())
    fn = _function(name)
    sys.stdout.buffer.write(pickle.dumps([fn(i) for i in items], protocol=pickle.HIGHEST_PROTOCOL))


# -- streaming: each result back as soon as it is made -------------------------------------------

_FRAME = struct.Struct("<Q")
_FAILED = "graphctx.code.parallel:failed"


class Prefetch(Generic[R]):
    """`fn(shared, item)` for items, computed ahead in up to `workers` processes (at most the cores)
    while the caller works, items handed out in order one at a time. `take(i)` gives item i's
    result: waiting for it when a worker has it in hand, else None at once (the item is withdrawn
    and the caller computes it itself, so a caller that needs an item out of order never waits for
    the workers to reach it). None also when a worker failed on it, died, or its result did not
    pickle: the answer never depends on the workers, only the time.

    Workers are fresh interpreters (`python -m graphctx.code.parallel --stream`): `shared` goes to
    each once, then the items on stdin, WINDOW ahead of the results coming back on stdout, every
    message one length-prefixed pickle. A worker is kept WINDOW items ahead because the threads
    that feed and read it need this process's GIL, which the caller holds while it works: one item
    at a time, a worker sat idle for most of each hand-over. A thread per worker sends, one reads;
    a result stays pickled until `take` (the reader needs the GIL only briefly)."""

    WINDOW = 3

    def __init__(self, fn: Callable[[Any, T], R], shared: Any, items: Sequence[T], *, workers: int) -> None:
        self._cond = threading.Condition()
        self._items = items
        self._queue: dict[int, None] = dict.fromkeys(range(len(items)))  # not handed out yet, in order
        self._busy: set[int] = set()
        self._ready: dict[int, bytes] = {}
        self._workers: list[_Worker] = []
        self._threads: list[threading.Thread] = []
        self._closed = False
        name = (fn.__module__, fn.__qualname__)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        try:
            head = pickle.dumps((name, shared), protocol=pickle.HIGHEST_PROTOCOL)
        except (pickle.PicklingError, AttributeError, TypeError):
            return
        for _ in range(max(1, min(workers, cores(), len(items)))):
            try:
                proc = subprocess.Popen(
                    [sys.executable, "-m", "graphctx.code.parallel", "--stream"],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    env=env,
                )
            except OSError:
                break
            worker = _Worker(proc, threading.Semaphore(self.WINDOW))
            self._workers.append(worker)
            for thread in (
                threading.Thread(target=self._send, args=(worker, head), daemon=True),
                threading.Thread(target=self._read, args=(worker,), daemon=True),
            ):
                thread.start()
                self._threads.append(thread)

    def _next(self, worker: _Worker) -> int | None:
        with self._cond:
            if self._closed or worker.gone or not self._queue:
                return None
            i = next(iter(self._queue))
            del self._queue[i]
            self._busy.add(i)
            worker.sent.append(i)
            return i

    def _send(self, worker: _Worker, head: bytes) -> None:
        stdin = worker.proc.stdin
        assert stdin is not None
        try:
            _write_frame(stdin, head)
            while True:
                worker.room.acquire()  # a place in its window (close, or the worker gone, frees all)
                if (i := self._next(worker)) is None:
                    break
                _write_frame(stdin, pickle.dumps((i, self._items[i]), protocol=pickle.HIGHEST_PROTOCOL))
        except Exception:
            pass  # a dead worker: its reader gives back what it owes
        finally:
            with contextlib.suppress(OSError):
                stdin.close()  # the worker's end of input: it exits once it answered

    def _read(self, worker: _Worker) -> None:
        stdout = worker.proc.stdout
        assert stdout is not None
        try:
            while (got := _read_frame(stdout)) is not None:
                with self._cond:
                    if not worker.sent or got[0] != worker.sent[0]:
                        break
                    i = worker.sent.popleft()
                    self._busy.discard(i)
                    if isinstance(got[1], bytes):
                        self._ready[i] = got[1]
                    self._cond.notify_all()
                worker.room.release()
        except Exception:
            pass
        finally:
            with self._cond:  # what the worker still owes is the caller's to compute
                worker.gone = True
                self._busy.difference_update(worker.sent)
                worker.sent.clear()
                self._cond.notify_all()
            worker.room.release(self.WINDOW)

    def take(self, i: int) -> R | None:
        """Item i's result (given once), or None: compute it yourself."""
        with self._cond:
            if self._queue.pop(i, _NOT_QUEUED) is None:
                return None  # not handed out yet: withdrawn
            while i in self._busy:
                self._cond.wait()
            blob = self._ready.pop(i, None)
        if blob is None:
            return None
        try:
            result: R = pickle.loads(blob)
        except Exception:
            return None
        return result

    def close(self) -> None:
        """Stop handing out items and stop the workers."""
        with self._cond:
            self._closed = True
            self._queue.clear()
        for worker in self._workers:
            worker.room.release(self.WINDOW)
            if worker.proc.poll() is None:
                with contextlib.suppress(OSError):
                    worker.proc.kill()
        for thread in self._threads:
            thread.join()
        for worker in self._workers:
            worker.proc.wait()
            if worker.proc.stdout is not None:
                worker.proc.stdout.close()


@dataclass
class _Worker:
    proc: subprocess.Popen[bytes]
    room: threading.Semaphore  # places in its window: items it may be sent before it answers
    sent: deque[int] = field(default_factory=deque)  # sent, not yet answered, in order
    gone: bool = False


_NOT_QUEUED = object()


def _write_frame(stream: IO[bytes], blob: bytes) -> None:
    stream.write(_FRAME.pack(len(blob)))
    stream.write(blob)
    stream.flush()


def _read_frame(stream: IO[bytes]) -> tuple[Any, Any] | None:
    """One message: (item index, result or item), or for the first one (function name, shared)."""
    head = stream.read(_FRAME.size)
    if len(head) < _FRAME.size:
        return None
    (size,) = _FRAME.unpack(head)
    blob = stream.read(size)
    if len(blob) < size:
        return None
    got = pickle.loads(blob)
    return got if isinstance(got, tuple) and len(got) == 2 else None


def _stream_worker() -> None:
    stdin, out = sys.stdin.buffer, sys.stdout.buffer
    head = _read_frame(stdin)
    if head is None:
        return
    fn = _function(head[0])
    shared = head[1]
    while (got := _read_frame(stdin)) is not None:
        i, item = got
        try:  # the result pickled on its own: the caller unpickles it when it takes it
            result = pickle.dumps(fn(shared, item), protocol=pickle.HIGHEST_PROTOCOL)
            blob = pickle.dumps((i, result), protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:
            blob = pickle.dumps((i, _FAILED), protocol=pickle.HIGHEST_PROTOCOL)
        _write_frame(out, blob)


if __name__ == "__main__":
    from graphctx.garbage import fewer_collections

    with fewer_collections():  # a worker's parsed modules hold cycles that die once they are sent
        _stream_worker() if sys.argv[1:] == ["--stream"] else _worker()
