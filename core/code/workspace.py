"""Parsed modules on demand, and the unchanged modules a change can reach.

Resolution needs other modules' definitions, but only those it consults; a re-index after an edit
parses the changed files, the files that can reach a changed module, and what their resolution
consults — not the whole tree. Module names come from the repository's layout (its import roots);
a name the repository does not define may be found in another indexed repository (`externals`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from functools import cached_property
from typing import Protocol

from graphctx.code.deps import imported_modules
from graphctx.code.layout import Layout, ModuleName, is_test_path
from graphctx.code.parallel import Prefetch
from graphctx.code.pyparse import Module, parse_module
from graphctx.code.resolve import Resolver, Target
from graphctx.code.walk import SourceFile


class Externals(Protocol):
    """Modules of other repositories in the same scope, by import name."""

    def get(self, name: str) -> Module | None: ...

    def is_package(self, name: str) -> bool: ...


class Workspace(Mapping[str, Module]):
    """Module name → parsed module, parsed at first use."""

    def __init__(
        self,
        files: list[SourceFile],
        layout: Layout,
        repo: str = "",
        on_parse: Callable[[Module], None] | None = None,
        externals: Externals | None = None,
    ) -> None:
        self.layout = layout
        self.repo = repo
        self.by_path: dict[str, SourceFile] = {f.relpath: f for f in files}
        self.files: dict[str, SourceFile] = {
            name: self.by_path[rel] for name, rel in layout.names.items() if rel in self.by_path
        }
        self._parsed: dict[str, Module] = {}  # relpath -> module
        self._on_parse = on_parse
        self.externals = externals
        self._prefetch: Prefetch[Module] | None = None
        self._ahead: dict[str, int] = {}  # relpath -> its index in the prefetch

    def parse(self, relpath: str) -> Module:
        module = self._parsed.get(relpath)
        if module is None:
            at = self._ahead.pop(relpath, None)
            if at is not None and self._prefetch is not None:
                module = self._prefetch.take(at)
            if module is None:
                module = parse_module(*self._parse_args(relpath))
            self._parsed[relpath] = module
            if self._on_parse is not None:
                self._on_parse(module)
        return module

    def _parse_args(self, relpath: str) -> tuple[str, bytes, ModuleName, Callable[[str], str], str]:
        naming = self.layout.module(relpath)
        names = self.files.__contains__
        return (
            relpath,
            self.by_path[relpath].data,
            naming,
            lambda dotted: self.layout.local(naming, dotted, names),
            self.repo,
        )

    def parse_ahead(self, relpaths: list[str], workers: int) -> None:
        """Parse these files in up to `workers` processes, in this order, while this process works
        (graphctx.code.parallel.Prefetch); `parse` takes each from there when it is first asked for,
        in the same order it would have parsed it, so nothing but the time differs. Ends with
        `end_ahead` (the workers are stopped)."""
        todo = [r for r in relpaths if r not in self._parsed and r in self.by_path]
        if workers <= 1 or len(todo) < PARSE_AHEAD_MIN:
            return
        todo = self._demand_order(todo)
        shared = (self.layout, frozenset(self.files), self.repo)
        items = [(r, self.by_path[r].data) for r in todo]
        self._prefetch = Prefetch(parse_shared, shared, items, workers=workers)
        self._ahead = {r: i for i, r in enumerate(todo)}

    def end_ahead(self) -> None:
        if self._prefetch is not None:
            self._prefetch.close()
        self._prefetch, self._ahead = None, {}

    def name_of(self, relpath: str) -> str:
        return self.layout.module(relpath).name

    def _demand_order(self, relpaths: list[str]) -> list[str]:
        """These files in about the order resolving them in the given order asks for them: each one,
        then the files it imports (resolution consults them next), so the workers parse ahead what
        this process is about to need instead of it parsing them itself."""
        wanted = set(relpaths)
        order: dict[str, None] = {}
        for rel in relpaths:
            order[rel] = None
            for name in sorted(self.imports.get(self.name_of(rel), ())):
                f = self.files.get(name)
                if f is not None and f.relpath in wanted:
                    order.setdefault(f.relpath)
        return list(order)

    @cached_property
    def imports(self) -> dict[str, set[str]]:
        """Module name -> the module names its import statements (by text) can name. A test file also
        depends on the conftest.py of its directory and of each one above (pytest's fixtures)."""
        found: dict[str, set[str]] = {}
        for name, f in self.files.items():
            naming = self.layout.module(f.relpath)
            # both spellings of a sibling import, whether or not the sibling exists (it may be new or gone)
            beside = lambda dotted, n=naming: self.layout.local(n, dotted, _anything)  # noqa: E731
            targets = imported_modules(name, naming.is_package, f.data, beside)
            if is_test_path(f.relpath):
                targets |= {self.name_of(c) for c in conftests(f.relpath)}
            found[name] = targets
        return found

    @cached_property
    def importers(self) -> dict[str, set[str]]:
        """Module name -> the modules whose import statements (by text) can name it (`imports`)."""
        found: dict[str, set[str]] = {}
        for name, targets in self.imports.items():
            for target in targets:
                found.setdefault(target, set()).add(name)
        return found

    @property
    def parsed_count(self) -> int:
        return len(self._parsed)

    def owns(self, module: Module) -> bool:
        """Whether this file is the one its module name resolves to."""
        f = self.files.get(module.name)
        return f is not None and f.relpath == module.relpath

    def is_package(self, name: str) -> bool:
        """A package of another repository (namespace packages span repositories)."""
        return self.externals is not None and self.externals.is_package(name)

    def __getitem__(self, name: str) -> Module:
        f = self.files.get(name)
        if f is not None:
            return self.parse(f.relpath)
        external = self.externals.get(name) if self.externals is not None else None
        if external is None:
            raise KeyError(name)
        return external

    def get(self, name: str, default: Module | None = None) -> Module | None:  # type: ignore[override]
        try:
            return self[name]
        except KeyError:
            return default

    def __contains__(self, name: object) -> bool:
        if name in self.files:
            return True
        return isinstance(name, str) and self.externals is not None and self.externals.get(name) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self.files)

    def __len__(self) -> int:
        return len(self.files)


