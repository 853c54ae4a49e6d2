"""Which tests exercise which definitions (pytest and unittest).

A test is a function or method named `test*` in a test file (graphctx.code.layout.is_test_path),
outermost if tests nest. It tests the code it calls, and the code reached through what it uses
without calling it directly: the test-suite helpers it calls (functions and methods defined in test
files, conftest.py included), the pytest fixtures it requests by parameter name (in its module, its
class, or a conftest.py of its directory or one above, nearest first, `@pytest.fixture(name=...)`
honoured) and the fixtures those request, its class's set-up methods (`setUp`, `setUpClass`,
`setup_method`, ... through the class's bases), and the callables a `@pytest.mark.parametrize`
decorator passes in. Helpers are followed at most HOPS deep. Autouse fixtures are left out: they
run for every test and say nothing about any one of them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from graphctx.code.layout import is_test_path
from graphctx.code.pyparse import Def, Module
from graphctx.code.resolve import Resolver, Target
from graphctx.code.workspace import Workspace, conftests

HOPS = 3
SETUP_METHODS = ("setUp", "setUpClass", "asyncSetUp", "setup_method", "setup_class", "setup")
CALLABLE_KINDS = frozenset({"function", "method", "class"})


@dataclass(frozen=True, slots=True)
class Resolved:
    """A call (or reference) of module `module` inside def `caller`, pinned to its target."""

    caller: str
    target: Target
    line: int


def enclosing_test(module: Module, caller: str) -> Def | None:
    """The outermost test function or method a call site sits in."""
    if not caller:
        return None
    parts = caller.split(".")
    for i in range(1, len(parts) + 1):
        d = module.defs.get(".".join(parts[:i]))
        if d is not None and d.kind != "class" and d.name.startswith("test"):
            return d
    return None


class ExerciseMap:
    """Per indexing run: the resolved calls of test-suite modules, memoised with what resolving
    them consulted (so every test file that relies on them records the same dependencies)."""

    def __init__(self, workspace: Workspace, resolver: Resolver) -> None:
        self.workspace = workspace
        self.resolver = resolver
        self._calls: dict[str, tuple[list[Resolved], frozenset[str]]] = {}
        self._fixtures: dict[str, dict[tuple[str, str], str]] = {}

    def calls_of(self, module: Module, resolved: list[Resolved] | None = None) -> list[Resolved]:
        known = self._calls.get(module.name)
        if known is not None:
            self.resolver.consulted |= known[1]
            return known[0]
        outer = self.resolver.consulted
        self.resolver.consulted = set()
        try:
            if resolved is None:
                resolved = []
                for call in module.calls:
                    if call.chain is None:
                        continue
                    found = self.resolver.chain(call.block, module.name, call.chain)
                    if isinstance(found, Target) and found.kind in CALLABLE_KINDS:
                        resolved.append(Resolved(call.caller, found, call.line))
        finally:
            seen = frozenset(self.resolver.consulted)
            self.resolver.consulted = outer | seen
        self._calls[module.name] = (resolved, seen)
        return resolved

    def edges(self, module: Module, resolved: list[Resolved]) -> dict[tuple[Target, str], list[int]]:
        """(tested definition, test qualname) -> lines in the test's file, for one test module."""
        out: dict[tuple[Target, str], list[int]] = {}
        calls = self.calls_of(module, resolved)
        by_test: dict[str, list[Resolved]] = {}
        for r in calls:
            test = enclosing_test(module, r.caller)
            if test is not None:
                by_test.setdefault(test.qualname, []).append(r)
        tests = [
            d for d in module.defs.values() if d.kind != "class" and enclosing_test(module, d.qualname) is d
        ]
        for test in tests:
            reached: dict[Target, list[int]] = {}
            seen: set[Target] = set()
            for r in by_test.get(test.qualname, ()):
                self._reach(r.target, r.line, reached, seen, 0)
            for fixture in self._requested(module, test):
                self._reach(fixture, test.def_line, reached, seen, 0)
            for setup in self._setups(module, test):
                self._reach(setup, test.def_line, reached, seen, 0)
            for chain, line in test.param_refs:
                if test.scope is None:
                    continue
                found = self.resolver.chain(test.scope, module.name, chain)
                if isinstance(found, Target) and found.kind in CALLABLE_KINDS:
                    self._reach(found, line, reached, seen, 0)
            for target, lines in reached.items():
                out.setdefault((target, test.qualname), []).extend(lines)
        return out

    # -- what a test reaches ----------------------------------------------------------------------

    def _module_of(self, target: Target) -> Module | None:
        return self.workspace.get(target.module)

    def _reach(
        self, target: Target, line: int, reached: dict[Target, list[int]], seen: set[Target], hops: int
    ) -> None:
        """Record a product target, or follow a test-suite helper (its calls, its fixtures)."""
        module = self._module_of(target)
        if module is None:
            return
        if not is_test_path(module.relpath):
            reached.setdefault(target, []).append(line)
            return
        if target in seen or hops >= HOPS or target.kind == "module":
            return
        seen.add(target)
        d = module.defs.get(target.qualname)
        if d is None or (d.kind != "class" and d.name.startswith("test")):
            return  # another test is not a helper
        prefix = f"{target.qualname}."
        for r in self.calls_of(module):
            if r.caller == target.qualname or r.caller.startswith(prefix):
                self._reach(r.target, line, reached, seen, hops + 1)
        if d.fixture is not None:
            for fixture in self._requested(module, d):
                self._reach(fixture, line, reached, seen, hops + 1)

    def _requested(self, module: Module, d: Def) -> Iterable[Target]:
        """The fixtures a test or fixture requests by parameter name."""
        params = list(d.params)
        if d.kind == "method" and params:
            params = params[1:]  # self / cls
        for name in params:
            found = self._fixture(module, d, name)
            if found is not None:
                yield found

    def _fixtures_of(self, module: Module) -> dict[tuple[str, str], str]:
        """(enclosing qualname, fixture name) -> the fixture's qualname, for one module."""
        known = self._fixtures.get(module.relpath)
        if known is None:
            known = {(f.parent, f.fixture): q for q, f in module.defs.items() if f.fixture is not None}
            self._fixtures[module.relpath] = known
        return known

    def _fixture(self, module: Module, d: Def, name: str) -> Target | None:
        own = self._fixtures_of(module)
        for scope in dict.fromkeys((d.parent, "")):
            qual = own.get((scope, name))
            if qual is not None and qual != d.qualname:
                return Target(module.defs[qual].kind, module.name, qual)
        for rel in conftests(module.relpath):
            if rel == module.relpath:
                continue
            self.resolver.consulted.add(self.workspace.name_of(rel))
            if rel not in self.workspace.by_path:
                continue
            conftest = self.workspace.parse(rel)
            qual = self._fixtures_of(conftest).get(("", name))
            if qual is not None:
                return Target(conftest.defs[qual].kind, conftest.name, qual)
        return None

    def _setups(self, module: Module, test: Def) -> Iterable[Target]:
        if test.kind != "method" or not test.parent:
            return
        cls = Target("class", module.name, test.parent)
        for name in SETUP_METHODS:
            found = self.resolver.class_member(cls, name)
            if found is not None and found.kind in ("function", "method"):
                yield found
