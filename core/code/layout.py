"""Where a repository's Python import names come from: its import roots.

A module's qualified name is the name Python imports it by once the repository's packages are
installed: `src/click/utils.py` is `click.utils`, not `src.click.utils`. The roots are read from the
packaging declarations of every project in the repository (pyproject.toml: setuptools, Poetry, Hatch,
PDM, Flit, maturin, scikit-build; setup.cfg; literal arguments of setup.py), fall back to
setuptools-style auto-discovery (a `src/` directory, else the packages at the project's top), and can
be given explicitly (`--root`, `[tool.graphctx] roots`). A monorepo has one root per project;
namespace packages (directories without `__init__.py`) span roots.

Files under no root (tests, examples, docs, scripts) are named by their repository-relative path
(`tests/test_utils.py` is `tests.test_utils`), which is unique; their absolute imports are also looked
up beside them, in the directory Python (or pytest) puts first on `sys.path` for them — the first
ancestor that is not a package — so `from helpers import x` in a test resolves to `tests/helpers.py`.
Nothing here reads a store; it is the Python front end's view of a file tree."""

from __future__ import annotations

import ast
import configparser
import fnmatch
import re
import tomllib
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

CONFIG_NAMES = frozenset({"pyproject.toml", "setup.cfg", "setup.py"})
TEST_DIRS = frozenset({"test", "tests"})
# setuptools' flat-layout auto-discovery leaves these top-level names out (FlatLayoutPackageFinder)
_FLAT_EXCLUDED = frozenset(
    {
        "bin", "benchmark", "benchmarks", "build", "changelog", "ci", "conftest", "debian", "dist",
        "doc", "docs", "documentation", "dodo", "env", "example", "examples", "exercise", "exercises",
        "fabfile", "htmlcov", "manage", "manpages", "news", "newsfragments", "noxfile", "pavement",
        "python", "requirements", "scripts", "setup", "site_scons", "tasks", "test", "tests", "tools",
        "toxfile", "unit_test", "unit_tests", "util", "utils", "venv",
    }
)  # fmt: skip
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

Reader = Callable[[str], bytes | None]


@dataclass(frozen=True, slots=True)
class Root:
    """A directory whose contents are importable: `{directory}/a/b.py` is module `{prefix}.a.b`."""

    directory: str  # repository-relative, "" = the repository root
    prefix: str = ""  # the package the directory itself is (setuptools package-dir {"pkg": "lib"})
    names: frozenset[str] | None = None  # the top-level packages / modules it provides; None = all
    origin: str = ""  # where the root was declared, for `graphctx index --list`

    def describe(self) -> str:
        """`dir`, `dir=prefix`, `dir(name,name)`: read back by Layout.from_fingerprint."""
        text = self.directory or "."
        if self.prefix:
            text += f"={self.prefix}"
        if self.names is not None:
            text += "(" + ",".join(sorted(self.names)) + ")"
        return text


_DESCRIBED = re.compile(r"^(?P<dir>[^=()]+?)(?:=(?P<prefix>[\w.]+))?(?:\((?P<names>[\w,]*)\))?$")


@dataclass(frozen=True, slots=True)
class ModuleName:
    name: str  # dotted import name
    is_package: bool  # the file is a package's __init__.py
    rooted: bool  # under an import root (importable once installed)
    basedir: str  # unrooted files: the directory put first on sys.path for them ("" = repository root)


def dotted_path(relpath: str) -> tuple[str, bool]:
    """The repository-relative dotted name of a .py file and whether it is a package `__init__`."""
    parts = relpath[: -len(".py")].split("/")
    is_package = parts[-1] == "__init__"
    if is_package:
        parts = parts[:-1]
    return ".".join(parts), is_package


def is_test_path(relpath: str) -> bool:
    """Test code: files in a `test`/`tests` directory, `test_*.py`, `*_test.py` and `conftest.py`."""
    parts = relpath.split("/")
    name = parts[-1]
    return (
        name.startswith("test_")
        or name.endswith("_test.py")
        or name == "conftest.py"
        or any(p in TEST_DIRS for p in parts[:-1])
    )


