"""Where a repository's Go packages are and which build configuration each file belongs to.

A package is a directory of `.go` files; its import path is the path of the module whose `go.mod`
is nearest above it joined with the directory below that module root (`module example.com/m` and
`a/b/x.go` make `example.com/m/a/b`). The standard library is its own module (`module std`): its
import paths are the directories (`net/http`), and its vendored copies are `vendor/...`; any other
module's vendored packages keep the path they are imported by. Without a `go.mod` a directory is
its own import path (GOPATH style). Like the go tool, directories named `testdata` or starting with
`.` or `_` hold no package.

Build constraints (`//go:build` lines and `_GOOS` / `_GOARCH` file-name suffixes) are kept on each
file and evaluated against one configuration (linux/amd64, gc, cgo off, every go1.N release tag):
every file is indexed; the configuration only decides between definitions that several
constrained files give the same name."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

GOOS = frozenset(
    [
        "aix",
        "android",
        "darwin",
        "dragonfly",
        "freebsd",
        "hurd",
        "illumos",
        "ios",
        "js",
        "linux",
        "nacl",
        "netbsd",
        "openbsd",
        "plan9",
        "solaris",
        "wasip1",
        "windows",
        "zos",
    ]
)
GOARCH = frozenset(
    [
        "386",
        "amd64",
        "amd64p32",
        "arm",
        "armbe",
        "arm64",
        "arm64be",
        "loong64",
        "mips",
        "mipsle",
        "mips64",
        "mips64le",
        "mips64p32",
        "mips64p32le",
        "ppc",
        "ppc64",
        "ppc64le",
        "riscv",
        "riscv64",
        "s390",
        "s390x",
        "sparc",
        "sparc64",
        "wasm",
    ]
)
UNIX = frozenset(
    [
        "aix",
        "android",
        "darwin",
        "dragonfly",
        "freebsd",
        "hurd",
        "illumos",
        "ios",
        "linux",
        "netbsd",
        "openbsd",
        "solaris",
    ]
)
STD = "std"


@dataclass(frozen=True, slots=True)
class Config:
    """The build configuration constraints are evaluated against."""

    goos: str = "linux"
    goarch: str = "amd64"
    tags: frozenset[str] = frozenset({"gc"})  # cgo off: CGO_ENABLED=0
    release: int = 26  # go1.1 ... go1.26 are satisfied

    def has(self, tag: str) -> bool:
        if tag in (self.goos, self.goarch) or tag in self.tags:
            return True
        if tag == "unix":
            return self.goos in UNIX
        if self.goos == "android" and tag == "linux":
            return True
        if self.goos in ("illumos",) and tag == "solaris":
            return True
        if self.goos == "ios" and tag == "darwin":
            return True
        release = re.fullmatch(r"go1\.(\d+)", tag)
        return release is not None and int(release.group(1)) <= self.release


DEFAULT = Config()
_SECOND = {"ios": "arm64", "android": "arm64", "js": "wasm", "wasip1": "wasm", "plan9": "386"}
_LINUX_ARCHES = ("386", "arm", "arm64", "loong64", "mips", "mipsle", "mips64", "mips64le", "ppc64",
                 "ppc64le", "riscv64", "s390x")  # fmt: skip
CONFIGS = (
    DEFAULT,
    *(Config("linux", arch) for arch in _LINUX_ARCHES),
    *(Config(goos, _SECOND.get(goos, "amd64")) for goos in sorted(GOOS - {"linux", "nacl", "hurd", "zos"})),
    *(Config(c.goos, c.goarch, frozenset({"gc", "cgo"})) for c in (DEFAULT, Config("darwin", "arm64"))),
)
"""The configurations a file outside the default one is placed in (the first that admits it)."""
_TAGS = (frozenset({"gc"}), frozenset({"gc", "cgo"}))

_TOKEN = re.compile(r"\s*(\(|\)|&&|\|\||!|[A-Za-z0-9_.]+)")


@cache
def _eval(expr: str, config: Config) -> bool | None:
    """A `//go:build` expression's value; None when it does not parse."""
    tokens: list[str] = []
    pos = 0
    while pos < len(expr):
        match = _TOKEN.match(expr, pos)
        if match is None:
            if expr[pos:].strip():
                return None
            break
        tokens.append(match.group(1))
        pos = match.end()
    at = 0

    def orexpr() -> bool:
        nonlocal at
        value = andexpr()
        while at < len(tokens) and tokens[at] == "||":
            at += 1
            value = andexpr() or value
        return value

    def andexpr() -> bool:
        nonlocal at
        value = unary()
        while at < len(tokens) and tokens[at] == "&&":
            at += 1
            value = unary() and value
        return value

    def unary() -> bool:
        nonlocal at
        if at >= len(tokens):
            raise ValueError
        token = tokens[at]
        at += 1
        if token == "!":
            return not unary()
        if token == "(":
            value = orexpr()
            if at >= len(tokens) or tokens[at] != ")":
                raise ValueError
            at += 1
            return value
        if token in (")", "&&", "||"):
            raise ValueError
        return config.has(token)

    try:
        value = orexpr()
    except ValueError:
        return None
    return value if at == len(tokens) else None


