"""Import roots as Python would see a repository once installed, from every kind of declaration."""

from __future__ import annotations

import pytest

from graphctx.code.layout import Layout, Root, discover, is_test_path, project_name


def layout_of(files: dict[str, str], explicit: tuple[str, ...] = ()) -> Layout:
    data = {k: v.encode() for k, v in files.items()}
    found, _ = discover(sorted(data), data.get, explicit)
    return found


def names(files: dict[str, str], explicit: tuple[str, ...] = ()) -> dict[str, str]:
    layout = layout_of(files, explicit)
    return {rel: layout.module(rel).name for rel in files if rel.endswith(".py")}


PKG = {"src/pkg/__init__.py": "", "src/pkg/mod.py": "", "tests/test_mod.py": "", "docs/conf.py": ""}


@pytest.mark.parametrize(
    "config",
    [
        {"pyproject.toml": '[tool.setuptools.packages.find]\nwhere = ["src"]\n'},
        {"pyproject.toml": '[tool.setuptools]\npackage-dir = {"" = "src"}\n'},
        {"setup.cfg": (
            "[options]\npackage_dir =\n    =src\npackages = find:\n\n[options.packages.find]\nwhere = src\n"
        )},
        {"setup.py": (
            "from setuptools import setup, find_packages\n"
            "setup(package_dir={'': 'src'}, packages=find_packages('src'))\n"
        )},
        {"pyproject.toml": '[tool.poetry]\nname = "x"\npackages = [{include = "pkg", from = "src"}]\n'},
        {"pyproject.toml": '[tool.hatch.build.targets.wheel]\npackages = ["src/pkg"]\n'},
        {"pyproject.toml": '[tool.hatch.build.targets.wheel]\nsources = ["src"]\n'},
        {"pyproject.toml": '[tool.pdm.build]\npackage-dir = "src"\n'},
        {"pyproject.toml": '[project]\nname = "pkg"\n\n[tool.flit.module]\nname = "pkg"\n'},
        {"pyproject.toml": '[project]\nname = "pkg"\n'},  # setuptools auto-discovery: src layout
        {},  # no declaration at all: src/ holds the code
    ],
    ids=[
        "setuptools-find", "setuptools-package-dir", "setup.cfg", "setup.py", "poetry", "hatch-packages",
        "hatch-sources", "pdm", "flit", "auto-pyproject", "auto-nothing",
    ],
)  # fmt: skip
def test_a_src_layout_is_read_from_every_kind_of_declaration(config):
    got = names({**PKG, **config})
    assert got["src/pkg/mod.py"] == "pkg.mod"
    assert got["src/pkg/__init__.py"] == "pkg"
    assert got["tests/test_mod.py"] == "tests.test_mod"  # outside every root: its repository path
    assert got["docs/conf.py"] == "docs.conf"


def test_a_flat_package_keeps_its_path_names_and_only_it_is_rooted():
    layout = layout_of({"pkg/__init__.py": "", "pkg/a.py": "", "tests/test_a.py": "", "setup.py": ""})
    assert layout.module("pkg/a.py").name == "pkg.a" and layout.module("pkg/a.py").rooted
    assert layout.module("tests/test_a.py").name == "tests.test_a"
    assert not layout.module("tests/test_a.py").rooted
    assert layout.packages == {"pkg"}


def test_package_dir_mapping_renames_a_directory():
    files = {
        "setup.py": "from setuptools import setup\nsetup(packages=['mypkg'], package_dir={'mypkg': 'lib'})\n",
        "lib/__init__.py": "",
        "lib/core.py": "",
    }
    assert names(files) == {"setup.py": "setup", "lib/__init__.py": "mypkg", "lib/core.py": "mypkg.core"}


