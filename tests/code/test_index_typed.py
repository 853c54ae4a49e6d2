"""Resolution that follows what a name holds (annotations, instantiations, declared return types,
aliases of bound methods), never guesses, and decorated definitions whose range covers the
decorators; a `src/` layout named by import names, with its tests and examples linked in."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphctx.scope import Scope
from tests.code.index_helpers import callees, callers, write_repo

SCOPE = Scope("typed", "default")

MODELS = '''"""Models."""
from __future__ import annotations

import functools
from typing import Optional, Self


class Store:
    def save(self, item):
        return item

    def load(self) -> "Item":
        return Item()

    def clone(self) -> Self:
        return self

    @classmethod
    def create(cls) -> Self:
        return cls()


class Item:
    def render(self):
        return ""


class Special(Store):
    def save(self, item):
        return None


def make_store() -> Store:
    return Store()


def traced(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return func(*args, **kwargs)

    return wrapper


@traced
@functools.lru_cache(maxsize=None)
def cached_total(n):
    """Total of n, cached."""
    return n
'''

USES = """from app.models import Item, Special, Store, cached_total, make_store


def annotated(store: Store, maybe: Optional[Store], text: "Store | None"):
    store.save(1)
    maybe.save(2)
    text.save(3)


def assigned():
    s = Store()
    s.save(1)
    made = make_store()
    made.load().render()
    Store().save(2)
    Store.create().save(3)
    s.clone().save(4)
    Special().clone().save(5)


def bound_alias(store: Store):
    save = store.save
    save(1)


def rebound(flag):
    s = Store()
    if flag:
        s = Item()
    s.save(1)  # two bindings: unknown, not guessed


def unknown(thing):
    thing.save(1)
    x = thing.build()
    x.save(2)


def decorated_call():
    return cached_total(3)