class Layout:
    """Module names of a file tree under its import roots (deepest root first)."""

    def __init__(self, roots: Iterable[Root], py_files: Iterable[str]) -> None:
        # roots sharing a directory and prefix (hatch's `packages = ["src/a", "src/b"]`) are
        # ordered by what they provide too: the order (and the fingerprint) never depends on a set's
        self.roots = tuple(
            sorted(set(roots), key=lambda r: (-len(r.directory), r.directory, r.prefix, r.describe()))
        )
        self.py_files = frozenset(py_files)
        self.package_dirs = frozenset(
            p.rpartition("/")[0] for p in self.py_files if p.endswith("__init__.py")
        )

    @classmethod
    def from_fingerprint(cls, fingerprint: str, py_files: Iterable[str]) -> Layout | None:
        """The layout a fingerprint describes (None when it cannot be read back)."""
        roots = []
        for part in filter(None, (p.strip() for p in fingerprint.split(";"))):
            match = _DESCRIBED.match(part)
            if match is None:
                return None
            directory = "" if match["dir"] == "." else match["dir"]
            names = frozenset(filter(None, match["names"].split(","))) if match["names"] is not None else None
            roots.append(Root(directory, match["prefix"] or "", names))
        return cls(roots, py_files)

    @property
    def packages(self) -> set[str]:
        """The top-level import names the rooted files provide."""
        return {name.split(".")[0] for name, rel in self.names.items() if self.module(rel).rooted}

    @property
    def fingerprint(self) -> str:
        """What the qualified names depend on besides the files: a changed layout renames modules."""
        ordered = sorted(self.roots, key=lambda r: (r.directory, r.prefix, r.describe()))
        return "; ".join(r.describe() for r in ordered)

    def module(self, relpath: str) -> ModuleName:
        for root in self.roots:
            named = _under(root, relpath)
            if named is not None:
                return ModuleName(named[0], named[1], True, "")
        name, is_package = dotted_path(relpath)
        return ModuleName(name, is_package, False, self._basedir(relpath))

    def _basedir(self, relpath: str) -> str:
        directory = relpath.rpartition("/")[0]
        while directory in self.package_dirs:
            directory = directory.rpartition("/")[0] if "/" in directory else ""
            if not directory:
                break
        return directory

    @cached_property
    def names(self) -> dict[str, str]:
        """Module name -> relpath of every Python file (a package `__init__` wins over a same-named
        module, a rooted file over an unrooted one)."""
        chosen: dict[str, tuple[tuple[bool, bool, bool, int], str]] = {}
        for rel in sorted(self.py_files):
            m = self.module(rel)
            if not m.name:
                continue
            rank = (m.rooted, m.is_package, not is_test_path(rel), -rel.count("/"))
            previous = chosen.get(m.name)
            if previous is None or rank > previous[0]:
                chosen[m.name] = (rank, rel)
        return {name: rel for name, (_, rel) in chosen.items()}

    def local(self, module: ModuleName, dotted: str, known: Callable[[str], bool] | None = None) -> str:
        """An absolute import as Python finds it from an unrooted file: beside the file first (its
        base directory is sys.path[0]), else as written."""
        if module.rooted or not module.basedir or not dotted:
            return dotted
        exists = known if known is not None else self.names.__contains__
        base = module.basedir.replace("/", ".")
        head = dotted.split(".", 1)[0]
        if exists(f"{base}.{head}") or f"{module.basedir}/{head}" in self.directories:
            return f"{base}.{dotted}"
        return dotted

    @cached_property
    def directories(self) -> frozenset[str]:
        """Every directory that holds Python files, at any depth (namespace packages included)."""
        found: set[str] = set()
        for rel in self.py_files:
            parts = rel.split("/")[:-1]
            found.update("/".join(parts[: i + 1]) for i in range(len(parts)))
        return frozenset(found)

    def describe(self) -> list[dict[str, Any]]:
        return [
            {"root": r.directory or ".", "prefix": r.prefix or None, "names": sorted(r.names or ()) or None,
             "origin": r.origin}
            for r in sorted(self.roots, key=lambda r: (r.directory, r.prefix))
        ]  # fmt: skip


