"""The deadline of the operation being served, visible to every backend call made on its behalf.

An operation runs `within(seconds)`; an adapter bounds each call it makes with `budget(cap)`: its own
timeout, or what remains of the operation's deadline when that is less, so no single call (connect,
pool wait, send, read, retry, lock) outlives the operation it serves. Work handed to another thread
carries the deadline with `carry(fn)` (context variables do not cross threads by themselves). Outside
any operation (a test driving an adapter directly, a migration) `budget` is just the cap.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import ParamSpec, Protocol, TypeVar

from graphctx.errors import DeadlineExceeded

P = ParamSpec("P")
R = TypeVar("R")

MIN_CALL_S = 0.05
"""The least time a backend call is given: below it the call could not answer anyway."""


@dataclass
class Deadline:
    seconds: float
    started: float = field(default_factory=time.monotonic)

    def remaining(self) -> float:
        return self.seconds - (time.monotonic() - self.started)

    def check(self, stage: str) -> None:
        if self.remaining() <= 0:
            raise DeadlineExceeded(f"the {self.seconds:g} s deadline passed before {stage}", stage=stage)


_current: contextvars.ContextVar[Deadline | None] = contextvars.ContextVar("graphctx_deadline", default=None)


def current() -> Deadline | None:
    return _current.get()


@contextmanager
def within(seconds: float) -> Iterator[Deadline]:
    """Run the block under a deadline of `seconds`; nested inside another one, the earlier of the two
    holds (an operation called by another never extends it)."""
    outer = _current.get()
    mine = Deadline(seconds)
    if outer is not None and outer.remaining() <= mine.remaining():
        mine = outer
    token = _current.set(mine)
    try:
        yield mine
    finally:
        _current.reset(token)


def budget(cap: float, what: str = "the next backend call") -> float:
    """Seconds the next backend call may take: `cap`, or the operation's remaining time if less.
    DeadlineExceeded (naming `what`) when nothing remains."""
    deadline = _current.get()
    if deadline is None:
        return cap
    left = deadline.remaining()
    if left < MIN_CALL_S:
        raise DeadlineExceeded(f"the {deadline.seconds:g} s deadline passed before {what}", stage=what)
    return min(cap, left)


class Lock(Protocol):
    def acquire(self, blocking: bool = ..., timeout: float = ...) -> bool: ...

    def release(self) -> None: ...


def acquire(lock: Lock, what: str) -> None:
    """Take `lock` within the operation's deadline (forever outside one); DeadlineExceeded otherwise."""
    deadline = _current.get()
    if deadline is None:
        lock.acquire()
        return
    if not lock.acquire(timeout=max(0.0, deadline.remaining())):
        raise DeadlineExceeded(f"the {deadline.seconds:g} s deadline passed waiting for {what}", stage=what)


def carry(fn: Callable[P, R]) -> Callable[P, R]:
    """`fn`, run under the caller's deadline in whatever thread calls it."""
    context = contextvars.copy_context()

    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        return context.run(fn, *args, **kwargs)

    return run
