"""A package's public names: `symbol pkg.get` finds `pkg.api.get` when `pkg/__init__.py` does
`from .api import get`, as a user of the package writes it (`requests.get`, `flask.Flask`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphctx.code.repos import list_repositories, repository_entity
from graphctx.errors import AmbiguousName, NotFound
from graphctx.kernel.templates import ENTITY_UPSERT, EntityUpsertParams
from graphctx.scope import Scope
from tests.code.index_helpers import write_repo

REPO = Scope("dev", "default")
FILES: dict[str, str | None] = {
    "src/pkg/__init__.py": (
        '"""The package."""\n'
        "from .api import get, Client\n"
        "from .api import post as send\n"  # renamed: not followed
        "from .api import _private\n"
        "from .sub import deep\n"
        "from . import util\n"
        "from .stars import *\n"
    ),
    "src/pkg/stars.py": (
        '__all__ = ["starred"]\n\n\ndef starred():\n    return 3\n\n\ndef unlisted():\n    return 4\n'
    ),
    "src/pkg/api.py": (
        "def get(url):\n    return Client().fetch(url)\n\n\n"
        "def post(url):\n    return url\n\n\n"
        "def _private():\n    return 0\n\n\n"
        "class Client:\n    def fetch(self, url):\n        return url\n"
    ),
    "src/pkg/sub/__init__.py": '__all__ = ["deep"]\nfrom .impl import deep, hidden\n',
    "src/pkg/sub/impl.py": "def deep():\n    return 1\n\n\ndef hidden():\n    return 2\n",
    "src/pkg/util.py": "def slug(x):\n    return x.lower()\n",
    "src/other/__init__.py": "from pkg.api import get\n",
    "tests/test_get.py": "import pkg\n\n\ndef test_get():\n    assert pkg.get('a') == 'a'\n",
    "pyproject.toml": '[project]\nname = "pkg"\nversion = "0"\n',
}


@pytest.fixture
def indexed(service, tmp_path: Path):
    root = write_repo(tmp_path / "repo", FILES)
    service.index_repository(REPO, root)
    return service


def subject(service, name: str) -> str:
    return service.symbol(REPO, name)["subject"]["name"]


def test_a_name_a_package_exports_is_its_definition(indexed):
    assert subject(indexed, "pkg.get") == "pkg.api.get"
    assert subject(indexed, "pkg.Client") == "pkg.api.Client"
    assert subject(indexed, "pkg.Client.fetch") == "pkg.api.Client.fetch"  # a member of the export
    assert subject(indexed, "other.get") == "pkg.api.get"  # another package, the same definition
    assert {c["name"] for c in indexed.callers(REPO, "pkg.get")["callers"]} == {"tests.test_get.test_get"}


def test_a_name_exported_through_two_packages_is_followed(indexed):
    assert subject(indexed, "pkg.sub.deep") == "pkg.sub.impl.deep"
    assert subject(indexed, "pkg.deep") == "pkg.sub.impl.deep"


def test_a_name_a_star_import_binds_is_exported_as_the_source_lists_it(indexed):
    assert subject(indexed, "pkg.starred") == "pkg.stars.starred"
    with pytest.raises(NotFound):
        indexed.symbol(REPO, "pkg.unlisted")  # not in the source's __all__: the star does not bind it


@pytest.mark.parametrize(
    "name",
    [
        "pkg.send",  # bound under another name
        "pkg._private",  # private
        "pkg.sub.hidden",  # imported, but not in the package's literal __all__
        "pkg.util.nope",
        "pkg.nope",
    ],
)
def test_what_a_package_does_not_export_is_not_found(indexed, name: str):
    with pytest.raises(NotFound):
        indexed.symbol(REPO, name)


def test_an_export_goes_with_the_import_and_comes_back_with_it(indexed, tmp_path: Path):
    root = tmp_path / "repo"
    init = FILES["src/pkg/__init__.py"] or ""
    write_repo(root, {"src/pkg/__init__.py": init.replace("get, Client", "Client")})
    indexed.index_repository(REPO, root)
    with pytest.raises(NotFound):
        indexed.symbol(REPO, "pkg.get")
    write_repo(root, {"src/pkg/__init__.py": init})
    indexed.index_repository(REPO, root)
    assert subject(indexed, "pkg.get") == "pkg.api.get"
    # the definition renamed in its own file: the package's unchanged __init__ is re-resolved
    write_repo(root, {"src/pkg/api.py": (FILES["src/pkg/api.py"] or "").replace("def get(", "def fetch(")})
    indexed.index_repository(REPO, root)
    with pytest.raises(NotFound):
        indexed.symbol(REPO, "pkg.get")


def test_two_packages_of_one_name_exporting_one_name_are_ambiguous(service, tmp_path: Path):
    files: dict[str, str | None] = {
        "a/src/pkg/__init__.py": "from .api import get\n",
        "a/src/pkg/api.py": "def get():\n    return 1\n",
        "a/pyproject.toml": '[project]\nname = "a"\nversion = "0"\n',
        "b/src/pkg/__init__.py": "from .impl import get\n",
        "b/src/pkg/impl.py": "def get():\n    return 2\n",
        "b/pyproject.toml": '[project]\nname = "b"\nversion = "0"\n',
    }
    root = write_repo(tmp_path / "mono", files)
    service.index_repository(REPO, root / "a")
    service.index_repository(REPO, root / "b")
    with pytest.raises(AmbiguousName) as raised:
        service.symbol(REPO, "pkg.get")
    assert {c["path"] for c in raised.value.candidates} == {"src/pkg/api.py", "src/pkg/impl.py"}


def test_another_tenant_does_not_resolve_through_these_exports(indexed):
    with pytest.raises(NotFound):
        indexed.symbol(Scope("other-tenant", "default"), "pkg.get")


def test_an_import_from_a_submodule_is_not_shadowed_by_a_name_its_package_binds(service, tmp_path: Path):
    files: dict[str, str | None] = {  # pyparsing's shape: the package binds `unicode` to a class
        "lib/__init__.py": "from .unicode import unicode_set, full_unicode as unicode\n",
        "lib/unicode.py": "class unicode_set:\n    pass\n\n\nclass full_unicode:\n    pass\n",
        "lib/user.py": "from lib.unicode import unicode_set\n\n\ndef make():\n    return unicode_set()\n",
    }
    service.index_repository(REPO, write_repo(tmp_path / "shadow", files))
    assert {c["name"] for c in service.callees(REPO, "lib.user.make")["callees"]} == {
        "lib.unicode.unicode_set"
    }
    assert subject(service, "lib.unicode_set") == "lib.unicode.unicode_set"


def test_an_index_made_with_older_resolution_rules_is_redone_once(indexed, tmp_path: Path):
    [repo] = list_repositories(indexed.stores.graph, REPO)
    old = repository_entity(repo.name, repo.root, repo.layout, repo.packages, repo.summary, repo.imports)
    old = old.model_copy(update={"search_text": old.search_text.rsplit("\n", 1)[0]})  # no rules recorded
    indexed.stores.graph.run(ENTITY_UPSERT, REPO, EntityUpsertParams(entities=(old,)))

    redone = indexed.index_repository(REPO, tmp_path / "repo")
    assert redone.layout_changed and redone.files_unchanged == 0 and redone.files_changed == redone.files_seen
    again = indexed.index_repository(REPO, tmp_path / "repo")
    assert not again.layout_changed and again.files_unchanged == again.files_seen
    assert subject(indexed, "pkg.get") == "pkg.api.get"


SHIMS: dict[str, str | None] = {  # attrs 24.2.0's shape: `attrs/validators.py` re-exports attr.validators
    "src/old/__init__.py": "",
    "src/old/validators.py": (
        '__all__ = ["instance_of"]\n\n\ndef instance_of(t):\n    return t\n\n\n'
        "def unlisted():\n    return 0\n"
    ),
    "src/old/empty.py": "__all__ = []\n\n\ndef hidden():\n    return 0\n",
    "src/new/__init__.py": "",
    "src/new/validators.py": "from old.validators import *  # noqa: F403\n",
    "src/new/compat.py": 'from old.validators import instance_of, unlisted\n\n__all__ = ["instance_of"]\n',
    "src/new/plain.py": (
        "from old.validators import instance_of\n\n\ndef check(x):\n    return instance_of(x)\n"
    ),
    "src/new/nothing.py": "from old.empty import *  # noqa: F403\n",
    "pyproject.toml": '[tool.hatch.build.targets.wheel]\npackages = ["src/old", "src/new"]\n',
}


def test_a_module_re_exports_what_its_star_imports_and_its_all_bind(service, tmp_path: Path):
    root = write_repo(tmp_path / "shims", SHIMS)
    service.index_repository(REPO, root)
    assert subject(service, "new.validators.instance_of") == "old.validators.instance_of"
    assert subject(service, "new.compat.instance_of") == "old.validators.instance_of"
    for name in (
        "new.validators.unlisted",
        "new.compat.unlisted",
        "new.plain.instance_of",
        "new.nothing.hidden",
    ):
        with pytest.raises(NotFound):
            service.symbol(REPO, name)  # not in __all__; imported for its own use; `__all__ = []`
    # the source stops listing it: the unchanged shim is re-resolved and no longer exports it
    write_repo(
        root, {"src/old/validators.py": (SHIMS["src/old/validators.py"] or "").replace('"instance_of"', "")}
    )
    service.index_repository(REPO, root)
    with pytest.raises(NotFound):
        service.symbol(REPO, "new.validators.instance_of")


def test_search_for_a_public_name_finds_its_definition_first(indexed):
    # attrs 24.2.0: `search "attrs.define"` ranked a test class first and `attrs.validators.instance_of`
    # never reached instance_of, though `symbol` resolves both; the exact stage matches stored names only
    def first(query: str) -> tuple[str, str | None]:
        item = indexed.search(REPO, query)["items"][0]
        return item["qualified_name"], item["match"].get("exact")

    assert first("pkg.get") == ("pkg.api.get", "resolved_name")
    assert first("`pkg.Client.fetch`") == ("pkg.api.Client.fetch", "resolved_name")
    assert first("Client.fetch") == ("pkg.api.Client.fetch", "resolved_name")  # a unique dotted tail
    assert first("pkg.api.get") == ("pkg.api.get", "qualified_name")  # stored: matched as before
    assert all(
        i["match"].get("exact") != "resolved_name" for i in indexed.search(REPO, "pkg.get a url")["items"]
    )
    assert indexed.search(Scope("other-tenant", "default"), "pkg.get")["items"] == []
