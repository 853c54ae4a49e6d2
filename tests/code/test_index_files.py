"""Which files are indexed (.gitignore, exclusions), Markdown sections and mentions, and the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from graphctx.cli import app
from graphctx.code import ids
from graphctx.errors import BoundExceeded, InputError, NotFound
from graphctx.scope import Scope
from graphctx.service import ContextService
from tests.code.index_helpers import edges, graph_hashes, write_repo
from tests.conftest import fixed_clock, make_settings

SCOPE = Scope("files", "default")


def indexed_paths(service, scope=SCOPE) -> set[str]:
    files = [ids.parse(i) for i in graph_hashes(service, scope)]
    return {f.path for f in files if f is not None and not f.member}


def test_gitignore_nested_negation_and_exclusions(service, tmp_path: Path):
    root = write_repo(
        tmp_path / "repo",
        {
            ".gitignore": "build/\n*.gen.py\n",
            "src/keep.py": "",
            "src/out.gen.py": "",
            "build/lib.py": "",
            "src/.gitignore": "secret*.py\n!secret_ok.py\n",
            "src/secret_a.py": "",
            "src/secret_ok.py": "",
            "vendor/dep.py": "",
            "notes/skip.md": "# x\n",
            ".venv/lib/x.py": "",  # excluded by the default settings
            "README.md": "# R\n",
        },
    )
    service.index_repository(SCOPE, root, exclude=["vendor/", "notes/*.md"])
    assert indexed_paths(service) == {"src/keep.py", "src/secret_ok.py", "README.md"}


def test_exclusions_from_settings(tmp_path: Path):
    root = write_repo(tmp_path / "repo", {"a.py": "", "gen/b.py": ""})
    settings = make_settings(tmp_path / "data", code_exclude=["gen/"])
    with ContextService.open(settings, clock=fixed_clock) as service:
        service.index_repository(SCOPE, root)
        assert indexed_paths(service) == {"a.py"}


def test_bad_input_is_a_typed_error(service, tmp_path: Path):
    with pytest.raises(InputError):
        service.index_repository(SCOPE, tmp_path / "missing")
    with pytest.raises(BoundExceeded):
        service.index_repository(SCOPE, tmp_path, exclude=["x"] * 200)
    with pytest.raises(InputError):
        service.index_repository(SCOPE, tmp_path, exclude="vendor/")  # type: ignore[arg-type]


DOC = """Intro text before any heading.

# Guide

Start with pkg.mod.Runner and `helper()`.

```python
# not a heading
run()
```

Setext part
-----------

Uses `Runner.start` and `start`, which is ambiguous.

## Guide

Same heading twice; `nothing_known`.
"""


def test_markdown_sections_and_mentions(service, tmp_path: Path):
    root = write_repo(
        tmp_path / "repo",
        {
            "pkg/__init__.py": "",
            "pkg/mod.py": (
                "class Runner:\n    def start(self):\n        pass\n\n\n"
                "class Other:\n    def start(self):\n        pass\n\n\ndef helper():\n    pass\n"
            ),
            "docs/guide.md": DOC,
        },
    )
    report = service.index_repository(SCOPE, root)
    assert (report.documents, report.sections) == (1, 3)
    doc = service.explain(SCOPE, "md:repo:docs/guide.md")["subject"]
    assert doc["type"] == "document" and doc["summary"] == "Intro text before any heading."
    first = service.explain(SCOPE, "md:repo:docs/guide.md#guide")["subject"]
    assert first["location"] == {"path": "docs/guide.md", "lines": [3, 11]}
    assert first["summary"] == "Start with pkg.mod.Runner and `helper()`."
    mentioned = {o for _, o, _ in edges(service, SCOPE, "md:repo:docs/guide.md#guide", "mentions")}
    assert mentioned == {"pkg.mod.Runner", "pkg.mod.helper"}
    setext = {o for _, o, _ in edges(service, SCOPE, "md:repo:docs/guide.md#setext-part", "mentions")}
    assert setext == {"pkg.mod.Runner.start"}  # `start` alone names two methods: not a mention
    assert edges(service, SCOPE, "md:repo:docs/guide.md#guide-2", "mentions") == set()
    with pytest.raises(NotFound):
        service.explain(SCOPE, "md:repo:docs/guide.md#not-a-heading")


def test_cli_index_json_and_summary(tmp_path: Path):
    root = write_repo(tmp_path / "repo", {"m.py": "def f():\n    return g()\n\n\ndef g():\n    return 1\n"})
    runner = CliRunner()
    base = ["--data-dir", str(tmp_path / "data"), "--tenant", "cli"]
    first = runner.invoke(app, [*base, "index", str(root), "--json"], env={"GRAPHCTX_EMBEDDER": "hashing"})
    assert first.exit_code == 0, first.output
    data = json.loads(first.stdout)
    assert (data["files_new"], data["symbols"], data["resolved_calls"]) == (1, 2, 1)
    assert data["scope"] == {"tenant_id": "cli", "namespace": "default", "graph_id": ""}
    human = runner.invoke(app, [*base, "index", str(root)], env={"GRAPHCTX_EMBEDDER": "hashing"})
    assert human.exit_code == 0, human.output
    assert "files seen" in human.stdout and "unchanged" in human.stdout
    shared = runner.invoke(
        app, [*base, "index", str(root), "--graph", "g1", "--json"], env={"GRAPHCTX_EMBEDDER": "hashing"}
    )
    assert json.loads(shared.stdout)["scope"]["graph_id"] == "g1"
    missing = runner.invoke(
        app, [*base, "index", str(tmp_path / "nope")], env={"GRAPHCTX_EMBEDDER": "hashing"}
    )
    assert missing.exit_code == 64


def test_memory_entities_that_look_like_code_ids_are_left_alone(service, tmp_path: Path):
    service.remember(SCOPE, [{"id": "py:notes.py", "name": "my note", "type": "note"}])
    root = write_repo(tmp_path / "repo", {"a.py": "def f():\n    pass\n"})
    report = service.index_repository(SCOPE, root)
    assert report.files_deleted == 0
    assert service.explain(SCOPE, "py:notes.py")["subject"]["name"] == "my note"


def test_symlinks_are_followed_only_inside_the_repository(service, tmp_path: Path):
    outside = write_repo(tmp_path / "outside", {"secret.py": "def leak():\n    pass\n"})
    root = write_repo(tmp_path / "repo", {"real.py": "def f():\n    pass\n"})
    (root / "alias.py").symlink_to(root / "real.py")
    (root / "leak.py").symlink_to(outside / "secret.py")
    (root / "linked_dir").symlink_to(outside, target_is_directory=True)
    service.index_repository(SCOPE, root)
    assert indexed_paths(service) == {"real.py", "alias.py"}
