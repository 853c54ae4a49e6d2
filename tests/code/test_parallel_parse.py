"""Parsing in worker processes (graphctx.code.parallel) gives exactly what the serial path gives:
the same parsed files in the same order, and through the indexer the same ids, hashes and facts."""

from __future__ import annotations

import itertools
import os
import sys
import threading
from pathlib import Path

import pytest

from graphctx.code.goparse import parse_go
from graphctx.code.parallel import parallel_map, shares
from graphctx.errors import ConfigError
from graphctx.scope import Scope
from graphctx.service import ContextService
from tests.code.go_fixture import FIXTURE, copy_goshop
from tests.code.index_helpers import graph_snapshot, write_repo

SCOPE = Scope("parallel-parse")


def _go_sources() -> list[tuple[str, bytes]]:
    return sorted((p.relative_to(FIXTURE).as_posix(), p.read_bytes()) for p in FIXTURE.rglob("*.go"))


def _parse(item: tuple[str, bytes]):
    return parse_go(*item)


def _fails_in_a_worker(item: tuple[str, bytes]):
    if sys.argv[0].endswith("parallel.py"):  # the worker runs `python -m graphctx.code.parallel`
        raise RuntimeError("a worker that dies")
    return parse_go(*item)


def test_a_go_file_parses_the_same_every_time():
    """tree-sitter's captures come back in no fixed order; the calls a file lists must not."""
    sources = _go_sources()
    assert [parse_go(*s) for s in sources] == [parse_go(*s) for s in sources]


def test_shares_are_contiguous_balanced_and_cover_everything():
    assert shares([1] * 10, 2) == [(0, 5), (5, 10)]
    assert shares([100, 1, 1, 1], 2) == [(0, 1), (1, 4)]
    assert shares([5], 4) == [(0, 1)]
    parts = shares([3, 1, 4, 1, 5, 9, 2, 6], 3)
    assert parts[0][0] == 0 and parts[-1][1] == 8
    assert all(a[1] == b[0] for a, b in itertools.pairwise(parts))


def test_workers_parse_what_this_process_parses_in_order(monkeypatch: pytest.MonkeyPatch):
    sources = _go_sources()
    serial = [parse_go(*s) for s in sources]
    assert parallel_map(_parse, sources, [len(d) for _, d in sources], workers=2) == serial


def test_a_failing_worker_falls_back_to_this_process(monkeypatch: pytest.MonkeyPatch):
    sources = _go_sources()
    got = parallel_map(_fails_in_a_worker, sources, [len(d) for _, d in sources], workers=2)
    assert got == [parse_go(*s) for s in sources]


@pytest.mark.parametrize("workers", [1, 0, -3, 2])
def test_one_worker_or_an_unsendable_function_is_the_serial_path(workers: int):
    sources = _go_sources()
    calls: list[str] = []

    def parse_here(item: tuple[str, bytes]):
        calls.append(item[0])  # a closure cannot be sent to a worker: only the serial path runs it
        return parse_go(*item)

    got = parallel_map(parse_here, sources, [len(d) for _, d in sources], workers=workers)
    assert got == [parse_go(*s) for s in sources]
    assert calls == [rel for rel, _ in sources]


@pytest.mark.parametrize("value", ["0", "-3", "lots", "65"])
def test_a_bad_worker_count_is_a_config_error_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, value: str
):
    from typer.testing import CliRunner

    from graphctx.cli import app

    monkeypatch.setenv("GRAPHCTX_INDEX_WORKERS", value)
    r = CliRunner().invoke(app, ["config", "--json"])
    assert r.exit_code == ConfigError.exit_status
    assert "index_workers" in r.stdout and "GRAPHCTX_INDEX_WORKERS" in r.stdout


def test_the_worker_count_is_a_setting_shown_by_config(monkeypatch: pytest.MonkeyPatch):
    from typer.testing import CliRunner

    from graphctx.cli import app

    monkeypatch.setenv("GRAPHCTX_INDEX_WORKERS", "2")
    r = CliRunner().invoke(app, ["config"])
    assert r.exit_code == 0 and "index_workers" in r.stdout and "GRAPHCTX_INDEX_WORKERS" in r.stdout