def test_a_monorepo_has_one_root_per_project_and_namespace_packages_span_them():
    files = {
        "pyproject.toml": '[project]\nname = "mono"\n[tool.uv.workspace]\nmembers = ["api", "sdk"]\n',
        "api/pyproject.toml": '[tool.hatch.build.targets.wheel]\npackages = ["src/acme"]\n',
        "api/src/acme/api/__init__.py": "",
        "api/tests/test_api.py": "",
        "sdk/setup.cfg": (
            "[options]\npackages = find_namespace:\npackage_dir =\n    =src\n\n[options.packages.find]\n"
            "where = src\n"
        ),
        "sdk/src/acme/sdk/trace.py": "",
        "libs/flat/pyproject.toml": '[project]\nname = "flatlib"\n',
        "libs/flat/flatlib/__init__.py": "",
        "libs/flat/setup.py": "",
    }
    got = names(files)
    assert got["api/src/acme/api/__init__.py"] == "acme.api"
    assert got["sdk/src/acme/sdk/trace.py"] == "acme.sdk.trace"
    assert got["libs/flat/flatlib/__init__.py"] == "flatlib"
    assert got["api/tests/test_api.py"] == "api.tests.test_api"
    assert got["libs/flat/setup.py"] == "libs.flat.setup"  # project tooling is not part of the package


def test_explicit_roots_and_tool_graphctx_replace_discovery():
    files = {**PKG, "lib/other.py": "", "pyproject.toml": '[tool.graphctx]\nroots = ["lib"]\n'}
    assert names(files)["lib/other.py"] == "other"
    assert names(files)["src/pkg/mod.py"] == "src.pkg.mod"
    assert names(PKG, explicit=("src",))["src/pkg/mod.py"] == "pkg.mod"
    assert names(PKG, explicit=("nowhere",))["src/pkg/mod.py"] == "src.pkg.mod"  # a missing root is ignored


def test_a_stale_declaration_falls_back_to_auto_discovery():
    files = {
        "pyproject.toml": '[tool.hatch.build.targets.wheel]\npackages = ["src/renamed"]\n',
        "src/actual/__init__.py": "",
    }
    assert names(files)["src/actual/__init__.py"] == "actual"


def test_a_vendored_project_inside_a_package_stays_part_of_it():
    files = {
        "src/pkg/__init__.py": "",
        "src/pkg/_vendor/dep/setup.py": "",
        "src/pkg/_vendor/dep/dep/__init__.py": "",
    }
    assert names(files)["src/pkg/_vendor/dep/dep/__init__.py"] == "pkg._vendor.dep.dep"


def test_broken_declarations_are_notes_not_crashes():
    files = {
        "pyproject.toml": "[[[ not toml",
        "setup.cfg": "no section header",
        "setup.py": "def (:",
        "a.py": "",
    }
    data = {k: v.encode() for k, v in files.items()}
    layout, notes = discover(sorted(data), data.get)
    assert layout.module("a.py").name == "a"
    assert any("pyproject.toml" in n for n in notes) and any("setup.cfg" in n for n in notes)


def test_unimportable_paths_are_named_by_their_path():
    layout = layout_of({"src/pkg/__init__.py": "", "src/pkg/my-script.py": ""})
    assert layout.module("src/pkg/my-script.py").name == "src.pkg.my-script"
    assert not layout.module("src/pkg/my-script.py").rooted


def test_an_unrooted_file_imports_its_siblings_first():
    layout = layout_of({"src/pkg/__init__.py": "", "tests/helpers.py": "", "tests/test_a.py": ""})
    test = layout.module("tests/test_a.py")
    assert test.basedir == "tests"
    assert layout.local(test, "helpers.make") == "tests.helpers.make"
    assert layout.local(test, "pkg.mod") == "pkg.mod"  # not beside it: the installed package
    inside = layout_of({"tests/__init__.py": "", "tests/unit/__init__.py": "", "tests/unit/test_b.py": ""})
    assert inside.module("tests/unit/test_b.py").basedir == ""  # a package: imported from the top


