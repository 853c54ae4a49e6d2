"""End to end: index a tiny repository with the real indexer, then ask the code operations about it."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphctx.envelope import size_bytes
from graphctx.errors import AmbiguousName
from graphctx.scope import Scope

REPO = Scope("dev", "default")
FILES = {
    "pkg/__init__.py": '"""The package."""\nfrom pkg.core import compute\n',
    "pkg/core.py": '''"""Core maths."""


def helper(x):
    """Double a number."""
    return x * 2


def compute(values):
    """Sum doubled values."""
    total = 0
    for v in values:
        total += helper(v)
    return total + helper(0)


class Engine:
    """Runs computations."""

    def run(self, values):
        """Run one computation."""
        return compute(values)
''',
    "pkg/util.py": (
        '"""Utilities."""\n\n\ndef helper():\n    """Another helper with the same name."""\n    return 1\n'
    ),
    "tests/test_core.py": (
        "from pkg.core import compute\n\n\ndef test_compute():\n    assert compute([1]) == 2\n"
    ),
    "README.md": "# Demo\n\nSee `compute`.\n",
}
DIFF = """diff --git a/pkg/core.py b/pkg/core.py
--- a/pkg/core.py
+++ b/pkg/core.py
@@ -4,3 +4,3 @@
 def helper(x):
     \"\"\"Double a number.\"\"\"
-    return x * 2
+    return x + x
diff --git a/setup.cfg b/setup.cfg
--- a/setup.cfg
+++ b/setup.cfg
@@ -1 +1 @@
-a
+b
"""


@pytest.fixture
def indexed(service, tmp_path: Path):
    root = tmp_path / "repo"
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    report = service.index_repository(REPO, root)
    assert report.unresolved_calls == 0
    return service


def by_name(entries):
    return {e["name"]: e for e in entries}


def test_callers_and_callees_carry_file_and_line(indexed):
    callers = by_name(indexed.callers(REPO, "pkg.core.compute")["callers"])
    assert callers["pkg.core.Engine.run"] == {
        "name": "pkg.core.Engine.run",
        "at": "pkg/core.py:20-22",
        "lines": [22],
    }
    assert callers["tests.test_core.test_compute"]["lines"] == [5]
    assert callers["tests.test_core.test_compute"]["test"] is True
    callees = by_name(indexed.callees(REPO, "pkg.core.compute")["callees"])
    assert callees["pkg.core.helper"] == {
        "name": "pkg.core.helper",
        "at": "pkg/core.py:4-6",
        "lines": [13, 14],
    }
    deep = by_name(indexed.callers(REPO, "pkg/core.py::helper", depth=2)["callers"])
    assert (deep["pkg.core.Engine.run"]["depth"], deep["pkg.core.Engine.run"]["via"]) == (
        2,
        ["pkg.core.compute"],
    )


def test_the_symbol_card_lists_a_calling_test_once_among_the_callers(indexed):
    env = indexed.symbol(REPO, "pkg.core.compute")
    assert env["subject"]["signature"] == "def compute(values)"
    assert env["subject"]["at"] == "pkg/core.py:9-14"
    assert env["subject"]["summary"] == "Sum doubled values."
    callers = by_name(env["callers"])
    assert callers["tests.test_core.test_compute"] == {
        "name": "tests.test_core.test_compute", "at": "tests/test_core.py:4-5", "test": True, "lines": [5]
    }  # fmt: skip
    assert env["tests"] == [] and env["counts"]["tests"] == 0


def test_same_named_functions_in_two_files_need_a_file_identity(indexed):
    with pytest.raises(AmbiguousName) as raised:
        indexed.symbol(REPO, "helper")
    cands = {c["path"]: c["identity"] for c in raised.value.candidates}
    assert cands == {"pkg/core.py": "pkg.core.helper", "pkg/util.py": "pkg.util.helper"}
    assert (
        indexed.symbol(REPO, "pkg/util.py::helper")["subject"]["summary"]
        == "Another helper with the same name."
    )


def test_impact_of_a_diff(indexed):
    env = indexed.impact(REPO, diff=DIFF)
    assert [a["name"] for a in env["affected"]] == ["pkg.core.helper"]
    assert env["unknown"] == [{"path": "setup.cfg"}]
    assert by_name(env["callers"])["pkg.core.compute"]["lines"] == [13, 14]
    assert [(t["name"], t["run"]) for t in env["tests"]] == [
        ("tests.test_core.test_compute", "tests/test_core.py::test_compute")
    ]


def test_a_tiny_budget_names_what_it_cut(indexed):
    env = indexed.symbol(REPO, "pkg.core.compute", max_tokens=256)
    assert size_bytes(env) <= 256 * 4
    assert env["truncated"] is bool(env["omissions"])
    shown = sum(len(env[k]) for k in ("callers", "callees", "tests"))
    cut = sum(o.get("count", 0) for o in env["omissions"] if o["reason"] == "budget")
    assert shown + cut == 3  # two callers (one a test), one callee: each either shown or counted


def test_a_deleted_file_leaves_nothing_behind(indexed, tmp_path: Path):
    (tmp_path / "repo" / "pkg" / "util.py").unlink()
    indexed.index_repository(REPO, tmp_path / "repo")
    assert indexed.symbol(REPO, "helper")["subject"]["name"] == "pkg.core.helper"  # no longer ambiguous
    assert indexed.impact(REPO, ["pkg/util.py"])["unknown"] == [{"path": "pkg/util.py"}]
    assert all(i["location"]["path"] != "pkg/util.py" for i in indexed.search(REPO, "helper")["items"])
