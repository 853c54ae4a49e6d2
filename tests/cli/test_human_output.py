"""Human output a person can read: follow-ups printed as complete commands that run, omissions as
sentences, and a demo that names its backends and data directory and cleans up after itself."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from graphctx.cli import app, render
from graphctx.followups import call

runner = CliRunner()
SCOPE = {"tenant_id": "t", "namespace": "default", "graph_id": ""}


@pytest.mark.parametrize(
    ("record", "line"),
    [
        ({"what": "facts", "of": "checkout-api", "count": 3, "reason": "budget"},
         "3 facts of checkout-api left out to fit the token budget"),
        ({"what": "items", "count": 7, "reason": "budget", "names": ["a", "b"]},
         "7 items left out to fit the token budget: a, b…"),
        ({"what": "callers", "count": 4, "reason": "limit", "limit": 20, "at_least": True},
         "at least 4 callers left out by a limit of 20"),
        ({"what": "facts", "reason": "limit"}, "some facts left out by a limit"),
        ({"what": "facts", "count": 8, "reason": "deadline"}, "8 facts left out when the deadline passed"),
        ({"what": "summary", "of": "x", "reason": "budget"}, "summary of x shortened to fit the token budget"),  # noqa: E501
    ],
)  # fmt: skip
def test_omissions_read_as_sentences(record, line):
    assert render.omission(record) == line


def test_a_follow_up_call_becomes_the_command_line_that_runs_it():
    text = "Cut; see it in full: " + call("explain", name="it's `odd` name") + "."
    render.COMMAND[:] = ["graphctx", "--data-dir", "/d d", "--tenant", "t"]
    try:
        shown = render.follow_up(text, SCOPE)
    finally:
        render.COMMAND[:] = ["graphctx"]
    command = shown.removeprefix("Cut; see it in full: ").removesuffix(".")
    assert shlex.split(command) == [
        "graphctx",
        "--data-dir",
        "/d d",
        "--tenant",
        "t",
        "explain",
        "it's `odd` name",
    ]
    path = render.command("path", {"source": "a", "target": "b", "max_depth": 2}, SCOPE)
    assert shlex.split(path) == ["graphctx", "path", "a", "b", "--max-depth", "2"]
    code = render.command("symbol", {"name": "m.f"}, {**SCOPE, "graph_id": "g"})
    assert shlex.split(code) == ["graphctx", "symbol", "m.f", "--graph", "g"]


@pytest.fixture
def sample(tmp_path, monkeypatch):
    from graphctx.demo import sample_path

    monkeypatch.setenv("GRAPHCTX_EMBEDDER", "hashing")
    monkeypatch.delenv("GRAPHCTX_DATA_DIR", raising=False)
    data = tmp_path / "data"
    loaded = runner.invoke(
        app, ["--data-dir", str(data), "--tenant", "t", "remember", "-f", str(sample_path())]
    )
    assert loaded.exit_code == 0, loaded.output
    return data


def test_the_next_command_a_cut_recall_prints_runs(sample):
    flags = ["--data-dir", str(sample), "--tenant", "t"]
    result = runner.invoke(
        app, [*flags, "recall", "who owns checkout-api", "--depth", "2", "--max-tokens", "700"]
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    omitted = [line for line in lines if line.startswith("omitted: ")]
    assert omitted and not any("{" in line for line in omitted)
    [next_line] = [line for line in lines if line.startswith("next: ")]
    argv = shlex.split(next_line.split(": ", 2)[2])
    assert argv[: 1 + len(flags)] == ["graphctx", *flags] and argv[len(flags) + 1] == "explain"
    explained = runner.invoke(app, [*argv[1:], "--json"])
    assert explained.exit_code == 0, explained.output
    assert json.loads(explained.stdout)["subject"]["name"] == "checkout-api"


def _demo(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHCTX_")}
    environ.update(TMPDIR=str(tmp_path), GRAPHCTX_EMBEDDER="hashing")
    return subprocess.run(
        [sys.executable, "-m", "graphctx.cli", "demo", *args],
        capture_output=True, text=True, timeout=300, env=environ,
    )  # fmt: skip


def test_the_demo_names_its_backends_and_removes_its_temporary_directory(tmp_path):
    done = _demo(tmp_path)
    assert done.returncode == 0, done.stderr
    assert re.search(r"^backends: graph sqlite, lexical tantivy, vector \S+, embedder \S+", done.stdout, re.M)
    [where] = [line for line in done.stdout.splitlines() if line.startswith("demo data directory: ")]
    assert "removed at the end" in where
    assert "graphctx demo --keep" in done.stdout
    assert not list(tmp_path.glob("graphctx-demo-*")), "the temporary directory is left behind"
    answer = json.loads(_demo(tmp_path, "--json").stdout)
    assert answer["kept"] is False and answer["backends"]["graph"] == "sqlite"
    assert not Path(answer["data_dir"]).exists()


def test_the_demo_keeps_its_directory_on_request_and_its_try_line_runs(tmp_path):
    done = _demo(tmp_path, "--keep")
    assert done.returncode == 0, done.stderr
    [kept] = tmp_path.glob("graphctx-demo-*")
    [try_line] = [line for line in done.stdout.splitlines() if line.startswith("Try: ")]
    argv = shlex.split(try_line.removeprefix("Try: "))
    assert str(kept) in argv
    environ = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHCTX_")}
    tried = subprocess.run(
        [sys.executable, "-m", "graphctx.cli", *argv[1:], "--json"],
        capture_output=True, text=True, timeout=300, env={**environ, "GRAPHCTX_EMBEDDER": "hashing"},
    )  # fmt: skip
    assert tried.returncode == 0, tried.stderr
    assert json.loads(tried.stdout)["subject"]["name"] == "checkout-api"


# -- width: fixed when piped, the terminal's on a terminal ------------------------------------------

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _config_output(tmp_path: Path, *, stdout_tty: int | None = None, other_tty: int | None = None, **env):
    """`graphctx config` in a subprocess (a data directory path wider than 80 columns), its stdout
    a pipe or a terminal `stdout_tty` columns wide; stdin and stderr a pipe or a terminal
    `other_tty` columns wide. Returns its lines, ANSI styles removed."""
    import fcntl
    import pty
    import struct
    import termios

    environ = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHCTX_") and k != "COLUMNS"}
    environ.update(
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        GRAPHCTX_DATA_DIR=str(tmp_path / ("a-long-data-directory-name-" * 4)),
        **env,
    )
    terminals = []

    def terminal(columns: int) -> int:
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
        terminals.append((master, slave))
        return slave

    other = terminal(other_tty) if other_tty else subprocess.DEVNULL
    out = terminal(stdout_tty) if stdout_tty else subprocess.PIPE
    proc = subprocess.Popen(
        [sys.executable, "-m", "graphctx.cli", "config"],
        stdin=other, stdout=out, stderr=other if other_tty else subprocess.PIPE, env=environ,
    )  # fmt: skip
    try:
        if stdout_tty:
            os.close(out)
            chunks = []
            while True:
                try:
                    chunk = os.read(terminals[-1][0], 65536)
                except OSError:  # EIO: the terminal's other end closed
                    break
                if not chunk:
                    break
                chunks.append(chunk)
            text = b"".join(chunks).decode()
        else:
            assert proc.stdout is not None
            text = proc.stdout.read().decode()
        assert proc.wait(timeout=120) == 0
    finally:
        for master, slave in terminals:
            for fd in (master, slave):
                with contextlib.suppress(OSError):
                    os.close(fd)
    return [ANSI.sub("", line).rstrip("\r") for line in text.splitlines()]


def test_piped_output_has_a_fixed_width_whatever_terminal_started_it(tmp_path):
    from graphctx.cli import PIPED_WIDTH

    piped = _config_output(tmp_path)
    beside_a_terminal = _config_output(tmp_path, other_tty=60)  # `graphctx config | less` in a terminal
    assert piped == beside_a_terminal
    assert max(len(line) for line in piped) <= PIPED_WIDTH
    data_dir = str(tmp_path / ("a-long-data-directory-name-" * 4))
    assert any(data_dir in line for line in piped), "a path wider than 80 columns is shown whole"
    narrow = _config_output(tmp_path, COLUMNS="90")  # an explicit width still wins
    assert max(len(line) for line in narrow) <= 90 < max(len(line) for line in piped)


def test_on_a_terminal_output_follows_its_width(tmp_path):
    for columns in (100, 150):
        lines = _config_output(tmp_path, stdout_tty=columns)
        assert any(line.startswith("config file ") for line in lines)
        assert max(len(line) for line in lines) <= columns
        assert max(len(line) for line in lines) > columns - 10  # the table uses the room it has


def test_a_remember_report_lists_supersessions_one_a_line_not_as_python_reprs(tmp_path):
    env = ["--data-dir", str(tmp_path / "d")]
    ents = ['{"id": "svc", "name": "svc"}', '{"id": "a", "name": "a"}', '{"id": "b", "name": "b"}']
    owned = '{"subject_id": "svc", "predicate": "owned_by", "object_id": "%s", "valid_from": "%s"}'
    first = [owned % ("a", "2025-01-01T00:00:00Z")]
    later = [owned % ("b", "2026-01-01T00:00:00Z")]
    args = [a for e in ents for a in ("--entity", e)] + [a for f in first for a in ("--fact", f)]
    assert runner.invoke(app, [*env, "remember", *args]).exit_code == 0
    shown = runner.invoke(app, [*env, "remember", *[a for f in later for a in ("--fact", f)]])
    assert shown.exit_code == 0, shown.output
    cells = " ".join(line.split("│")[2] for line in shown.output.splitlines() if line.count("│") == 3)
    assert re.search(r"fact: f_\w+ +by: +f_\w+ +valid_to: +2026-01-01T00:00:00", cells), shown.output
    assert "{" not in shown.output and "'" not in shown.output
    assert re.search(r"index_errors +│ none", shown.output), shown.output