def test_an_index_parsed_by_workers_equals_the_serial_index(
    monkeypatch: pytest.MonkeyPatch, service: ContextService, tmp_path: Path
):
    serial_root = copy_goshop(tmp_path / "a")
    serial_report = service.index_repository(SCOPE, serial_root, repo="shop").as_dict()
    serial = graph_snapshot(service, SCOPE)
    assert serial[1]  # the fixture has edges

    other = Scope("parallel-parse", "workers")
    workers_root = copy_goshop(tmp_path / "b")
    monkeypatch.setattr(service, "settings", service.settings.model_copy(update={"index_workers": 2}))
    report = service.index_repository(other, workers_root, repo="shop").as_dict()
    assert graph_snapshot(service, other) == serial
    ignore = {"root", "seconds"}
    assert {k: v for k, v in report.items() if k not in ignore} == {
        k: v for k, v in serial_report.items() if k not in ignore
    }

    # an edit re-indexed by workers gives what a fresh serial index of the edited tree gives
    cart = next(p for p in workers_root.rglob("*.go") if "cart" in p.as_posix() and "_test" not in p.name)
    write_repo(
        workers_root, {cart.relative_to(workers_root).as_posix(): cart.read_text() + "\nfunc Extra() {}\n"}
    )
    service.index_repository(other, workers_root, repo="shop")
    monkeypatch.setattr(service, "settings", service.settings.model_copy(update={"index_workers": 1}))
    fresh = Scope("parallel-parse", "fresh")
    service.index_repository(fresh, workers_root, repo="shop")
    assert graph_snapshot(service, other) == graph_snapshot(service, fresh)


# -- Python: files parsed ahead in worker processes (graphctx.code.parallel.Prefetch) -----------------


def _python_tree(root: Path, n: int = 80) -> Path:
    """Enough modules to be parsed ahead (workspace.PARSE_AHEAD_MIN), calling across modules, with a
    syntax error and a class hierarchy, so parse errors, calls and inherits all show."""
    files: dict[str, str | None] = {"pkg/__init__.py": '"""The package."""\nfrom pkg.m0 import f0\n'}
    for i in range(n):
        prev = f"from pkg.m{i - 1} import f{i - 1}, C{i - 1}\n" if i else ""
        base = f"C{i - 1}" if i else "object"
        call = f"    return f{i - 1}() + 1\n" if i else "    return 0\n"
        files[f"pkg/m{i}.py"] = (
            f'"""Module {i}."""\n{prev}\n\ndef f{i}() -> int:\n    """Step {i}."""\n{call}\n\n'
            f"class C{i}({base}):\n    def run(self) -> int:\n        return f{i}()\n"
        )
    files["pkg/broken.py"] = "def oops(:\n"
    return write_repo(root, files)


def _square(shared: int, item: int) -> int:
    return shared * item * item


def _fails_in_a_worker_shared(shared: int, item: int) -> int:
    if sys.argv[0].endswith("parallel.py") and item % 3 == 0:
        raise RuntimeError("a worker that fails on some items")
    return _square(shared, item)


def _dies_in_a_worker_shared(shared: int, item: int) -> int:
    if sys.argv[0].endswith("parallel.py") and item == 7:
        os._exit(1)  # the worker dies with items of its window still unanswered
    return _square(shared, item)


@pytest.mark.parametrize("fn", [_square, _fails_in_a_worker_shared, _dies_in_a_worker_shared])
def test_prefetched_results_are_the_callers_or_none_and_never_wrong(fn):
    from graphctx.code.parallel import Prefetch

    items = list(range(40))
    ahead = Prefetch(fn, 3, items, workers=2)
    got: dict[int, int | None] = {}

    def take_all() -> None:
        # in order, then one out of order (withdrawn if not handed out yet), then the rest
        for i in [0, 1, 2, 39, *range(3, 39)]:
            got[i] = ahead.take(i)

    taker = threading.Thread(target=take_all, daemon=True)
    taker.start()
    taker.join(timeout=300)  # a bound against a take that never returns, not a timing
    ahead.close()
    assert not taker.is_alive(), f"take waits forever after {len(got)} items"
    assert len(got) == len(items)
    for i, result in got.items():
        assert result in (None, 3 * i * i)
    if fn is _fails_in_a_worker_shared:
        assert all(got[i] is None for i in items if i % 3 == 0)
    if fn is _dies_in_a_worker_shared:
        assert got[7] is None
        assert any(got[i] is not None for i in items)  # the other worker went on


def test_a_python_index_parsed_ahead_by_workers_equals_the_serial_index(
    monkeypatch: pytest.MonkeyPatch, service: ContextService, tmp_path: Path
):
    from graphctx.code import workspace

    root = _python_tree(tmp_path / "py")
    serial_report = service.index_repository(SCOPE, root, repo="py").as_dict()
    serial = graph_snapshot(service, SCOPE)
    assert serial[1] and serial_report["parse_errors"]

    taken: list[str] = []
    real = workspace.Prefetch.take

    def counting(self, i):
        got = real(self, i)
        if got is not None:
            taken.append(got.relpath)
        return got

    monkeypatch.setattr(workspace.Prefetch, "take", counting)
    other = Scope("parallel-parse", "python-workers")
    monkeypatch.setattr(service, "settings", service.settings.model_copy(update={"index_workers": 2}))
    report = service.index_repository(other, root, repo="py").as_dict()
    assert taken  # the workers did parse some of them
    assert graph_snapshot(service, other) == serial
    ignore = {"root", "seconds"}
    assert {k: v for k, v in report.items() if k not in ignore} == {
        k: v for k, v in serial_report.items() if k not in ignore
    }
