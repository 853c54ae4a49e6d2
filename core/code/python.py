"""The Python front end (graphctx.code.frontend): `ast` parsing (graphctx.code.pyparse), names
from the import roots (graphctx.code.layout), resolution across modules (graphctx.code.resolve) and
tests (graphctx.code.testmap).

Incremental: on a first index (or a changed layout) every file; otherwise the changed files, the
unchanged modules a change can reach (and what resolving them consults)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from graphctx.code import ids
from graphctx.code.build import FileGraph, Stats, module_graph, resolve_module
from graphctx.code.external import ExternalModules
from graphctx.code.ids import file_key, module_id
from graphctx.code.interface import digest, stored_digest
from graphctx.code.layout import Layout, is_test_path
from graphctx.code.pyparse import Module
from graphctx.code.report import IndexReport
from graphctx.code.repos import Repository
from graphctx.code.resolve import Resolver
from graphctx.code.testmap import ExerciseMap
from graphctx.code.walk import SourceFile
from graphctx.code.workspace import Workspace, reachable_from
from graphctx.kernel.ports import GraphStore
from graphctx.scope import Scope

Tick = Callable[[str, int, int], None]


class PythonFrontEnd:
    lang = "py"

    def __init__(
        self,
        graph: GraphStore,
        scope: Scope,
        repo: str,
        layout: Layout,
        files: Iterable[SourceFile],
        report: IndexReport,
        others: Sequence[Repository],
        exclude: Sequence[str],
        tick: Tick,
        *,
        workers: int = 1,
    ) -> None:
        self.repo = repo
        self.workers = workers  # processes parsing ahead (the index_workers setting)
        self.layout = layout
        self.report = report
        self._tick = tick
        self.files = {module_id(repo, f.relpath): f for f in files if f.kind == "py"}
        self.py_changes: set[str] = set()
        self.full = True
        self._deleted: set[str] = set()
        self._sources: Mapping[str, str] = {}
        externals = ExternalModules(graph, scope, others, exclude) if others else None
        self.workspace = Workspace(list(self.files.values()), layout, repo, self._parsed, externals)
        self.resolver = Resolver(self.workspace)
        self.exercises = ExerciseMap(self.workspace, self.resolver)
        self.stats = Stats()
        self.done: dict[str, FileGraph] = {}
        self._total = len(self.workspace.by_path)

    # -- the front-end interface ------------------------------------------------------------------

    def units(self) -> dict[str, SourceFile]:
        return self.files

    def begin(self, changed: set[str], deleted: set[str], full: bool, sources: Mapping[str, str]) -> None:
        self.py_changes = {self.name_of(i) for i in changed | deleted if i.startswith("py:")}
        self.full = full
        self._deleted = {self.name_of(i) for i in deleted if i.startswith("py:")}
        self._sources = sources

    def reresolve(self, names: set[str]) -> None:
        """A run for another repository's change: re-resolve what can reach these module names."""
        self.py_changes, self.full = set(names), False

    @property
    def changed_names(self) -> set[str]:
        return self.py_changes

    @property
    def parsed(self) -> int:
        return self.workspace.parsed_count

    def graphs(self, stored: dict[str, str], changed: set[str]) -> dict[str, FileGraph]:
        if self.full:
            targets = sorted(self.workspace.by_path)
        else:
            self.py_changes -= self._same_interface(changed)
            reach = (
                reachable_from(self.py_changes, self.workspace, self.resolver) if self.py_changes else set()
            )
            targets = sorted(
                {self.files[i].relpath for i in changed if i in self.files}
                | {self.workspace.files[n].relpath for n in reach}
            )
        self.add(targets)
        return self.done

    def _same_interface(self, changed: set[str]) -> set[str]:
        """The changed modules whose edit kept their interface (graphctx.code.interface): a body
        changed. Each is re-resolved itself, but no other module can see the change. A new or
        deleted module, a test-suite module and one stored without a digest are not among them."""
        judged: list[tuple[str, str]] = []  # (relpath, stored digest)
        for i in sorted(changed):
            f = self.files.get(i)
            stored = stored_digest(self._sources.get(i, ""))
            if f is not None and stored is not None and not is_test_path(f.relpath):
                judged.append((f.relpath, stored))
        same: set[str] = set()
        # parsed ahead as `add` parses its files: a large edit is not parsed here one file at a time
        self.workspace.parse_ahead([rel for rel, _ in judged], self.workers)
        try:
            for rel, stored in judged:
                module = self.workspace.parse(rel)
                if self.workspace.owns(module) and not module.error and digest(module) == stored:
                    same.add(module.name)
        finally:
            self.workspace.end_ahead()
        return same - self._deleted

    def more(self, entity_ids: set[str]) -> dict[str, FileGraph]:
        """Add the graphs of the files whose resolution can reach these entities' modules."""
        if self.full:
            return self.done
        modules = {self.name_of(i) for i in entity_ids if i.startswith("py:")}
        names = reachable_from(modules, self.workspace, self.resolver) | modules
        self.add(sorted(self.workspace.files[n].relpath for n in names if n in self.workspace.files))
        return self.done

    def known(self, stored: dict[str, str], done: dict[str, FileGraph]) -> dict[str, str]:
        """Qualified name -> id of every module and symbol: parsed files from their graphs, the
        others from their stored ids (which spell path and qualname)."""
        known: dict[str, str] = {}
        for i in stored:
            if not i.startswith("py:") or file_key(i) in done or file_key(i) not in self.files:
                continue
            parsed = ids.parse(i)
            if parsed is None:
                continue
            name = self.layout.module(parsed.path).name
            qual = parsed.member
            known[f"{name}.{qual}" if qual and name else qual or name] = i
        return known

    def count(self, report: IndexReport, graphs: dict[str, FileGraph] | None, stored: set[str]) -> None:
        if graphs is None:
            report.modules = sum(1 for i in stored if i.startswith("py:") and "::" not in i)
            report.symbols = sum(1 for i in stored if i.startswith("py:") and "::" in i)
            return
        mine = [g for g in graphs.values() if g.kind == "py"]
        report.modules = len(mine)
        report.symbols = sum(len(g.entities) for g in mine)
        report.calls, report.resolved_calls = self.stats.calls, self.stats.resolved
        report.unresolved_calls, report.builtin_calls = self.stats.unresolved, self.stats.builtin

    # -- Python's own ---------------------------------------------------------------------------

    def external_imports(self) -> set[str]:
        """Top-level names this repository's files import that none of its files define."""
        mine = {n.split(".")[0] for n in self.layout.names}
        return {n.split(".")[0] for n in self.workspace.importers} - mine - {""}

    def name_of(self, entity_id: str) -> str:
        """The module name of a Python entity's file."""
        return self.layout.module(file_key(entity_id).split(":", 2)[2]).name

    def _parsed(self, module: Module) -> None:
        if module.error:
            self.report.parse_errors.append(f"{module.relpath}: {module.error}")
        count = self.workspace.parsed_count
        if count % 50 == 0:
            self._tick("parsing", count, self._total)

    def add(self, relpaths: Iterable[str]) -> None:
        todo = [r for r in relpaths if module_id(self.repo, r) not in self.done]
        self.workspace.parse_ahead(todo, self.workers)
        try:
            for n, rel in enumerate(todo, start=1):
                module = self.workspace.parse(rel)
                graph = module_graph(module, self.workspace.by_path[rel].sha)
                if self.workspace.owns(module):
                    resolve_module(module, graph, self.resolver, self.stats, self.exercises)
                self.done[module_id(self.repo, rel)] = graph
                if n % 50 == 0 or n == len(todo):
                    self._tick("resolving", n, len(todo))
        finally:
            self.workspace.end_ahead()
