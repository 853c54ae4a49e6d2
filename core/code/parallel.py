"""Parsing in parallel processes (opt-in: the index_workers setting, GRAPHCTX_INDEX_WORKERS=N): a
pure per-file function mapped over the files by up to N worker processes, at most one per core, each
given a contiguous share of the files (balanced by bytes); the shares are joined in input order, so
every id, hash and fact is what the serial path gives. A run too small to share, or a worker that
fails, is parsed in this process: the answer is the same, only the time differs.

Workers are fresh interpreters running this module (`python -m graphctx.code.parallel`), fed one
pickle on stdin and answering one on stdout: no fork of a process that may hold threads and open
stores (a server), and, unlike multiprocessing's spawn, no re-import of the caller's `__main__`
(a script without a main guard must not run again per worker)."""

from __future__ import annotations

import importlib
import os
import pickle
import subprocess
import sys
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

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


def _worker() -> None:
    (module, qualname), items = pickle.loads(sys.stdin.buffer.read())
    fn: Any = importlib.import_module(module)
    for part in qualname.split("."):
        fn = getattr(fn, part)
    sys.stdout.buffer.write(pickle.dumps([fn(i) for i in items], protocol=pickle.HIGHEST_PROTOCOL))


if __name__ == "__main__":
    _worker()