def _under(root: Root, relpath: str) -> tuple[str, bool] | None:
    if root.directory:
        if not relpath.startswith(root.directory + "/"):
            return None
        rest = relpath[len(root.directory) + 1 :]
    else:
        rest = relpath
    parts = rest[: -len(".py")].split("/")
    if root.names is not None and parts[0] not in root.names:
        return None
    if not all(_NAME.match(p) for p in parts):
        return None  # not importable (a dash, a dot, ...): named by its path instead
    is_package = parts[-1] == "__init__"
    if is_package:
        parts = parts[:-1]
    if root.prefix:
        parts = [*root.prefix.split("."), *parts]
    if not parts:
        return None  # the root itself is a package: a wrong root; the file is named by its path
    return ".".join(parts), is_package


# -- discovery --------------------------------------------------------------------------------


def discover(files: Sequence[str], read: Reader, explicit: Sequence[str] = ()) -> tuple[Layout, list[str]]:
    """The layout of a repository from its files (repository-relative, .py and config files) and
    notes on declarations that could not be read. `explicit` roots replace every declaration.
    Projects are read shallowest first; a project inside a package already found (vendored code)
    is part of that package; a declared root that does not hold what it names is ignored and the
    project's layout is auto-discovered instead."""
    py_files = [f for f in files if f.endswith(".py")]
    tree = _Tree(py_files)
    notes: list[str] = []
    if explicit:
        given = [Root(_clean(d), origin="explicit") for d in explicit]
        return Layout([r for r in given if tree.has_dir(r.directory)], py_files), notes
    projects = sorted(
        {f.rpartition("/")[0] for f in files if f.rpartition("/")[2] in CONFIG_NAMES},
        key=lambda d: (d.count("/"), d),
    )
    if "" not in projects:
        projects.insert(0, "")
    roots: list[Root] = []
    for directory in projects:
        if any(_covers(r, directory) for r in roots):
            continue  # a project vendored inside a package is part of that package
        found = [r for r in _project_roots(directory, read, tree, notes) if _provides(r, tree)]
        roots += found or _auto(directory, tree)
    return Layout(roots, py_files), notes


def _provides(root: Root, tree: _Tree) -> bool:
    """A declared root that holds what it names (a stale declaration is ignored)."""
    if not tree.has_dir(root.directory):
        return False
    return root.names is None or bool(root.names & set(tree.tops(root.directory, namespaces=True)))


def _covers(root: Root, directory: str) -> bool:
    if root.directory and not directory.startswith(root.directory + "/"):
        return False
    rest = directory[len(root.directory) + 1 :] if root.directory else directory
    return bool(rest) and (root.names is None or rest.split("/")[0] in root.names)


def _clean(directory: str) -> str:
    directory = directory.strip().replace("\\", "/").strip("/")
    return "" if directory in ("", ".") else directory.removeprefix("./")


def _join(base: str, rel: str) -> str:
    rel = _clean(rel)
    return f"{base}/{rel}".strip("/") if base else rel


