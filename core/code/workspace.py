"""Parsed modules on demand, and the unchanged modules a change can reach.

Resolution needs other modules' definitions, but only those it consults; a re-index after an edit
parses the changed files, the files that can reach a changed module, and what their resolution
consults — not the whole tree."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from functools import cached_property

from graphctx.code.deps import imported_modules
from graphctx.code.pyparse import Module, module_name, parse_module
from graphctx.code.resolve import Resolver, Target
from graphctx.code.walk import SourceFile


class Workspace(Mapping[str, Module]):
    """Module name → parsed module, parsed at first use. A package wins over a same-named module
    file, as in Python's import system."""

    def __init__(self, files: list[SourceFile], on_parse: Callable[[Module], None] | None = None) -> None:
        self.files: dict[str, SourceFile] = {}  # module name -> file
        self.by_path: dict[str, SourceFile] = {}
        self._parsed: dict[str, Module] = {}  # relpath -> module
        self._on_parse = on_parse
        for f in files:
            self.by_path[f.relpath] = f
            name, is_package = module_name(f.relpath)
            previous = self.files.get(name)
            if previous is None or (is_package and not module_name(previous.relpath)[1]):
                self.files[name] = f

    def parse(self, relpath: str) -> Module:
        module = self._parsed.get(relpath)
        if module is None:
            module = parse_module(relpath, self.by_path[relpath].data)
            self._parsed[relpath] = module
            if self._on_parse is not None:
                self._on_parse(module)
        return module

    @cached_property
    def importers(self) -> dict[str, set[str]]:
        """Module name -> the modules whose import statements (by text) can name it."""
        found: dict[str, set[str]] = {}
        for name, f in self.files.items():
            for target in imported_modules(name, module_name(f.relpath)[1], f.data):
                found.setdefault(target, set()).add(name)
        return found

    @property
    def parsed_count(self) -> int:
        return len(self._parsed)

    def owns(self, module: Module) -> bool:
        """Whether this file is the one its module name resolves to."""
        f = self.files.get(module.name)
        return f is not None and f.relpath == module.relpath

    def __getitem__(self, name: str) -> Module:
        return self.parse(self.files[name].relpath)

    def __contains__(self, name: object) -> bool:
        return name in self.files

    def __iter__(self) -> Iterator[str]:
        return iter(self.files)

    def __len__(self) -> int:
        return len(self.files)


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
    return (candidates | {c for c in carriers if c in workspace}) - changed


def _carries(name: str, changed: set[str], workspace: Workspace, resolver: Resolver) -> bool:
    """Whether what other modules can look up in this one leads to a changed module."""
    module = workspace[name]
    resolver.consulted = set()
    for top in [*module.top.defs, *module.top.imports]:
        resolver.module_name(name, top)
    for qual in module.classes:
        resolver.mro(Target("class", name, qual))
    if module.stars:
        return True  # what it re-exports depends on modules found later; assume it carries
    return bool(resolver.consulted & changed)
