"""Index durability after the acknowledgement: the disk commits of the indexes leave the write path.

A write is acknowledged once its plan is journaled, applied to the graph and searchable in the
indexes of this process (`DefersDurability`: Tantivy's in-memory overlay, the flat index's unsynced
tail). Its journal entry stays open; this flusher makes the indexes durable in the background (one
disk commit for every write acknowledged since the last one, at most `interval_s` after the first)
and only then completes those entries. A crash in between leaves them journaled: the next open
replays them (graph writes are idempotent, the indexes are re-synced from the graph), so an
acknowledged write is never lost. Reads in this process see the write at once; other processes (a
read-only CLI) see it after the flush.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence

log = logging.getLogger("graphctx.durability")

RETRY_S = 1.0
"""Pause after a failed flush (the entries stay open; reconcile or the next open also completes them)."""


class DeferredFlush:
    """Journal entries whose index update is searchable but not yet durable, and the thread that
    flushes the indexes and completes them."""

    def __init__(
        self,
        flush: Callable[[], None],
        complete: Callable[[Sequence[int]], None],
        interval_s: float,
    ) -> None:
        self._flush = flush
        self._complete = complete
        self._interval_s = interval_s
        self._held: list[int] = []
        self._cond = threading.Condition()
        self._closed = False
        self._busy = threading.Lock()  # one flush at a time (the thread's, or close's last one)
        self.flushes = 0
        self.failures = 0
        self._thread = threading.Thread(target=self._run, name="graphctx-index-flush", daemon=True)
        self._thread.start()

    def hold(self, seq: int) -> None:
        """The write `seq` is searchable; complete its journal entry after the next flush."""
        with self._cond:
            self._held.append(seq)
            self._cond.notify()

    def held(self) -> frozenset[int]:
        """Entries this process applied and is flushing: recovery must not replay them."""
        with self._cond:
            return frozenset(self._held)

    def stats(self) -> dict[str, float | int]:
        with self._cond:
            waiting = len(self._held)
        return {
            "interval_ms": self._interval_s * 1000,
            "waiting": waiting,
            "flushes": self.flushes,
            "failures": self.failures,
        }

    def flush_now(self) -> bool:
        """Flush what is held now (False: the flush failed, the entries stay journaled)."""
        return self._flush_held()

    def close(self) -> None:
        """Flush what is held, then stop the thread (the stores are closed after this)."""
        with self._cond:
            self._closed = True
            self._cond.notify()
        self._thread.join()
        self._flush_held()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._held and not self._closed:
                    self._cond.wait()
                flush_at = time.monotonic() + self._interval_s  # more writes join this flush
                while not self._closed and (left := flush_at - time.monotonic()) > 0:
                    self._cond.wait(left)
                if self._closed:
                    return  # close() flushes what is held
            if not self._flush_held():
                with self._cond:
                    self._cond.wait(RETRY_S)

    def _flush_held(self) -> bool:
        with self._busy:
            with self._cond:
                seqs = list(self._held)  # each one's index update was made before it was held
            if not seqs:
                return True
            try:
                self._flush()
                self._complete(seqs)
            except Exception:  # the entries stay journaled: the next flush or open completes them
                self.failures += 1
                log.exception("index flush failed; %d acknowledged writes stay journaled", len(seqs))
                return False
            self.flushes += 1
            with self._cond:
                done = set(seqs)
                self._held = [s for s in self._held if s not in done]
            return True