class _Tree:
    def __init__(self, py_files: Sequence[str]) -> None:
        self.files = set(py_files)
        self.dirs: set[str] = {""}
        for f in py_files:
            parts = f.split("/")[:-1]
            for i in range(1, len(parts) + 1):
                self.dirs.add("/".join(parts[:i]))

    def has_dir(self, directory: str) -> bool:
        return directory in self.dirs

    def tops(self, directory: str, namespaces: bool) -> dict[str, str]:
        """Top-level names under a directory: packages (with __init__.py; any directory holding
        Python files when `namespaces`) and modules -> "package" | "module"."""
        prefix = f"{directory}/" if directory else ""
        out: dict[str, str] = {}
        for f in self.files:
            if not f.startswith(prefix):
                continue
            rest = f[len(prefix) :].split("/")
            head = rest[0]
            if len(rest) == 1:
                if head != "__init__.py" and _NAME.match(head[:-3]):
                    out.setdefault(head[:-3], "module")
            elif _NAME.match(head) and (namespaces or f"{prefix}{head}/__init__.py" in self.files):
                out[head] = "package"
        return out


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def _project_roots(d: str, read: Reader, tree: _Tree, notes: list[str]) -> list[Root]:
    where = f"{d}/" if d else ""
    pyproject = _toml(read(f"{where}pyproject.toml"), f"{where}pyproject.toml", notes)
    setup_cfg = _cfg(read(f"{where}setup.cfg"), f"{where}setup.cfg", notes)
    setup_py = _setup_py(read(f"{where}setup.py"))
    tool = pyproject.get("tool", {}) if isinstance(pyproject.get("tool"), dict) else {}
    name = _project_name(pyproject, setup_cfg, setup_py)

    graphctx = tool.get("graphctx", {})
    if isinstance(graphctx, dict) and isinstance(graphctx.get("roots"), list):
        return [
            Root(_join(d, str(r)), origin=f"{where}pyproject.toml [tool.graphctx]") for r in graphctx["roots"]
        ]
    for reader in (_setuptools, _poetry, _hatch, _pdm, _flit, _maturin, _scikit_build):
        found = reader(d, tool, name, tree)
        if found:
            return found
    found = _setuptools_spec(d, _cfg_spec(setup_cfg), tree, f"{where}setup.cfg")
    if found:
        return found
    found = _setuptools_spec(d, setup_py, tree, f"{where}setup.py")
    if found:
        return found
    return _auto(d, tree)


def _toml(data: bytes | None, where: str, notes: list[str]) -> dict[str, Any]:
    if data is None:
        return {}
    try:
        return tomllib.loads(data.decode("utf-8", "replace"))
    except tomllib.TOMLDecodeError as exc:
        notes.append(f"{where}: not valid TOML ({exc}); its declarations are ignored")
        return {}


def _cfg(data: bytes | None, where: str, notes: list[str]) -> configparser.ConfigParser | None:
    if data is None:
        return None
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(data.decode("utf-8", "replace"))
    except configparser.Error as exc:
        notes.append(f"{where}: not readable ({type(exc).__name__}); its declarations are ignored")
        return None
    return parser


def _project_name(
    pyproject: dict[str, Any], cfg: configparser.ConfigParser | None, setup_py: dict[str, Any]
) -> str:
    project = pyproject.get("project")
    if isinstance(project, dict) and isinstance(project.get("name"), str):
        return str(project["name"])
    poetry = pyproject.get("tool", {}).get("poetry", {}) if isinstance(pyproject.get("tool"), dict) else {}
    if isinstance(poetry, dict) and isinstance(poetry.get("name"), str):
        return str(poetry["name"])
    if cfg is not None and cfg.has_option("metadata", "name"):
        return cfg.get("metadata", "name").strip()
    value = setup_py.get("name")
    return value if isinstance(value, str) else ""


# -- setuptools (pyproject, setup.cfg, setup.py share one spec) -------------------------------


def _setuptools(d: str, tool: dict[str, Any], name: str, tree: _Tree) -> list[Root]:
    st = tool.get("setuptools")
    if not isinstance(st, dict):
        return []
    spec: dict[str, Any] = {}
    if isinstance(st.get("package-dir"), dict):
        spec["package_dir"] = {str(k): str(v) for k, v in st["package-dir"].items()}
    packages = st.get("packages")
    if isinstance(packages, list):
        spec["packages"] = [str(p) for p in packages]
    elif isinstance(packages, dict) and isinstance(packages.get("find"), dict):
        spec["find"] = packages["find"]
        spec.setdefault("find", {}).setdefault("namespaces", True)
    if isinstance(st.get("py-modules"), list):
        spec["py_modules"] = [str(m) for m in st["py-modules"]]
    return _setuptools_spec(d, spec, tree, f"{d + '/' if d else ''}pyproject.toml [tool.setuptools]")