def name_constraint(relpath: str) -> str:
    """The constraint a file name implies (`x_windows.go`, `x_linux_arm64_test.go`), as an expression."""
    stem = relpath.rpartition("/")[2].removesuffix(".go").removesuffix("_test")
    parts = stem.split("_")
    if len(parts) >= 3 and parts[-2] in GOOS and parts[-1] in GOARCH:
        return f"{parts[-2]} && {parts[-1]}"
    if len(parts) >= 2 and (parts[-1] in GOOS or parts[-1] in GOARCH):
        return parts[-1]
    return ""


@dataclass(frozen=True, slots=True)
class Constraint:
    """A file's build constraints: its `//go:build` expression and what its name implies."""

    expr: str = ""
    by_name: str = ""

    @property
    def text(self) -> str:
        """How a card shows it: `//go:build linux && !race`, or the name's implied constraint."""
        parts = [f"//go:build {self.expr}"] if self.expr else []
        if self.by_name and self.by_name != self.expr:
            parts.append(f"(file name: {self.by_name})")
        return " ".join(parts)

    def config(self) -> Config | None:
        """The configuration this file belongs to: the one its name says (`_openbsd_riscv64`), else
        the first of CONFIGS, else any GOOS/GOARCH pair that admits it (None: none does)."""
        named = self.by_name.split(" && ")
        goos = next((p for p in named if p in GOOS), "")
        goarch = next((p for p in named if p in GOARCH and p not in GOOS), "")
        first = [Config(goos or "linux", goarch or _SECOND.get(goos, "amd64"))] if self.by_name else []
        every = (Config(o, a, t) for t in _TAGS for o in sorted(GOOS) for a in sorted(GOARCH))
        for config in (*first, *CONFIGS, *every):
            if self.active(config):
                return config
        return None

    def active(self, config: Config = DEFAULT) -> bool:
        return all(not (expr and _eval(expr, config) is False) for expr in (self.expr, self.by_name))


def package_dir(relpath: str) -> str | None:
    """The directory a .go file's package is, or None when the go tool would ignore the file."""
    parts = relpath.split("/")
    if parts[-1].startswith((".", "_")):
        return None
    if any(p == "testdata" or p.startswith((".", "_")) for p in parts[:-1]):
        return None
    return "/".join(parts[:-1])


_MODULE = re.compile(rb"^\s*module\s+(\"[^\"]+\"|\S+)", re.MULTILINE)


def module_path(go_mod: bytes) -> str | None:
    match = _MODULE.search(go_mod)
    return match.group(1).decode("utf-8", "replace").strip('"') if match else None


class GoLayout:
    """Import paths of a file tree's Go packages, from its go.mod files."""

    def __init__(self, go_files: Iterable[str], go_mods: dict[str, bytes]) -> None:
        self.modules: dict[str, str] = {}  # module root directory -> module path
        for rel, data in go_mods.items():
            path = module_path(data)
            if path:
                self.modules[rel.rpartition("/")[0] if "/" in rel else ""] = path
        self.dirs: dict[str, str] = {}  # package directory -> import path
        for rel in go_files:
            d = package_dir(rel)
            if d is not None and d not in self.dirs:
                self.dirs[d] = self.import_path(d)
        self.by_path: dict[str, list[str]] = {}
        for d, path in sorted(self.dirs.items()):
            self.by_path.setdefault(path, []).append(d)

    def module_root(self, directory: str) -> str | None:
        d = directory
        while True:
            if d in self.modules:
                return d
            if not d:
                return None
            d = d.rpartition("/")[0] if "/" in d else ""

    def import_path(self, directory: str) -> str:
        """The import path of a package directory (see the module doc)."""
        root = self.module_root(directory)
        if root is None:
            return directory or "."
        module = self.modules[root]
        rest = directory[len(root) + 1 :] if root else directory
        if rest == "vendor" or rest.startswith("vendor/"):
            inner = rest.removeprefix("vendor").lstrip("/")
            return f"vendor/{inner}" if module == STD else inner or module
        if module == STD:
            return rest or STD
        return f"{module}/{rest}" if rest else module

    def resolve_import(self, importer_dir: str, path: str) -> str | None:
        """The package directory an import path names from a file in importer_dir: the one in the
        importer's module (its vendored copy first, as the go tool does), else the only one."""
        root = self.module_root(importer_dir)
        prefix = f"{root}/" if root else ""
        if root is not None:
            vendored = f"{prefix}vendor/{path}"
            if vendored in self.dirs:
                return vendored
        found = self.by_path.get(path, [])
        if len(found) == 1:
            return found[0]
        mine = [d for d in found if root is not None and self.module_root(d) == root]
        return mine[0] if len(mine) == 1 else None
