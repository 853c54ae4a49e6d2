"""Private by default: whatever the caller's umask, the data directory is 0700 and every file the
CLI writes there 0600 (the key store, the graph, the indexes, the journal); a writer tightens a
directory left readable; `status` and `serve` warn about one other users can still read."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

from graphctx.datadir import exposed, make_private
from graphctx.service import ContextService
from graphctx.settings import Settings
from tests.cli.test_data_dir import MEMORY

OTHERS = stat.S_IRWXG | stat.S_IRWXO


def cli_umask0(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`graphctx` in its own process, started under umask 000 (the loosest a caller can have)."""
    env = {**os.environ, "GRAPHCTX_DATA_DIR": str(data), "GRAPHCTX_EMBEDDER": "hashing"}
    return subprocess.run(
        [sys.executable, "-m", "graphctx.cli", *args],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
        preexec_fn=lambda: os.umask(0),
    )


def loose(root: Path) -> list[str]:
    """Every entry under root (root included) that grants group or other users anything."""
    return [
        f"{p.relative_to(root)} {stat.filemode(p.lstat().st_mode)}"
        for p in [root, *root.rglob("*")]
        if not p.is_symlink() and p.lstat().st_mode & OTHERS
    ]


def test_every_cli_write_leaves_the_data_directory_private_under_umask_000(tmp_path: Path) -> None:
    memory = tmp_path / "memory.jsonl"
    memory.write_text("".join(json.dumps(r) + "\n" for r in MEMORY), encoding="utf-8")
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "__init__.py").write_text('def greet(name):\n    """Say hello."""\n    return name\n')
    (repo / "README.md").write_text("# repo\n\nA greeting package.\n")

    demo = tmp_path / "demo"
    done = cli_umask0(tmp_path / "unused", "demo", "--data-dir", str(demo), "--json")
    assert done.returncode == 0, done.stderr
    assert demo.is_dir() and loose(demo) == []

    data = tmp_path / "data"
    for args in (
        ("remember", "--file", str(memory), "--json"),
        ("index", str(repo), "--json"),
        ("keys", "create", "--name", "ci", "--tenant", "acme", "--json"),
    ):
        done = cli_umask0(data, *args)
        assert done.returncode == 0, (args, done.stderr)
        assert loose(data) == [], args
    assert stat.S_IMODE(data.stat().st_mode) == 0o700
    names = {p.name for p in data.rglob("*") if p.is_file()}
    assert {"graph.sqlite", "journal.sqlite", "keys.sqlite", "writer.lock"} <= names


def test_a_writer_tightens_what_it_owns_and_status_warns_about_what_it_cannot(tmp_path: Path) -> None:
    data = tmp_path / "data"
    settings = Settings(data_dir=data, embedder="hashing")
    with ContextService.open(settings):
        pass
    assert stat.S_IMODE(data.stat().st_mode) == 0o700  # created private by the Python API too
    assert exposed(data) == []

    data.chmod(0o755)  # as a careless `chmod -R a+r` or an old version left it
    (data / "graph.sqlite").chmod(0o644)
    before = exposed(data)  # the Python API keeps the caller's umask: the 0700 directory protected them
    assert before[0] == "." and "graph.sqlite" in before

    status = subprocess.run(
        [sys.executable, "-m", "graphctx.cli", "status", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "GRAPHCTX_DATA_DIR": str(data), "GRAPHCTX_EMBEDDER": "hashing"},
    )
    assert status.returncode == 0, status.stderr
    reported = json.loads(status.stdout)["exposed"]
    assert reported[0] == "." and "graph.sqlite" in reported
    assert "readable by other local users" in status.stderr
    assert f"chmod -R go-rwx '{data}'" in status.stderr
    assert set(before) <= set(exposed(data))  # a read reports, it changes nothing

    with ContextService.open(settings):  # a writer takes group and other permissions off
        assert exposed(data) == []
    assert loose(data) == []


def test_make_private_leaves_symlinks_and_reports_what_it_changed(tmp_path: Path) -> None:
    root = tmp_path / "d"
    root.mkdir(mode=0o755)
    root.chmod(0o755)
    (root / "f").write_text("x")
    (root / "f").chmod(0o666)
    outside = tmp_path / "outside"
    outside.write_text("y")
    outside.chmod(0o644)
    (root / "link").symlink_to(outside)

    assert make_private(root) == 2
    assert stat.S_IMODE((root / "f").stat().st_mode) == 0o600
    assert stat.S_IMODE(outside.stat().st_mode) == 0o644  # never follows a link out
    assert make_private(root) == 0