def _cfg_spec(cfg: configparser.ConfigParser | None) -> dict[str, Any]:
    if cfg is None or not cfg.has_section("options"):
        return {}
    spec: dict[str, Any] = {}
    options = cfg["options"]
    if "package_dir" in options:
        mapping: dict[str, str] = {}
        for line in options["package_dir"].splitlines():
            if "=" in line:
                key, _, value = line.partition("=")
                mapping[key.strip()] = value.strip()
        spec["package_dir"] = mapping
    packages = options.get("packages", "").strip()
    if packages in ("find:", "find_namespace:"):
        found: dict[str, Any] = {"namespaces": packages == "find_namespace:"}
        if cfg.has_section("options.packages.find"):
            section = cfg["options.packages.find"]
            for key in ("where", "include", "exclude"):
                if key in section:
                    values = [v.strip() for v in re.split(r"[\n,]", section[key]) if v.strip()]
                    found[key] = values
        spec["find"] = found
    elif packages:
        spec["packages"] = [p.strip() for p in re.split(r"[\n,]", packages) if p.strip()]
    if "py_modules" in options:
        spec["py_modules"] = [m.strip() for m in re.split(r"[\n,]", options["py_modules"]) if m.strip()]
    return spec


def _setuptools_spec(d: str, spec: dict[str, Any], tree: _Tree, origin: str) -> list[Root]:
    """Roots of a setuptools declaration: package_dir, packages (listed or found), py_modules."""
    if not spec:
        return []
    package_dir: dict[str, str] = spec.get("package_dir") or {}
    base = _join(d, package_dir.get("", ""))
    roots: list[Root] = []
    mapped = {k: v for k, v in package_dir.items() if k}
    for pkg, directory in mapped.items():
        if all(_NAME.match(p) for p in pkg.split(".")):
            roots.append(Root(_join(d, directory), prefix=pkg, origin=origin))
    tops: set[str] = set()
    find = spec.get("find")
    if isinstance(find, dict):
        wheres = find.get("where") or ["."]
        wheres = [wheres] if isinstance(wheres, str) else wheres
        for w in wheres:
            directory = _join(base, str(w)) if "" not in package_dir else _join(d, str(w))
            found = tree.tops(directory, bool(find.get("namespaces")))
            # find_packages finds packages only: a top-level setup.py or conftest.py is no module
            names = {n for n, kind in found.items() if kind == "package" and _selected(n, find)}
            if names:
                roots.append(Root(directory, names=frozenset(names), origin=origin))
    for pkg in spec.get("packages") or []:
        top = str(pkg).split(".")[0]
        if top not in mapped and _NAME.match(top):
            tops.add(top)
    tops |= {str(m).split(".")[0] for m in spec.get("py_modules") or [] if _NAME.match(str(m).split(".")[0])}
    if tops:
        roots.append(Root(base, names=frozenset(tops), origin=origin))
    if not roots and "" in package_dir:
        roots.append(Root(base, origin=origin))
    return roots


def _selected(name: str, find: dict[str, Any]) -> bool:
    include = find.get("include") or ["*"]
    exclude = find.get("exclude") or []
    include = [include] if isinstance(include, str) else include
    exclude = [exclude] if isinstance(exclude, str) else exclude
    return any(fnmatch.fnmatchcase(name, str(p)) for p in include) and not any(
        fnmatch.fnmatchcase(name, str(p)) for p in exclude
    )


def _setup_py(data: bytes | None) -> dict[str, Any]:
    """The literal keyword arguments of a `setup(...)` call (package_dir, packages, py_modules,
    name), or names the module binds once to a literal (PyYAML's `NAME = 'PyYAML'` ...
    `setup(name=NAME)`); find_packages(where=...) becomes a find spec. Nothing is executed."""
    if data is None:
        return {}
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError, RecursionError):
        return {}
    assigned = [
        (t.id, node.value)
        for node in tree.body
        if isinstance(node, ast.Assign)
        for t in node.targets
        if isinstance(t, ast.Name)
    ]
    bound = Counter(name for name, _ in assigned)
    constants = {name: value for name, value in assigned if bound[name] == 1}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        called = (
            func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        )
        if called != "setup":
            continue
        spec: dict[str, Any] = {}
        for kw in node.keywords:
            if kw.arg in ("package_dir", "packages", "py_modules", "name"):
                given = kw.value
                value = _literal(constants.get(given.id, given) if isinstance(given, ast.Name) else given)
                if value is not None:
                    spec["find" if isinstance(value, _Find) else kw.arg] = (
                        value.spec if isinstance(value, _Find) else value
                    )
        return spec
    return {}


