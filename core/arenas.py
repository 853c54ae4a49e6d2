"""glibc's malloc arenas in a long-running server.

glibc gives threads their own malloc arenas (up to 8 per core), each keeping the memory freed in it;
a served process runs tens of threads, so its RSS holds several arenas' worth of freed memory. Two
arenas keep it much lower at the same throughput (docs/results.md, `soak_10min`). `graphctx serve`
applies that unless MALLOC_ARENA_MAX is already in its environment (any value there wins):
in the environment, read by glibc when the reader processes start, and in this process through
mallopt, which limits the arenas made from then on (before the serving threads start).
"""

from __future__ import annotations

import ctypes
from collections.abc import MutableMapping

ENV = "MALLOC_ARENA_MAX"
SERVING_ARENAS = 2
_M_ARENA_MAX = -8  # glibc's malloc.h


def limit_for_serving(environ: MutableMapping[str, str]) -> str:
    """The arena limit in force for the server: the environment's MALLOC_ARENA_MAX, else 2 (set in
    `environ` for the processes started later, and in this process where glibc is the allocator)."""
    given = environ.get(ENV)
    if given is not None:
        return given
    environ[ENV] = str(SERVING_ARENAS)
    _mallopt(_M_ARENA_MAX, SERVING_ARENAS)
    return environ[ENV]


def _mallopt(param: int, value: int) -> bool:
    try:
        libc = ctypes.CDLL(None)  # the process's own symbols: libc's where it is linked in
        return bool(libc.mallopt(ctypes.c_int(param), ctypes.c_int(value)))
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to limit this way
        return False
