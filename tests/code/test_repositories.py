"""Repositories as units: several in one scope stay independent through index, re-index, edit,
rename, delete and removal; imports across them resolve; layouts are import names; the CLI lists,
re-indexes and removes them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from graphctx.cli import app
from graphctx.code import ids
from graphctx.errors import InputError, NotFound
from graphctx.scope import Scope
from tests.code.index_helpers import (
    assert_indexes_match_graph,
    callees,
    callers,
    graph_hashes,
    lexical_ids,
    write_repo,
)

SCOPE = Scope("repos", "default")

LIB = {
    "pyproject.toml": '[project]\nname = "shared-lib"\n\n[tool.setuptools.packages.find]\nwhere = ["src"]\n',
    "src/sharedlib/__init__.py": '"""Shared."""\nfrom sharedlib.text import slug\n',
    "src/sharedlib/text.py": (
        '"""Text helpers."""\n\n\ndef slug(s):\n    """A slug."""\n    return clean(s).lower()\n\n\n'
        "def clean(s):\n    return s.strip()\n"
    ),
    "tests/test_text.py": (
        "from sharedlib.text import slug\n\n\ndef test_slug():\n    assert slug(' A ') == 'a'\n"
    ),
}
SVC = {
    "setup.cfg": "[metadata]\nname = billing\n\n[options]\npackages = find:\n",
    "billing/__init__.py": "",
    "billing/api.py": (
        "import sharedlib\nfrom sharedlib.text import clean\n\n\ndef handle(s):\n"
        "    return sharedlib.slug(s) + clean(s)\n"
    ),
    # the same paths and names as the library's: ids never collide
    "tests/test_text.py": "from billing.api import handle\n\n\ndef test_slug():\n    assert handle('x')\n",
}


def repo_ids(service, repo: str) -> set[str]:
    return {i for i in graph_hashes(service, SCOPE) if (p := ids.parse(i)) is not None and p.repo == repo}


@pytest.fixture
def two(service, tmp_path: Path):
    lib = write_repo(tmp_path / "lib-checkout", LIB)
    svc = write_repo(tmp_path / "svc-checkout", SVC)
    first = service.index_repository(SCOPE, lib)
    second = service.index_repository(SCOPE, svc)
    return service, lib, svc, first, second


def test_each_repository_is_named_and_a_second_one_leaves_the_first_alone(two):
    service, _lib, _svc, first, second = two
    assert (first.repo, second.repo) == ("shared-lib", "billing")  # declared project names
    assert first.roots == ["src(sharedlib)"] and second.files_deleted == 0
    assert {r["repo"] for r in service.repositories(SCOPE)} == {"shared-lib", "billing"}
    assert "py:shared-lib:src/sharedlib/text.py::slug" in graph_hashes(service, SCOPE)
    assert "py:billing:tests/test_text.py::test_slug" in graph_hashes(service, SCOPE)
    assert "py:shared-lib:tests/test_text.py::test_slug" in graph_hashes(service, SCOPE)
    assert service.symbol(SCOPE, "sharedlib.text.slug")["subject"]["at"] == "src/sharedlib/text.py:4-6"
    assert_indexes_match_graph(service, SCOPE)


def test_imports_across_repositories_resolve_into_the_other_one(two):
    service, *_ = two
    assert callees(service, SCOPE, "billing.api.handle") == {"sharedlib.text.slug", "sharedlib.text.clean"}
    assert "billing.api.handle" in callers(service, SCOPE, "sharedlib.text.slug")
    symbol = service.symbol(SCOPE, "sharedlib.text.slug")
    assert {c["name"] for c in symbol["callers"]} == {
        "billing.api.handle",
        "sharedlib.text",  # the package re-export is module-level code: `from ... import slug` is not a call
    } - {"sharedlib.text"} | {"tests.test_text.test_slug"}


def test_reindexing_one_repository_never_touches_the_other(two):
    service, lib, svc, *_ = two
    before = repo_ids(service, "billing")
    write_repo(
        lib, {"src/sharedlib/text.py": LIB["src/sharedlib/text.py"] + "\n\ndef extra():\n    return 1\n"}
    )
    report = service.index_repository(SCOPE, lib)
    assert report.files_changed == 1
    assert repo_ids(service, "billing") == before
    again = service.index_repository(SCOPE, svc)
    assert (again.entities_written, again.facts_written, again.entities_deleted) == (0, 0, 0)


def test_an_edit_that_recreates_a_callee_keeps_the_other_repositorys_edges(two):
    service, lib, *_ = two
    # slug stops calling clean: the entity is re-created without that edge; billing's edge into it stays
    write_repo(
        lib,
        {
            "src/sharedlib/text.py": (
                '"""Text helpers."""\n\n\ndef slug(s):\n    """A slug."""\n    return s.lower()\n\n\n'
                "def clean(s):\n    return s.strip()\n"
            )
        },
    )
    report = service.index_repository(SCOPE, lib)
    assert report.entities_recreated >= 1
    assert callees(service, SCOPE, "sharedlib.text.slug") == set()
    assert "billing.api.handle" in callers(service, SCOPE, "sharedlib.text.slug")
    assert_indexes_match_graph(service, SCOPE)


def test_deleting_a_file_or_removing_a_repository_leaves_nothing_of_it(two):
    service, lib, _svc, *_ = two
    write_repo(lib, {"src/sharedlib/text.py": None})
    service.index_repository(SCOPE, lib)
    assert not [i for i in repo_ids(service, "shared-lib") if "sharedlib/text.py" in i]
    assert callees(service, SCOPE, "billing.api.handle") == set()  # no edge into what is gone
    removed = service.remove_repository(SCOPE, "shared-lib")
    assert removed["entities_deleted"] > 0
    assert repo_ids(service, "shared-lib") == set()
    assert ids.repository_id("shared-lib") not in graph_hashes(service, SCOPE)
    assert not [i for i in lexical_ids(service, SCOPE, "sharedlib") if "shared-lib" in i]
    assert repo_ids(service, "billing") and [r["repo"] for r in service.repositories(SCOPE)] == ["billing"]
    assert_indexes_match_graph(service, SCOPE)
    with pytest.raises(NotFound):
        service.remove_repository(SCOPE, "shared-lib")
    with pytest.raises(InputError):
        service.remove_repository(SCOPE, "../etc")


def test_a_repository_indexed_before_its_library_resolves_after_a_reindex(service, tmp_path: Path):
    svc = write_repo(tmp_path / "svc", SVC)
    lib = write_repo(tmp_path / "lib", LIB)
    service.index_repository(SCOPE, svc)
    assert callees(service, SCOPE, "billing.api.handle") == set()  # the library is not indexed yet
    report = service.index_repository(SCOPE, lib)
    # billing's checkout is what the graph holds: its files that import the library re-resolve
    assert report.dependents == {"billing": 1}
    assert callees(service, SCOPE, "billing.api.handle") == {"sharedlib.text.slug", "sharedlib.text.clean"}
    noop = service.index_repository(SCOPE, svc, repo="billing")
    assert (noop.entities_written, noop.facts_written) == (0, 0)
    assert_indexes_match_graph(service, SCOPE)


def test_a_dependent_with_unindexed_edits_waits_for_its_own_reindex(service, tmp_path: Path):
    svc = write_repo(tmp_path / "svc", SVC)
    lib = write_repo(tmp_path / "lib", LIB)
    service.index_repository(SCOPE, svc)
    write_repo(svc, {"billing/api.py": SVC["billing/api.py"] + "\n\ndef more():\n    return 1\n"})
    assert service.index_repository(SCOPE, lib).dependents == {}
    assert callees(service, SCOPE, "billing.api.handle") == set()
    service.index_repository(SCOPE, svc)
    assert callees(service, SCOPE, "billing.api.handle") == {"sharedlib.text.slug", "sharedlib.text.clean"}


def test_a_library_edited_but_not_reindexed_is_not_linked(service, tmp_path: Path):
    lib = write_repo(tmp_path / "lib", LIB)
    svc = write_repo(tmp_path / "svc", SVC)
    service.index_repository(SCOPE, lib)
    write_repo(lib, {"src/sharedlib/text.py": "def other():\n    pass\n"})  # not re-indexed
    service.index_repository(SCOPE, svc)
    assert callees(service, SCOPE, "billing.api.handle") == set()  # never an edge to code the graph lacks


def test_a_changed_layout_renames_every_module(service, tmp_path: Path):
    root = write_repo(
        tmp_path / "app", {"src/app/__init__.py": "", "src/app/core.py": "def f():\n    pass\n"}
    )
    service.index_repository(SCOPE, root, repo="app", roots=["."])
    assert service.symbol(SCOPE, "src.app.core.f")["subject"]["name"] == "src.app.core.f"
    report = service.index_repository(SCOPE, root, repo="app")
    assert report.layout_changed and report.files_unchanged == 0
    assert service.symbol(SCOPE, "app.core.f")["subject"]["name"] == "app.core.f"
    with pytest.raises(NotFound):
        service.symbol(SCOPE, "src.app.core.f")
    assert_indexes_match_graph(service, SCOPE)
    noop = service.index_repository(SCOPE, root, repo="app")
    assert (noop.entities_written, noop.facts_written, noop.layout_changed) == (0, 0, False)


def test_a_directory_indexed_before_keeps_its_name_when_a_project_name_appears(service, tmp_path: Path):
    # a project name found later (declared since, or read by a newer graphctx: PyYAML's
    # setup(name=NAME)) once made the same directory a second repository, every name ambiguous
    root = write_repo(tmp_path / "pyyaml-6.0.2", {"yaml/__init__.py": "def load():\n    pass\n"})
    assert service.index_repository(SCOPE, root).repo == "pyyaml-6.0.2"
    write_repo(root, {"setup.cfg": "[metadata]\nname = PyYAML\n"})
    again = service.index_repository(SCOPE, root)
    assert again.repo == "pyyaml-6.0.2" and again.entities_written == 0
    assert [r["repo"] for r in service.repositories(SCOPE)] == ["pyyaml-6.0.2"]
    assert service.symbol(SCOPE, "yaml.load")["subject"]["name"] == "yaml.load"
    # named explicitly, it is another repository; a fresh directory gets the project name
    assert service.index_repository(SCOPE, root, repo="other").repo == "other"
    copy = write_repo(
        tmp_path / "checkout", {"setup.cfg": "[metadata]\nname = PyYAML\n", "yaml/__init__.py": ""}
    )
    assert service.index_repository(SCOPE, copy).repo == "PyYAML"


def test_the_single_repository_ids_of_an_older_index_are_replaced(service, tmp_path: Path):
    legacy = [
        {"id": "py:old.py", "name": "old", "type": "module", "path": "old.py", "qualified_name": "old"},
        {"id": "py:old.py::f", "name": "f", "type": "function", "path": "old.py", "qualified_name": "old.f"},
        {"id": "py:note", "name": "a memory that looks like code", "type": "note"},
    ]
    service.remember(SCOPE, legacy)
    report = service.index_repository(SCOPE, write_repo(tmp_path / "new", {"m.py": "def g():\n    pass\n"}))
    assert report.legacy_removed == 2
    held = graph_hashes(service, SCOPE)
    assert "py:old.py" not in held and "py:old.py::f" not in held and "py:note" in held
    assert_indexes_match_graph(service, SCOPE)


def test_bad_repository_names_and_roots_are_typed_errors(service, tmp_path: Path):
    root = write_repo(tmp_path / "r", {"a.py": ""})
    for bad in ("a/b", "a:b", "", "-x", "x" * 101):
        with pytest.raises(InputError):
            service.index_repository(SCOPE, root, repo=bad)
    for roots in (["/etc"], ["../up"], "src"):
        with pytest.raises(InputError):
            service.index_repository(SCOPE, root, roots=roots)  # type: ignore[arg-type]


def test_the_cli_lists_reindexes_by_name_and_removes(tmp_path: Path):
    runner = CliRunner()
    env = {"GRAPHCTX_EMBEDDER": "hashing"}
    base = ["--data-dir", str(tmp_path / "data"), "--tenant", "cli"]
    lib = write_repo(tmp_path / "lib", LIB)
    first = runner.invoke(app, [*base, "index", str(lib), "--json"], env=env)
    assert first.exit_code == 0, first.output
    assert json.loads(first.stdout)["repo"] == "shared-lib"
    listed = json.loads(runner.invoke(app, [*base, "index", "--list", "--json"], env=env).stdout)
    assert [(r["repo"], r["root"], r["layout"]) for r in listed["repositories"]] == [
        ("shared-lib", str(lib), "src(sharedlib)")
    ]
    again = runner.invoke(app, [*base, "index", "--repo", "shared-lib", "--json"], env=env)
    assert again.exit_code == 0 and json.loads(again.stdout)["files_unchanged"] == 3
    human = runner.invoke(app, [*base, "index", "--list"], env=env)
    assert "shared-lib" in human.stdout
    gone = runner.invoke(app, [*base, "index", "--remove", "shared-lib", "--json"], env=env)
    assert gone.exit_code == 0 and json.loads(gone.stdout)["entities_deleted"] > 0
    assert runner.invoke(app, [*base, "index", "--repo", "shared-lib"], env=env).exit_code == 3
    assert runner.invoke(app, [*base, "index"], env=env).exit_code == 64


def test_a_rename_in_one_repository_leaves_nothing_stale_in_either(two):
    service, lib, svc, *_ = two
    text = LIB["src/sharedlib/text.py"].replace("def clean(", "def tidy(").replace("clean(s)", "tidy(s)")
    write_repo(lib, {"src/sharedlib/text.py": text})
    report = service.index_repository(SCOPE, lib)
    assert report.dependents == {"billing": 1}  # billing imports the changed module: re-resolved
    held = graph_hashes(service, SCOPE)
    assert "py:shared-lib:src/sharedlib/text.py::clean" not in held
    assert "py:shared-lib:src/sharedlib/text.py::tidy" in held
    assert not [i for i in lexical_ids(service, SCOPE, "clean") if i.endswith("::clean")]
    # billing still calls `clean`, which the library no longer has: no edge, nothing guessed
    assert callees(service, SCOPE, "billing.api.handle") == {"sharedlib.text.slug"}
    assert callees(service, SCOPE, "sharedlib.text.slug") == {"sharedlib.text.tidy"}
    again = service.index_repository(SCOPE, svc)
    assert (again.entities_written, again.facts_written) == (0, 0)
    assert_indexes_match_graph(service, SCOPE)