@dataclass
class _Find:
    spec: dict[str, Any]


def _literal(node: ast.expr) -> Any:
    if isinstance(node, ast.Call):
        func = node.func
        called = (
            func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        )
        if called in ("find_packages", "find_namespace_packages"):
            spec: dict[str, Any] = {"namespaces": called == "find_namespace_packages"}
            if node.args:
                where = _literal(node.args[0])
                if isinstance(where, str):
                    spec["where"] = [where]
            for kw in node.keywords:
                value = _literal(kw.value)
                if kw.arg == "where" and isinstance(value, str):
                    spec["where"] = [value]
                elif kw.arg in ("include", "exclude") and isinstance(value, list | tuple):
                    spec[kw.arg] = [str(v) for v in value]
            return _Find(spec)
        return None
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return None
    if isinstance(value, tuple):
        value = list(value)
    return value if isinstance(value, str | list | dict) else None


# -- other build backends ---------------------------------------------------------------------


def _poetry(d: str, tool: dict[str, Any], name: str, tree: _Tree) -> list[Root]:
    poetry = tool.get("poetry")
    if not isinstance(poetry, dict) or ("packages" not in poetry and "name" not in poetry):
        return []
    origin = f"{d + '/' if d else ''}pyproject.toml [tool.poetry]"
    roots: list[Root] = []
    for entry in poetry.get("packages") or []:
        if not isinstance(entry, dict) or not isinstance(entry.get("include"), str):
            continue
        include = entry["include"].strip("/")
        head = re.split(r"[/*?\[]", include, maxsplit=1)[0]
        head = head[:-3] if head.endswith(".py") else head
        if _NAME.match(head):
            roots.append(Root(_join(d, str(entry.get("from", ""))), names=frozenset({head}), origin=origin))
    return roots or _default_package(d, name, tree, origin)


def _hatch(d: str, tool: dict[str, Any], name: str, tree: _Tree) -> list[Root]:
    """Hatch's wheel target (or the build table it inherits): `packages = ["src/foo"]` ships
    `foo` from `src`; `sources` strips prefixes (a list) or rewrites them (a table); `only-include`
    selects paths under those sources. Without any, hatch's default package detection."""
    hatch = tool.get("hatch")
    if not isinstance(hatch, dict):
        return []
    build = _table(hatch, "build")
    config = {**build, **_table(_table(build, "targets"), "wheel")}
    origin = f"{d + '/' if d else ''}pyproject.toml [tool.hatch]"
    roots: list[Root] = []
    sources = config.get("sources")
    if isinstance(sources, dict):
        for src, dest in sources.items():
            prefix = str(dest).strip("/").replace("/", ".")
            if not prefix or all(_NAME.match(p) for p in prefix.split(".")):
                roots.append(Root(_join(d, str(src)), prefix=prefix, origin=origin))
    strip = [_clean(str(s)) for s in sources] if isinstance(sources, list) else []
    for entry in config.get("packages") or []:
        parent, _, top = _clean(str(entry)).rpartition("/")
        if _NAME.match(top.removesuffix(".py")):
            roots.append(Root(_join(d, parent), names=frozenset({top.removesuffix(".py")}), origin=origin))
    for entry in config.get("only-include") or []:
        path = _clean(str(entry))
        base = next((s for s in strip if path.startswith(s + "/")), "")
        top = path[len(base) + 1 :].split("/")[0] if base else path.split("/")[0]
        if _NAME.match(top.removesuffix(".py")):
            roots.append(Root(_join(d, base), names=frozenset({top.removesuffix(".py")}), origin=origin))
    if not roots and strip:
        roots = [Root(_join(d, s), origin=origin) for s in strip]
    return roots or _default_package(d, name, tree, origin)


