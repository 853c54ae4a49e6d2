"""A circuit breaker per backend: stop piling requests onto a server that has gone silent or away.

Closed, every call goes through. After `THRESHOLD` calls in a row fail as unavailable or abandoned
at their deadline (`BackendUnavailable`, `BackendTimeout`: the server's fault, not the request's), the
breaker opens: calls fail at once with `backend_unavailable` and `retry_after_s` for `COOLDOWN_S`,
instead of each one waiting its whole deadline on a server that does not answer. Then one call at a
time is let through as a probe: an answer closes the breaker, another failure opens it again.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from graphctx.errors import BackendTimeout, BackendUnavailable

T = TypeVar("T")

THRESHOLD = 5
COOLDOWN_S = 2.0


class Breaker:
    def __init__(
        self,
        store: str,
        backend: str,
        *,
        threshold: int = THRESHOLD,
        cooldown_s: float = COOLDOWN_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store, self.backend = store, backend
        self.threshold, self.cooldown_s, self._clock = threshold, cooldown_s, clock
        self._lock = threading.Lock()
        self._failures = 0
        self._opened_at: float | None = None
        self._probing = False

    @property
    def state(self) -> str:
        with self._lock:
            if self._opened_at is None:
                return "closed"
            return "half_open" if self._clock() - self._opened_at >= self.cooldown_s else "open"

    def call(self, fn: Callable[[], T]) -> T:
        probe = self._admit()
        try:
            result = fn()
        except (BackendUnavailable, BackendTimeout):
            self._failed(probe)
            raise
        except BaseException:
            if probe:  # the probe said nothing about the server: let the next call probe
                with self._lock:
                    self._probing = False
            raise
        self._succeeded()
        return result

    def _admit(self) -> bool:
        """Whether this call is the probe of a breaker whose cooldown is over; refuses it when open."""
        with self._lock:
            if self._opened_at is None:
                return False
            left = self.cooldown_s - (self._clock() - self._opened_at)
            if left <= 0 and not self._probing:
                self._probing = True
                return True
        raise BackendUnavailable(
            f"the {self.store} store ({self.backend}) failed {self.threshold} calls in a row; calls are "
            f"paused and it is probed again in {max(left, 0.0):.1f} s",
            store=self.store,
            backend=self.backend,
            retry_after_s=max(1, math.ceil(left)),
        )

    def _failed(self, probe: bool) -> None:
        with self._lock:
            self._failures += 1
            if probe or self._failures >= self.threshold:
                self._opened_at = self._clock()
            if probe:
                self._probing = False

    def _succeeded(self) -> None:
        with self._lock:
            self._failures = 0
            self._opened_at = None
            self._probing = False