from typing import Optional  # noqa: E402
"""


@pytest.fixture
def typed(service, tmp_path: Path):
    root = write_repo(
        tmp_path / "repo", {"app/__init__.py": "", "app/models.py": MODELS, "app/uses.py": USES}
    )
    service.index_repository(SCOPE, root)
    return service, root


def test_annotations_make_instances_of_the_class(typed):
    service, _ = typed
    assert callees(service, SCOPE, "app.uses.annotated") == {"app.models.Store.save"}


def test_instantiations_declared_returns_and_self(typed):
    service, _ = typed
    assert callees(service, SCOPE, "app.uses.assigned") == {
        "app.models.Store",  # Store() itself
        "app.models.Store.save",  # s.save, Store().save, Store.create().save, s.clone().save
        "app.models.make_store",
        "app.models.Store.load",
        "app.models.Item.render",  # made.load() -> "Item"
        "app.models.Store.create",
        "app.models.Store.clone",
        "app.models.Special",
        "app.models.Special.save",  # Special().clone() -> Self is a Special: its own save
    }


def test_an_alias_of_a_bound_method_is_the_method(typed):
    service, _ = typed
    assert callees(service, SCOPE, "app.uses.bound_alias") == {"app.models.Store.save"}


def test_a_name_bound_twice_or_of_unknown_value_is_not_guessed(typed):
    service, _ = typed
    assert callees(service, SCOPE, "app.uses.rebound") == {"app.models.Store", "app.models.Item"}
    assert callees(service, SCOPE, "app.uses.unknown") == set()


def test_a_decorated_definition_spans_its_decorators_and_keeps_its_def_line(typed):
    service, root = typed
    card = service.symbol(SCOPE, "app.models.cached_total")["subject"]
    lines = MODELS.splitlines()
    first = lines.index("@traced") + 1
    assert card["at"] == f"app/models.py:{first}-{first + 4}"
    assert card["def_line"] == first + 2
    assert card["signature"] == "@traced @functools.lru_cache def cached_total(n)"
    # a call to a wraps-style decorated function is a call of the function
    assert callers(service, SCOPE, "app.models.cached_total") == {"app.uses.decorated_call"}
    diff = (
        "--- a/app/models.py\n+++ b/app/models.py\n"
        f"@@ -{first + 1} +{first + 1} @@\n-@functools.lru_cache(maxsize=None)\n"
        f"+@functools.lru_cache(maxsize=8)\n"
    )
    impact = service.impact(SCOPE, diff=diff)
    assert [a["name"] for a in impact["affected"]] == ["app.models.cached_total"]
    assert [c["name"] for c in impact["callers"]] == ["app.uses.decorated_call"]
    # a decorator edit re-indexes the function, its def line follows
    write_repo(root, {"app/models.py": MODELS.replace("@traced\n", "@traced\n@traced\n")})
    service.index_repository(SCOPE, root)
    moved = service.symbol(SCOPE, "app.models.cached_total")["subject"]
    assert (moved["at"], moved["def_line"]) == (f"app/models.py:{first}-{first + 5}", first + 3)


SRC = {
    "pyproject.toml": '[project]\nname = "toolkit"\n\n[tool.setuptools.packages.find]\nwhere = ["src"]\n',
    "src/toolkit/__init__.py": '"""Toolkit."""\nfrom toolkit.utils import echo\n',
    "src/toolkit/utils.py": (
        'def echo(message):\n    """Print a message and a newline\n    to the terminal."""\n'
        "    return message\n"
    ),
    "src/toolkit/cli.py": "from . import utils\n\n\ndef main():\n    utils.echo('hi')\n",
    "tests/conftest.py": (
        "import pytest\n\nfrom toolkit import echo\n\n\n@pytest.fixture\ndef said():\n    return echo('x')\n"
    ),
    "tests/helpers.py": "import toolkit\n\n\ndef shout(m):\n    return toolkit.echo(m.upper())\n",
    "tests/test_utils.py": (
        "from helpers import shout\n\nfrom toolkit.utils import echo\n\n\ndef test_echo():\n"
        "    assert echo('a')\n\n\ndef test_shout():\n    assert shout('a')\n\n\ndef test_fixture(said):\n"
        "    assert said\n"
    ),
    "examples/demo/demo.py": "import toolkit\n\n\ndef run():\n    toolkit.echo('demo')\n",
    "docs/usage.md": "# Usage\n\nCall `toolkit.utils.echo` to print.\n",
}


def test_a_src_layout_is_named_by_import_names_and_its_tests_and_examples_link_in(service, tmp_path: Path):
    report = service.index_repository(SCOPE, write_repo(tmp_path / "toolkit", SRC))
    assert report.roots == ["src(toolkit)"]
    env = service.symbol(SCOPE, "toolkit.utils.echo")
    assert env["subject"]["at"] == "src/toolkit/utils.py:1-4"
    assert env["subject"]["summary"] == "Print a message and a newline to the terminal."  # a whole sentence
    by_name = {c["name"]: c for c in env["callers"]}
    assert set(by_name) == {
        "toolkit.cli.main",
        "tests.conftest.said",
        "tests.helpers.shout",
        "tests.test_utils.test_echo",
        "examples.demo.demo.run",
    }
    assert by_name["tests.test_utils.test_echo"]["test"] is True
    assert "test" not in by_name["tests.helpers.shout"]  # a helper, not a test
    # tests that reach it through a helper or a fixture are tests of it, listed once
    assert {t["name"] for t in env["tests"]} == {
        "tests.test_utils.test_shout",
        "tests.test_utils.test_fixture",
    }
    assert env["counts"] == {"callers": 5, "callees": 0, "tests": 2}
    section = service.neighbourhood(SCOPE, "md:toolkit:docs/usage.md#usage", edge_types=["mentions"])
    assert [n["qualified_name"] for n in section["nodes"]] == ["toolkit.utils.echo"]


def test_a_module_name_a_star_import_may_bind_is_not_followed(service, tmp_path: Path):
    files = {
        "compat.py": (
            "from _speedups import *  # a C module the index cannot read\n\n\n"
            "def _slow(x):\n    return x\n\n\n"
            "if 'fast' not in globals():\n    fast = _slow\n"
        ),
        "plain.py": "def _slow(x):\n    return x\n\n\nfast = _slow\n",
        "user.py": "import compat\nimport plain\n\n\ndef go():\n    return compat.fast(1), plain.fast(2)\n",
    }
    service.index_repository(SCOPE, write_repo(tmp_path / "repo", files))
    assert callees(service, SCOPE, "user.go") == {"plain._slow"}  # compat.fast may be _speedups'