PARSE_AHEAD_MIN = 64
"""Fewer files than this are parsed here: starting the workers would cost more than they save."""


def parse_shared(shared: tuple[Layout, frozenset[str], str], item: tuple[str, bytes]) -> Module:
    """One file parsed in a worker exactly as Workspace.parse parses it here (the layout, the module
    names the workspace holds and the repository name are shared by every file)."""
    layout, names, repo = shared
    relpath, data = item
    naming = layout.module(relpath)
    return parse_module(
        relpath, data, naming, lambda dotted: layout.local(naming, dotted, names.__contains__), repo
    )


def _anything(_: str) -> bool:
    return True


def conftests(relpath: str) -> list[str]:
    """The conftest.py files whose fixtures a test file can request: its directory's and every
    one above it, nearest first."""
    parts = relpath.split("/")[:-1]
    return ["/".join([*parts[:i], "conftest.py"]) for i in range(len(parts), -1, -1)]


def reachable_from(changed: set[str], workspace: Workspace, resolver: Resolver) -> set[str]:
    """Module names whose resolution may consult a changed module (the changed ones excluded).

    A module is a candidate when it imports (by text) a carrier — a changed module, a package above
    one, or a module whose top-level names or class hierarchies lead to a changed module, which is
    decided by resolving them."""
    importers = workspace.importers
    candidates: set[str] = set()
    carriers: set[str] = set()
    checked: set[str] = set()
    queue = sorted(changed)
    while queue:
        current = queue.pop()
        if current in carriers:
            continue
        carriers.add(current)
        if "." in current:
            queue.append(current.rpartition(".")[0])  # a package reaches its submodules
        for importer in sorted(importers.get(current, ())):
            candidates.add(importer)
            if importer not in checked:
                checked.add(importer)
                if _carries(importer, changed, workspace, resolver):
                    queue.append(importer)
    return (candidates | {c for c in carriers if c in workspace.files}) - changed


def _carries(name: str, changed: set[str], workspace: Workspace, resolver: Resolver) -> bool:
    """Whether what other modules can look up in this one leads to a changed module."""
    module = workspace[name]
    resolver.consulted = set()
    for top in [*module.top.defs, *module.top.imports, *module.top.typed]:
        resolver.module_name(name, top)
    for qual in module.classes:
        resolver.mro(Target("class", name, qual))
    if module.stars:
        return True  # what it re-exports depends on modules found later; assume it carries
    if is_test_path(module.relpath):
        return True  # its helpers and fixtures are looked up by tests in other files
    return bool(resolver.consulted & changed)