def test_the_fingerprint_reads_back_to_the_same_names():
    files = {
        **PKG,
        "setup.py": "from setuptools import setup\nsetup(packages=['mypkg'], package_dir={'mypkg': 'lib'})\n",
        "lib/x.py": "",
    }
    layout = layout_of(files)
    again = Layout.from_fingerprint(layout.fingerprint, [f for f in files if f.endswith(".py")])
    assert again is not None
    assert {r: again.module(r).name for r in files if r.endswith(".py")} == {
        r: layout.module(r).name for r in files if r.endswith(".py")
    }


def test_roots_sharing_a_directory_have_one_order_and_one_fingerprint():
    # hatch's `packages = ["src/attr", "src/attrs"]` (attrs): two roots in src/, each naming one
    # package; their order once came from a set's, so a re-index saw a changed layout and redid
    # every file about every other run
    first = Root("src", names=frozenset({"attr"}))
    second = Root("src", names=frozenset({"attrs"}))
    files = ["src/attr/__init__.py", "src/attrs/__init__.py"]
    one, other = Layout([first, second], files), Layout([second, first], files)
    assert one.roots == other.roots
    assert one.fingerprint == other.fingerprint == "src(attr); src(attrs)"
    config = '[tool.hatch.build.targets.wheel]\npackages = ["src/attr", "src/attrs"]\n'
    found = layout_of({"pyproject.toml": config, **{f: "" for f in files}})
    assert found.fingerprint == "src(attr); src(attrs)"


@pytest.mark.parametrize(
    "setup",
    [
        "from setuptools import setup, find_packages\n"
        "setup(name='pkg', packages=find_packages(exclude=['test']))\n",
        "from setuptools import setup, find_namespace_packages\n"
        "setup(packages=find_namespace_packages(include=['pkg*']))\n",
    ],
    ids=["find_packages", "find_namespace_packages"],
)
def test_find_packages_finds_packages_not_the_modules_beside_them(setup):
    # parso 0.8.4: setup.py and conftest.py at the top were named importable modules of the project
    layout = layout_of(
        {"setup.py": setup, "conftest.py": "", "pkg/__init__.py": "", "pkg/a.py": "", "test/test_a.py": ""}
    )
    assert [r.describe() for r in layout.roots] == [".(pkg)"]
    assert layout.module("pkg/a.py").rooted
    assert not layout.module("setup.py").rooted and not layout.module("conftest.py").rooted


def test_a_setup_py_names_read_through_module_constants():
    # PyYAML 6.0.2: NAME = 'PyYAML' ... setup(name=NAME, ...); the repository was named after its
    # directory (pyyaml-6.0.2), so a checkout of another version became another repository
    setup = (
        "from setuptools import setup\nNAME = 'PyYAML'\nPACKAGES = ['yaml']\nVERSION = x = '1'\n"
        "DIRS = {'': 'lib'}\nDIRS = {'': 'elsewhere'}\n"
        "setup(name=NAME, version=VERSION, package_dir=DIRS, packages=PACKAGES)\n"
    )
    assert project_name({"setup.py": setup.encode()}.get) == "PyYAML"
    layout = layout_of({"setup.py": setup, "yaml/__init__.py": "", "lib/yaml/__init__.py": ""})
    assert [r.describe() for r in layout.roots] == [".(yaml)"]  # DIRS is bound twice: not read


def test_project_name_and_test_paths():
    assert project_name({"pyproject.toml": b'[project]\nname = "click"\n'}.get) == "click"
    assert project_name({"setup.cfg": b"[metadata]\nname = requests\n"}.get) == "requests"
    assert project_name({}.get) == ""
    for path in ("tests/a.py", "pkg/tests/a.py", "test_a.py", "a_test.py", "x/conftest.py", "test/x.py"):
        assert is_test_path(path)
    for path in ("pkg/testing.py", "contest.py", "pkg/a.py"):
        assert not is_test_path(path)
