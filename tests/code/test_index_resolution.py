"""What the indexer resolves (and refuses to guess), through ContextService.index_repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphctx.scope import Scope
from tests.code.index_helpers import assert_indexes_match_graph, callees, callers, edges, write_repo

SCOPE = Scope("idx", "default")

REPO = {
    "app/__init__.py": '"""The app."""\nfrom .core import helper as exported\nfrom .models import Base\n',
    "app/core.py": '''"""Core helpers."""
import os.path as osp


def helper(x):
    """Help with x."""
    return osp.join(x, "y")


def other():
    return helper(1) + undefined_thing()


def shadowed(helper):
    return helper(2)


def builtins_only(items):
    return len(sorted(items))
''',
    "app/models.py": '''from . import core


class Base:
    """The base."""

    def run(self):
        return self.step()

    def step(self):
        return core.helper(2)

    @classmethod
    def make(cls):
        return cls.build()

    @classmethod
    def build(cls):
        return None
''',
    "app/deep/__init__.py": "",
    "app/deep/child.py": """from .. import exported, Base
from ..core import helper as h
import app.core as ac
from app import models


class Child(Base):
    def step(self):
        super().step()
        return exported(3)

    def go(self):
        return self.run(), ac.other(), Base.make(), h(1), models.Base()

    def mystery(self, thing):
        return thing.whatever()
""",
    "tests/test_core.py": "from app.core import helper\n\n\ndef test_helper():\n    assert helper('a')\n",
}


@pytest.fixture
def repo(service, tmp_path: Path):
    root = write_repo(tmp_path / "repo", REPO)
    report = service.index_repository(SCOPE, root)
    return service, report


def test_definitions_carry_qualified_names_lines_signatures_and_summaries(repo):
    service, report = repo
    assert report.files_seen == 6
    assert (report.modules, report.symbols) == (6, 14)
    card = service.explain(SCOPE, "app.core.helper")["subject"]
    assert card["qualified_name"] == "app.core.helper"
    assert card["location"] == {"path": "app/core.py", "lines": [5, 7]}
    assert card["signature"] == "def helper(x)"
    assert card["summary"] == "Help with x."
    # the file::qualname alias resolves too (ambiguity-safe identity)
    assert service.explain(SCOPE, "app/deep/child.py::Child.go")["subject"]["qualified_name"] == (
        "app.deep.child.Child.go"
    )


def test_calls_resolve_through_imports_reexports_aliases_and_classes(repo):
    service, _ = repo
    assert callees(service, SCOPE, "app.deep.child.Child.go") == {
        "app.models.Base.run",  # self.run() inherited from a base in another module
        "app.core.other",  # import app.core as ac
        "app.models.Base.make",  # Class.method()
        "app.core.helper",  # from ..core import helper as h
        "app.models.Base",  # models.Base() -> the class
    }
    assert callees(service, SCOPE, "app.deep.child.Child.step") == {
        "app.models.Base.step",  # super().step()
        "app.core.helper",  # re-exported through app/__init__ as `exported`, imported relatively
    }
    assert callees(service, SCOPE, "app.models.Base.run") == {"app.models.Base.step"}  # self
    assert callees(service, SCOPE, "app.models.Base.make") == {"app.models.Base.build"}  # cls
    assert callees(service, SCOPE, "app.models.Base.step") == {"app.core.helper"}  # from . import core


def test_call_edges_carry_call_site_lines(repo):
    service, _ = repo
    assert ("app.core.other", "app.core.helper", "11") in edges(service, SCOPE, "app.core.other")


def test_unknown_receivers_parameters_and_outside_modules_stay_unresolved(repo):
    service, report = repo
    # osp.join (os is outside the repo), undefined_thing(), helper(2) on a parameter, thing.whatever()
    assert report.unresolved_calls == 4
    assert callees(service, SCOPE, "app.core.shadowed") == set()
    assert callees(service, SCOPE, "app.deep.child.Child.mystery") == set()
    assert callees(service, SCOPE, "app.core.builtins_only") == set()
    assert report.builtin_calls == 3  # len, sorted, super: neither an edge nor unresolved
    assert report.calls == report.resolved_calls + report.unresolved_calls + report.builtin_calls


def test_inheritance_imports_and_tests(repo):
    service, _ = repo
    assert edges(service, SCOPE, "app.deep.child.Child", "inherits") == {
        ("app.deep.child.Child", "app.models.Base", None)
    }
    imported = {o for _, o, _ in edges(service, SCOPE, "app.deep.child", "imports")}
    assert imported == {"app", "app.core", "app.models"}
    tested = edges(service, SCOPE, "app.core.helper", "tested_by")
    assert {o for _, o, _ in tested} == {"tests.test_core.test_helper"}
    assert "tests.test_core.test_helper" in callers(service, SCOPE, "app.core.helper")


def test_every_entity_reaches_both_indexes(repo):
    service, _ = repo
    graph = assert_indexes_match_graph(service, SCOPE)
    assert "py:repo:app/deep/child.py::Child.go" in graph
    hits = service.recall(SCOPE, "app.core.helper")["items"]
    assert hits[0]["qualified_name"] == "app.core.helper"


def test_secrets_in_docstrings_and_signatures_are_never_stored(service, tmp_path: Path):
    secret = "sk-" + "a1B2c3D4e5F6g7H8i9J0k1L2m3"
    root = write_repo(
        tmp_path / "repo",
        {
            "cfg.py": (
                f'"""Config with api_key = {secret}"""\n\n\n'
                f'def connect(password="hunter2-very-secret"):\n    """Token: {secret} here."""\n'
            ),
            "NOTES.md": f"# Keys {secret}\n\nThe key is {secret}.\n",
        },
    )
    service.index_repository(SCOPE, root)
    module = service.explain(SCOPE, "cfg")["subject"]
    func = service.explain(SCOPE, "cfg.connect")["subject"]
    stored = f"{module} {func}"
    assert secret not in stored and "hunter2" not in stored
    assert "[REDACTED]" in module["summary"] and "[REDACTED]" in func["summary"]
    assert "[REDACTED]" in func["signature"]
    section = service.explain(SCOPE, "md:repo:NOTES.md#keys-redacted")["subject"]
    assert secret not in str(section) and section["name"] == "Keys [REDACTED]"
    # the secret's digits may match the repository's counts ("2 Python modules"); nothing else
    assert not {h.entity_id for h in service.stores.lexical.search(SCOPE, secret, 10)} - {"repo:repo"}


def test_a_file_that_does_not_parse_is_reported_and_kept_as_a_module(service, tmp_path: Path):
    root = write_repo(tmp_path / "repo", {"ok.py": "def f():\n    return 1\n", "bad.py": "def (:\n"})
    report = service.index_repository(SCOPE, root)
    assert report.parse_errors and report.parse_errors[0].startswith("bad.py")
    assert service.explain(SCOPE, "bad")["subject"]["type"] == "module"
    assert service.explain(SCOPE, "ok.f")["subject"]["type"] == "function"


def test_default_argument_aliases_classmethod_calls_star_imports_and_nested_scopes(service, tmp_path: Path):
    root = write_repo(
        tmp_path / "repo",
        {
            "base.py": (
                "__all__ = ['exported']\n\n\ndef exported():\n    pass\n\n\ndef _private():\n    pass\n"
            ),
            "m.py": """from base import *


