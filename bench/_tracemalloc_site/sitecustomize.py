"""Loaded at start-up by a Python process with this directory on PYTHONPATH (bench/soak.py
--tracemalloc puts it there for the server it starts). With GRAPHCTX_BENCH_TRACEMALLOC=<dir> it traces
allocations from the first import on and, at each SIGUSR1, writes `<dir>/snapshot-<n>.pickle` (a
tracemalloc snapshot) beside `<dir>/snapshot-<n>.json` (traced bytes, tracemalloc's own bytes)."""

import os

_WHERE = os.environ.get("GRAPHCTX_BENCH_TRACEMALLOC")

if _WHERE:
    import itertools
    import json
    import signal
    import tracemalloc

    tracemalloc.start(int(os.environ.get("GRAPHCTX_BENCH_TRACEMALLOC_FRAMES", "1")))
    _count = itertools.count()

    def _dump(signum: int, frame: object) -> None:
        path = os.path.join(_WHERE, f"snapshot-{next(_count)}")
        traced = tracemalloc.get_traced_memory()[0]
        tracemalloc.take_snapshot().dump(path + ".tmp")
        with open(path + ".json", "w") as fh:
            json.dump({"traced": traced, "overhead": tracemalloc.get_tracemalloc_memory()}, fh)
        os.replace(path + ".tmp", path + ".pickle")  # last: its presence says the snapshot is whole

    signal.signal(signal.SIGUSR1, _dump)
