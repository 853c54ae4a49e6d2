"""Human output a person can read: follow-ups printed as complete commands that run, omissions as
sentences, and a demo that names its backends and data directory and cleans up after itself."""

from __future__ import annotations

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
from graphctx.envelope import call

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
