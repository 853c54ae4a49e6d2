"""Modules of the other repositories indexed into a scope, for resolving imports across them
(a service repository calling a shared library).

A repository's entity records its root, its layout and the top-level names it provides
(graphctx.code.repos). When the repository being indexed imports a name it does not define, the
repositories that provide that top-level name are read from their roots (walked once per run,
parsed per module on demand, named with the layout they were indexed with), and a module is used
only if its file is byte-for-byte the one the graph holds for it — so an edge into another
repository always points at an entity that exists, never at code that was edited but not indexed."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from graphctx.code.ids import module_id
from graphctx.code.interface import file_sha
from graphctx.code.layout import Layout
from graphctx.code.pyparse import Module, parse_module
from graphctx.code.repos import Repository
from graphctx.code.walk import SourceFile, walk
from graphctx.errors import GraphctxError
from graphctx.kernel.ports import GraphStore
from graphctx.kernel.templates import ENTITY_GET, EntityGetParams
from graphctx.retrieval.isolation import Isolation
from graphctx.scope import Scope


class _Repo:
    def __init__(self, record: Repository, files: list[SourceFile], layout: Layout) -> None:
        self.record = record
        self.by_path = {f.relpath: f for f in files}
        self.layout = layout
        self.names = {n: r for n, r in layout.names.items() if r in self.by_path and layout.module(r).rooted}
        self.packages = {".".join(n.split(".")[:i]) for n in self.names for i in range(1, n.count(".") + 1)}


class ExternalModules:
    def __init__(
        self, graph: GraphStore, scope: Scope, others: Sequence[Repository], exclude: Sequence[str] = ()
    ) -> None:
        self.graph = graph
        self.scope = scope
        self.exclude = list(exclude)
        self.providers: dict[str, list[Repository]] = {}
        for record in others:
            for top in record.packages:
                self.providers.setdefault(top, []).append(record)
        self._repos: dict[str, _Repo | None] = {}
        self._modules: dict[str, Module | None] = {}

    def _repo(self, record: Repository) -> _Repo | None:
        if record.name not in self._repos:
            self._repos[record.name] = self._open(record)
        return self._repos[record.name]

    def _open(self, record: Repository) -> _Repo | None:
        root = Path(record.root)
        if not record.root or not root.is_dir():
            return None
        try:
            walked = walk(root, self.exclude)
        except (GraphctxError, OSError):
            return None
        py = [f for f in walked.files if f.kind == "py"]
        layout = Layout.from_fingerprint(record.layout, [f.relpath for f in py])
        return _Repo(record, py, layout) if layout is not None else None

    def _candidates(self, name: str) -> list[_Repo]:
        top = name.split(".", 1)[0]
        found = []
        for record in self.providers.get(top, ()):
            repo = self._repo(record)
            if repo is not None:
                found.append(repo)
        return found

    def get(self, name: str) -> Module | None:
        if name in self._modules:
            return self._modules[name]
        module = None
        for repo in self._candidates(name):
            rel = repo.names.get(name)
            if rel is not None and self._indexed(repo, rel):
                naming = repo.layout.module(rel)
                module = parse_module(rel, repo.by_path[rel].data, naming, None, repo.record.name)
                break
        self._modules[name] = module
        return module

    def is_package(self, name: str) -> bool:
        return any(name in repo.packages or name in repo.names for repo in self._candidates(name))

    def _indexed(self, repo: _Repo, rel: str) -> bool:
        """The file is the one the graph holds for that repository's module."""
        entity_id = module_id(repo.record.name, rel)
        got = self.graph.run(ENTITY_GET, self.scope, EntityGetParams(ids=(entity_id,))).entities
        isolation = Isolation(self.scope)
        return any(
            e.id == entity_id and isolation.admit_entity(e) and file_sha(e.source) == repo.by_path[rel].sha
            for e in got
        )
