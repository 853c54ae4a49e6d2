"""Re-indexing by file content hash: edits, renames, deletions and additions leave nothing stale in
the graph, the lexical index or the vector index; an unchanged tree is not written at all."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphctx.errors import BackendError, NotFound
from graphctx.scope import Scope
from tests.code.index_helpers import (
    assert_indexes_match_graph,
    callees,
    callers,
    edges,
    graph_hashes,
    graph_snapshot,
    lexical_ids,
    write_repo,
)

SCOPE = Scope("inc", "default")
LIB = '''"""Library."""


def alpha():
    """First."""
    return beta()


def beta():
    """Second."""
    return 2
'''
USER = """from lib import alpha, beta
import lib


def use():
    return alpha() + lib.gamma()


def other():
    return beta()
"""
TEST = "from lib import beta\n\n\ndef test_beta():\n    assert beta() == 2\n"
DOC = "# Guide\n\nCall `alpha` first.\n\n## More\n\nThen lib.beta.\n"


def fail_while_writing_edges(service, root, monkeypatch) -> None:
    """One index run that dies after its entity writes, when the graph refuses the edges."""
    graph = service.stores.graph
    real_run = graph.run

    def failing_run(template, scope, params):
        if template.name == "fact.upsert":
            raise BackendError("graph went away")
        return real_run(template, scope, params)

    with monkeypatch.context() as patch:
        patch.setattr(graph, "run", failing_run)
        with pytest.raises(BackendError):
            service.index_repository(SCOPE, root)


@pytest.fixture
def repo(service, tmp_path: Path):
    root = write_repo(
        tmp_path / "repo", {"lib.py": LIB, "user.py": USER, "test_lib.py": TEST, "GUIDE.md": DOC}
    )
    first = service.index_repository(SCOPE, root)
    assert first.files_new == 4
    return service, root


def test_an_unchanged_tree_is_not_written(repo):
    service, root = repo
    before = assert_indexes_match_graph(service, SCOPE)
    facts = service.status(SCOPE)["graph"]["facts"]
    report = service.index_repository(SCOPE, root)
    assert (report.files_unchanged, report.files_parsed) == (4, 0)
    assert (report.entities_written, report.entities_deleted, report.facts_written) == (0, 0, 0)
    assert graph_hashes(service, SCOPE) == before
    assert service.status(SCOPE)["graph"]["facts"] == facts


def test_an_edit_updates_lines_and_call_sites(repo):
    service, root = repo
    write_repo(root, {"lib.py": LIB.replace('"""Library."""\n', '"""Library."""\n\nimport os\n')})
    report = service.index_repository(SCOPE, root)
    assert (report.files_changed, report.files_unchanged) == (1, 3)
    card = service.explain(SCOPE, "lib.alpha")["subject"]
    assert card["location"]["lines"] == [6, 8]
    assert edges(service, SCOPE, "lib.alpha") == {("lib.alpha", "lib.beta", "8")}
    assert callers(service, SCOPE, "lib.alpha") == {"user.use"}  # the caller's edge survived
    assert_indexes_match_graph(service, SCOPE)


def test_a_rename_leaves_nothing_stale_and_callers_follow(repo):
    service, root = repo
    write_repo(
        root, {"lib.py": LIB.replace("def beta", "def beta2").replace("return beta()", "return beta2()")}
    )
    report = service.index_repository(SCOPE, root)
    assert report.files_reresolved == 3  # user.py, test_lib.py and the document depend on lib
    with pytest.raises(NotFound):
        service.explain(SCOPE, "lib.beta")
    assert callees(service, SCOPE, "lib.alpha") == {"lib.beta2"}
    assert callees(service, SCOPE, "user.other") == set()  # beta is gone: unresolved, not stale
    assert edges(service, SCOPE, "lib.beta2", "tested_by") == set()
    assert not edges(service, SCOPE, "md:repo:GUIDE.md#more", "mentions")  # lib.beta no longer exists
    graph = assert_indexes_match_graph(service, SCOPE)
    assert "py:repo:lib.py::beta" not in graph
    assert "py:repo:lib.py::beta" not in lexical_ids(service, SCOPE, "beta")


def test_a_new_definition_gives_unchanged_callers_their_edge(repo):
    service, root = repo
    assert callees(service, SCOPE, "user.use") == {"lib.alpha"}  # lib.gamma does not exist yet
    write_repo(root, {"lib.py": LIB + '\n\ndef gamma():\n    """Third."""\n    return 3\n'})
    service.index_repository(SCOPE, root)
    assert callees(service, SCOPE, "user.use") == {"lib.alpha", "lib.gamma"}
    assert_indexes_match_graph(service, SCOPE)


def test_a_removed_call_removes_its_edge_and_keeps_the_others(repo):
    service, root = repo
    write_repo(root, {"user.py": USER.replace("return alpha() + lib.gamma()", "return 1")})
    report = service.index_repository(SCOPE, root)
    assert report.entities_recreated == 1  # user.use lost an edge; both its ends still exist
    assert callees(service, SCOPE, "user.use") == set()
    assert callers(service, SCOPE, "lib.alpha") == set()
    assert callers(service, SCOPE, "lib.beta") == {"lib.alpha", "user.other", "test_lib.test_beta"}
    assert_indexes_match_graph(service, SCOPE)


def test_a_deleted_file_is_tombstoned_everywhere(repo):
    service, root = repo
    write_repo(root, {"lib.py": None})
    report = service.index_repository(SCOPE, root)
    assert report.files_deleted == 1
    for name in ("lib", "lib.alpha", "lib.beta"):
        with pytest.raises(NotFound):
            service.explain(SCOPE, name)
    assert callees(service, SCOPE, "user.use") == set()
    assert callees(service, SCOPE, "user.other") == set()
    graph = assert_indexes_match_graph(service, SCOPE)
    assert not [i for i in graph if i.startswith("py:repo:lib.py")]
    assert not [i for i in lexical_ids(service, SCOPE, "alpha") if i.startswith("py:repo:lib.py")]
    again = service.index_repository(SCOPE, root)
    assert (again.files_deleted, again.entities_written, again.facts_written) == (0, 0, 0)


def test_a_moved_file_keeps_its_callers(repo):
    service, root = repo
    write_repo(root, {"lib.py": None, "pkg/__init__.py": "", "pkg/lib.py": LIB})
    write_repo(
        root,
        {
            "user.py": USER.replace("from lib import", "from pkg.lib import").replace(
                "import lib\n", "from pkg import lib\n"
            )
        },
    )
    service.index_repository(SCOPE, root)
    assert callees(service, SCOPE, "user.other") == {"pkg.lib.beta"}
    assert callers(service, SCOPE, "pkg.lib.alpha") == {"user.use"}
    assert_indexes_match_graph(service, SCOPE)


def test_document_edits_resplit_sections(repo):
    service, root = repo
    write_repo(root, {"GUIDE.md": "# Guide\n\nNothing about code now.\n\n## New part\n\nSee `beta`.\n"})
    service.index_repository(SCOPE, root)
    with pytest.raises(NotFound):
        service.explain(SCOPE, "md:repo:GUIDE.md#more")
    assert edges(service, SCOPE, "md:repo:GUIDE.md#guide", "mentions") == set()
    assert {o for _, o, _ in edges(service, SCOPE, "md:repo:GUIDE.md#new-part", "mentions")} == {"lib.beta"}
    assert_indexes_match_graph(service, SCOPE)


def test_a_change_reaches_callers_through_bases_and_reexports_without_parsing_everything(service, tmp_path):
    root = write_repo(
        tmp_path / "repo",
        {
            "base.py": "class Base:\n    pass\n",
            "mid.py": "from base import Base\n\n\nclass Mid(Base):\n    pass\n",
            "top.py": (
                "from mid import Mid\n\n\nclass Top(Mid):\n    def go(self):\n        return self.helper()\n"
            ),
            "pkg/__init__.py": "from pkg.impl import *\n",
            "pkg/impl.py": "def tool():\n    return 1\n",
            "user.py": "import pkg\n\n\ndef use():\n    return pkg.tool(), pkg.extra()\n",
            "other.py": "def unrelated():\n    return 2\n",
        },
    )
    service.index_repository(SCOPE, root)
    assert callees(service, SCOPE, "top.Top.go") == set()
    assert callees(service, SCOPE, "user.use") == {"pkg.impl.tool"}
    write_repo(
        root,
        {
            "base.py": "class Base:\n    def helper(self):\n        return 0\n",
            "pkg/impl.py": "def tool():\n    return 1\n\n\ndef extra():\n    return 2\n",
        },
    )
    report = service.index_repository(SCOPE, root)
    assert callees(service, SCOPE, "top.Top.go") == {"base.Base.helper"}  # top.py never names base
    assert callees(service, SCOPE, "user.use") == {"pkg.impl.tool", "pkg.impl.extra"}  # via import *
    assert report.files_parsed < report.files_seen  # other.py cannot reach a change: not parsed
    assert_indexes_match_graph(service, SCOPE)


def test_a_run_that_fails_midway_is_completed_by_the_next_run(repo, monkeypatch):
    service, root = repo
    write_repo(
        root, {"lib.py": LIB.replace("return beta()", "return 1") + "\n\ndef delta():\n    return alpha()\n"}
    )
    fail_while_writing_edges(service, root, monkeypatch)
    report = service.index_repository(SCOPE, root)
    assert report.files_changed == 1  # the file's sha was not recorded by the failed run
    assert callees(service, SCOPE, "lib.alpha") == set()
    assert callees(service, SCOPE, "lib.delta") == {"lib.alpha"}
    assert callers(service, SCOPE, "lib.alpha") == {"user.use", "lib.delta"}
    assert_indexes_match_graph(service, SCOPE)


def test_callers_of_a_recreated_entity_survive_a_failed_run(service, tmp_path, monkeypatch):
    root = write_repo(
        tmp_path / "other",
        {
            "m2.py": "def run():\n    pass\n",
            "m.py": "from m2 import run\n",
            "g.py": "from m import run\n\n\ndef x():\n    return run()\n",
            "h.py": "from g import x\n\n\ndef y():\n    return x()\n",
        },
    )
    service.index_repository(SCOPE, root)
    assert callees(service, SCOPE, "g.x") == {"m2.run"}
    write_repo(root, {"m.py": "def run():\n    pass\n"})  # g.x now calls m.run; m2.run still exists
    fail_while_writing_edges(service, root, monkeypatch)
    service.index_repository(SCOPE, root)
    assert callees(service, SCOPE, "g.x") == {"m.run"}
    assert callers(service, SCOPE, "g.x") == {"h.y"}  # h.py never changed, yet its edge is back
    assert_indexes_match_graph(service, SCOPE)


INTERFACE_REPO = {
    "pkg/__init__.py": "from pkg.core import Engine, make\n",
    "pkg/core.py": (
        "from pkg.conn import Conn, Other\n\n\n"
        "class Engine:\n"
        "    def connect(self) -> Conn:\n        return Conn()\n\n"
        "    def helper(self):\n        return 1\n\n\n"
        "def make() -> Engine:\n    return Engine()\n\n\n"
        "DEFAULT = Engine()\n"
    ),
    "pkg/conn.py": (
        "class Conn:\n    def execute(self):\n        return 1\n\n\n"
        "class Other:\n    def execute(self):\n        return 2\n"
    ),
    "app.py": (
        "from pkg import make\nfrom pkg.core import DEFAULT\n\n\n"
        "def run():\n    return make().connect().execute()\n\n\n"
        "def run_default():\n    return DEFAULT.connect()\n"
    ),
    "conftest.py": "from app import run\n\n\ndef call_app():\n    return run()\n",
    "tests/test_app.py": "from conftest import call_app\n\n\ndef test_run():\n    assert call_app() == 1\n",
    "unrelated.py": "def alone():\n    return 0\n",
}


def _edited(path: str, old: str, new: str) -> dict[str, str | None]:
    assert old in INTERFACE_REPO[path]
    return {path: INTERFACE_REPO[path].replace(old, new)}


@pytest.mark.parametrize(
    ("edit", "outside"),
    [
        # bodies only: the edited module is re-resolved, no other module is
        (_edited("pkg/core.py", "return Engine()", "e = Engine()\n    return e"), 0),
        (_edited("pkg/core.py", "return Conn()", "self.helper()\n        return Conn()"), 0),
        # what other modules see: a declared return class, a module-level binding, a new name
        (_edited("pkg/core.py", "-> Conn:", "-> Other:"), None),
        (_edited("pkg/core.py", "DEFAULT = Engine()", "DEFAULT = Other()"), None),
        (
            _edited(
                "pkg/conn.py", "        return 2\n", "        return 2\n\n\ndef extra():\n    return 3\n"
            ),
            None,
        ),
        # a test-suite helper's body: the tests of other files follow its calls
        (
            _edited("conftest.py", "return run()", "from app import run_default\n    return run_default()"),
            None,
        ),
    ],
    ids=["body", "body-calls", "return-class", "module-binding", "new-name", "test-helper-body"],
)
def test_an_incremental_run_gives_the_graph_a_fresh_index_gives(service, tmp_path, edit, outside):
    """Whether an edit keeps the module's interface (a body changed: only the module itself is
    re-resolved) or changes it (everything that can see it is), the graph afterwards is exactly what a
    fresh index of the edited tree writes."""
    root = write_repo(tmp_path / "repo", INTERFACE_REPO)
    service.index_repository(SCOPE, root)
    write_repo(root, edit)
    report = service.index_repository(SCOPE, root)
    assert report.files_changed == 1
    if outside is not None:
        assert report.files_reresolved == outside
        assert report.files_parsed < report.files_seen
    fresh = Scope("inc-fresh", "default")
    service.index_repository(fresh, root)
    assert graph_snapshot(service, SCOPE) == graph_snapshot(service, fresh)
    assert_indexes_match_graph(service, SCOPE)