def _table(data: dict[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def _pdm(d: str, tool: dict[str, Any], name: str, tree: _Tree) -> list[Root]:
    pdm = tool.get("pdm")
    if not isinstance(pdm, dict) or not isinstance(pdm.get("build"), dict):
        return []
    build = pdm["build"]
    origin = f"{d + '/' if d else ''}pyproject.toml [tool.pdm.build]"
    base = _join(d, str(build.get("package-dir", "src" if tree.has_dir(_join(d, "src")) else "")))
    names = set()
    for entry in build.get("includes") or []:
        head = re.split(r"[/*?\[]", _clean(str(entry)).removeprefix(base + "/" if base else ""), maxsplit=1)[
            0
        ]
        head = head[:-3] if head.endswith(".py") else head
        if _NAME.match(head):
            names.add(head)
    return [Root(base, names=frozenset(names) if names else None, origin=origin)]


def _flit(d: str, tool: dict[str, Any], name: str, tree: _Tree) -> list[Root]:
    flit = tool.get("flit")
    if not isinstance(flit, dict):
        return []
    module = flit.get("module", {}).get("name") if isinstance(flit.get("module"), dict) else None
    origin = f"{d + '/' if d else ''}pyproject.toml [tool.flit]"
    return _default_package(d, str(module or name), tree, origin, normalise=module is None)


def _maturin(d: str, tool: dict[str, Any], name: str, tree: _Tree) -> list[Root]:
    maturin = tool.get("maturin")
    if not isinstance(maturin, dict):
        return []
    origin = f"{d + '/' if d else ''}pyproject.toml [tool.maturin]"
    source = maturin.get("python-source")
    if isinstance(source, str):
        return [Root(_join(d, source), origin=origin)]
    return _default_package(d, str(maturin.get("module-name", name)).split(".")[0], tree, origin)


def _scikit_build(d: str, tool: dict[str, Any], name: str, tree: _Tree) -> list[Root]:
    skb = tool.get("scikit-build")
    if not isinstance(skb, dict):
        return []
    wheel = skb.get("wheel", {}) if isinstance(skb.get("wheel"), dict) else {}
    origin = f"{d + '/' if d else ''}pyproject.toml [tool.scikit-build]"
    roots = []
    for entry in wheel.get("packages") or []:
        parent, _, top = _clean(str(entry)).rpartition("/")
        if _NAME.match(top):
            roots.append(Root(_join(d, parent), names=frozenset({top}), origin=origin))
    return roots or _default_package(d, name, tree, origin)


def _default_package(d: str, name: str, tree: _Tree, origin: str, *, normalise: bool = True) -> list[Root]:
    """A backend's default: the package named after the project at the top or under src/."""
    if not name:
        return []
    pkg = _normal(name) if normalise else name
    for directory in (d, _join(d, "src")):
        found = tree.tops(directory, namespaces=True)
        if pkg in found:
            return [Root(directory, names=frozenset({pkg}), origin=origin + " (default)")]
    return []


def _auto(d: str, tree: _Tree) -> list[Root]:
    """setuptools-style auto-discovery: `src/` when it holds Python code, else the packages and
    modules at the project's top that are not tests, docs, examples or tooling."""
    src = _join(d, "src")
    origin = f"{d or '.'}: auto-discovered"
    if tree.tops(src, namespaces=True):
        return [Root(src, origin=origin + " (src layout)")]
    tops = {
        n
        for n in tree.tops(d, namespaces=False)
        if n not in _FLAT_EXCLUDED and not n.startswith(("_", ".")) and not n.startswith("test")
    }
    return [Root(d, names=frozenset(tops), origin=origin + " (flat layout)")] if tops else []


def project_name(read: Reader) -> str:
    """The repository's own project name (pyproject, setup.cfg or setup.py at its top), or ""."""
    notes: list[str] = []
    return _project_name(
        _toml(read("pyproject.toml"), "pyproject.toml", notes),
        _cfg(read("setup.cfg"), "setup.cfg", notes),
        _setup_py(read("setup.py")),
    )