def helper():
    pass


def fast(x, _helper=helper, key=helper):
    return _helper(x), key(x)


class Thing:
    @classmethod
    def create(cls):
        return cls()

    def clone(self):
        return self()

    def helper(self):
        return helper()  # the module function: a class body is not an enclosing scope

    def outer(self):
        def inner():
            return exported()

        return inner()
""",
        },
    )
    service.index_repository(SCOPE, root)
    assert callees(service, SCOPE, "m.fast") == {"m.helper"}  # `_helper=helper` aliases; `key` may be passed
    assert callees(service, SCOPE, "m.Thing.create") == {"m.Thing"}  # cls() in a classmethod
    assert callees(service, SCOPE, "m.Thing.clone") == set()  # self() calls an instance
    assert callees(service, SCOPE, "m.Thing.helper") == {"m.helper"}
    assert callees(service, SCOPE, "m.Thing.outer") == {"m.Thing.outer.inner"}
    assert callees(service, SCOPE, "m.Thing.outer.inner") == {"base.exported"}  # through `import *`


def test_every_name_of_a_chained_assignment_aliases_the_value(service, tmp_path: Path):
    # attrs: `s = attributes = attrs` and `ib = attr = attrib` in attr/__init__.py; the classic
    # `@attr.s(...)` / `attr.ib()` of its users resolved to nothing
    root = write_repo(
        tmp_path / "repo",
        {
            "attr/__init__.py": (
                "from ._make import attrib, attrs\n\ns = attributes = attrs\nib = attr = attrib\n"
                "x, y = z = attrs\n"
            ),
            "attr/_make.py": (
                "def attrs(maybe_cls=None):\n    return maybe_cls\n\n\ndef attrib():\n    return 0\n"
            ),
            "user.py": """import attr


@attr.s(slots=True)
class C:
    a = attr.ib()
    b = attr.attr()


def make():
    return attr.attributes(C), attr.z(C)
""",
        },
    )
    service.index_repository(SCOPE, root)
    assert callees(service, SCOPE, "user.C") == {"attr._make.attrs", "attr._make.attrib"}
    assert callees(service, SCOPE, "user.make") == {"attr._make.attrs"}
    assert callers(service, SCOPE, "attr._make.attrs") == {"user.C", "user.make"}


def test_signatures_of_a_file_in_another_encoding_or_with_a_bom_are_its_text(service, tmp_path: Path):
    # a latin-1 file (PEP 263, parso 0.8.4's test/normalizer_issue_files/latin-1.py): the names and
    # docstrings came from the parser, the signature from the raw bytes read as UTF-8 and cut at
    # the parser's UTF-8 column offsets (`def na\ufffdve(self, \ufffdt\ufffd="\ufffd"): retu`)
    root = tmp_path / "repo"
    root.mkdir()
    latin = "# -*- coding: latin-1 -*-\nclass Caf\xe9:\n"
    latin += '    def na\xefve(self, \xe9t\xe9="\xe0"): return \xe9t\xe9\n'
    (root / "lat.py").write_bytes(latin.encode("latin-1"))
    (root / "bom.py").write_bytes(b"\xef\xbb\xbfdef bom(x):\n    return x\n")
    service.index_repository(SCOPE, root)
    card = service.symbol(SCOPE, "lat.Caf\xe9.na\xefve")["subject"]
    assert card["signature"] == 'def na\xefve(self, \xe9t\xe9="\xe0")'  # cut at the body's column
    assert service.symbol(SCOPE, "lat.Caf\xe9")["subject"]["signature"] == "class Caf\xe9"
    assert service.symbol(SCOPE, "bom.bom")["subject"]["signature"] == "def bom(x)"
