"""The Go front end (graphctx.code.frontend): tree-sitter parsing (graphctx.code.goparse), packages
by import path (graphctx.code.golayout) and resolution across them (graphctx.code.goresolve).

Entities: a `package` per directory (qualified name: its import path), a `file` per .go file (its
build constraint as its signature), and per declaration a `function`, `method` or `type` named as
Go writes it (`net/http.(*Client).Do`, `net/http.Client`); external test packages are
`{path}_test`. Edges: contains (package → file → declaration), imports (file → package), calls,
inherits (struct and interface embedding), implements (method sets) and tested_by (`TestX`,
`BenchmarkX`, `ExampleX`, `FuzzX` in `_test.go` files, with the helpers of test files they call
followed). A declaration in a file with a build constraint carries it at the end of its signature.

Files are parsed in worker processes when the index_workers setting (GRAPHCTX_INDEX_WORKERS) asks for
them (graphctx.code.parallel: the same result, in the same order, as parsing here).

Incremental by package: a file's key is the sha256 of its bytes and its import path (a renamed
module renames its symbols). When any Go file changed, every Go file is parsed (the resolver needs
every package's declarations), but only the changed packages and the packages that import them,
directly or through others, are resolved and compared: a file's resolution can consult only its own
package and what its imports reach, so nothing else can change. A changed package that declares an
interface re-resolves everything (which types implement it is decided across all packages). The
indexer writes only what differs: the changed files, and the resolved ones whose resolution
consulted a changed package."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from graphctx.code import ids
from graphctx.code.build import FileGraph, Stats, edge, search_text
from graphctx.code.golayout import GoLayout, package_dir
from graphctx.code.goparse import GoFile, parse_go
from graphctx.code.goresolve import (
    AMBIGUOUS,
    BUILTIN,
    DYNAMIC,
    EXTERNAL,
    FUNCTION_VALUE,
    TEST_NAME,
    Def,
    Found,
    GoResolver,
    Implementations,
    Target,
    is_external_test,
    is_test_func,
)
from graphctx.code.parallel import parallel_map
from graphctx.code.report import IndexReport
from graphctx.code.summary import first_line
from graphctx.code.walk import SourceFile
from graphctx.model import EdgeKind, Entity

Tick = Callable[[str, int, int], None]
GO_PACKAGE = "gopkg"  # the walk-less unit kind of a package (its sha covers its files')
INTERFACES = "go:interfaces"  # consulted by every file with types or methods; changed with any interface
HOPS = 3  # test-file helpers followed this deep (as for Python)
KINDS = {"function": "function", "method": "method", "type": "type"}


def _parse(item: tuple[str, bytes]) -> GoFile:
    return parse_go(*item)


@dataclass(frozen=True, slots=True)
class _Resolved:
    caller: str  # member; "" = file level
    target: Def
    line: int


class GoFrontEnd:
    lang = "go"

    def __init__(
        self, repo: str, files: Iterable[SourceFile], report: IndexReport, tick: Tick, *, workers: int = 1
    ) -> None:
        self.repo = repo
        self.workers = workers
        self.report = report
        self._tick = tick
        every = list(files)
        self.sources = {f.relpath: f for f in every if f.kind == "go" and package_dir(f.relpath) is not None}
        mods = {f.relpath: f.data for f in every if f.kind == "gomod"}
        self.layout = GoLayout(self.sources, mods)
        self.stats = Stats()
        self.why: dict[str, int] = {}
        self.full = True
        self.go_changes: set[str] = set()
        self.done: dict[str, FileGraph] = {}
        self._parsed = 0
        self._implements: dict[tuple[str, str], list[Def]] = {}
        self._targets: set[str] | None = None  # the directories resolved; None: all of them
        self._partial = True  # an incremental run may resolve only what its changes can reach
        self._resolved = 0  # files resolved by this run
        self._units = self._make_units()

    # -- units ----------------------------------------------------------------------------------

    def _path_of(self, directory: str) -> str:
        return self.layout.dirs.get(directory) or self.layout.import_path(directory)

    def _make_units(self) -> dict[str, SourceFile]:
        units: dict[str, SourceFile] = {}
        members: dict[str, list[str]] = {}
        for rel, f in sorted(self.sources.items()):
            d = rel.rpartition("/")[0]
            key = hashlib.sha256(f.data + b"\0" + self._path_of(d).encode()).hexdigest()
            unit = SourceFile(rel, "go", f.data, "sha256:" + key)
            units[ids.go_id(self.repo, rel)] = unit
            members.setdefault(d, []).append(f"{rel}={unit.sha}")
        for d, parts in members.items():
            key = hashlib.sha256("\n".join([self._path_of(d), *parts]).encode()).hexdigest()
            units[ids.go_id(self.repo, d or ".")] = SourceFile(d or ".", GO_PACKAGE, b"", "sha256:" + key)
        return units

    def units(self) -> dict[str, SourceFile]:
        return self._units

    def begin(self, changed: set[str], deleted: set[str], full: bool, sources: Mapping[str, str]) -> None:
        self.full = full
        for i in changed | deleted:
            parsed = ids.parse(i)
            if parsed is None or parsed.lang != "go":
                continue
            d = parsed.path.rpartition("/")[0] if parsed.path.endswith(".go") else parsed.path
            self.go_changes.add(self._path_of("" if d == "." else d))

    @property
    def changed_names(self) -> set[str]:
        return self.go_changes

    @property
    def parsed(self) -> int:
        return self._parsed

    def graphs(self, stored: dict[str, str], changed: set[str]) -> dict[str, FileGraph]:
        if self.full or self.go_changes:
            self._build()
        return self.done

    def more(self, entity_ids: set[str]) -> dict[str, FileGraph]:
        """Every unit whose edges can reach these entities: their packages' importers, which a
        partial run resolved already (the entities it re-creates are its own); anything else
        re-resolves everything."""
        mine = [ids.parse(i) for i in entity_ids if i.startswith("go:")]
        dirs = {p.path.rpartition("/")[0] if p.path.endswith(".go") else p.path for p in mine if p}
        if self._targets is not None and {"" if d == "." else d for d in dirs} - self._targets:
            self.done, self._targets, self._partial = {}, None, False
        if not self.done and mine:
            self._build()
        return self.done

    def known(self, stored: dict[str, str], done: dict[str, FileGraph]) -> dict[str, str]:
        known: dict[str, str] = {}
        for i in stored:
            parsed = ids.parse(i)
            if parsed is None or parsed.lang != "go" or ids.file_key(i) in done:
                continue
            if not parsed.path.endswith(".go"):
                known[self._path_of("" if parsed.path == "." else parsed.path)] = i
            elif parsed.member:
                known[f"{self._path_of(parsed.path.rpartition('/')[0])}.{parsed.member}"] = i
        return known

    def count(self, report: IndexReport, graphs: dict[str, FileGraph] | None, stored: set[str]) -> None:
        if graphs is None:
            mine = [i for i in stored if i.startswith("go:")]
            files = sum(1 for i in mine if "::" not in i and i.endswith(".go"))
            counts = {
                "packages": sum(1 for i in mine if "::" not in i) - files,
                "files": files,
                "symbols": sum(1 for i in mine if "::" in i),
            }
        else:
            kinds = [g for g in graphs.values() if g.kind in ("go", GO_PACKAGE)]
            counts = {
                "packages": sum(1 for g in kinds if g.kind == GO_PACKAGE),
                "files": sum(1 for g in kinds if g.kind == "go"),
                "symbols": sum(len(g.entities) for g in kinds),
                "calls": self.stats.calls,
                "resolved_calls": self.stats.resolved,
                "unresolved_calls": self.stats.unresolved,
                "builtin_calls": self.stats.builtin,
                **self.why,
                "constrained_files": sum(1 for g in kinds if g.kind == "go" and g.file_entity.signature),
            }
        if counts["files"] or counts["packages"]:
            # a run that parsed Go says how many files it resolved (an incremental one: what its
            # changes reach)
            report.languages["go"] = {**counts, "files_resolved": self._resolved} if self._parsed else counts

    # -- the build ------------------------------------------------------------------------------

    def _build(self) -> None:
        if self.done:
            return
        total = len(self.sources)
        items = sorted(self.sources.items())
        parsed = parallel_map(
            _parse,
            [(rel, f.data) for rel, f in items],
            [len(f.data) for _, f in items],
            lambda n: self._tick("parsing", n, total),
            workers=self.workers,
        )
        for go in parsed:
            if go.error:
                self.report.parse_errors.append(f"{go.relpath}: {go.error}")
        self._parsed = len(parsed)
        resolver = GoResolver(parsed, self.layout)
        self._implements = Implementations(resolver).compute()
        changed_interfaces = any(
            d.interface
            for go in parsed
            if (own := resolver.package_of(go)) is not None and own.path in self.go_changes
            for d in go.defs.values()
        )
        if changed_interfaces:
            # which types implement an interface may change with it, and a file's stale implements
            # edge is found only when the file is compared again: every file with types or methods is
            self.go_changes.add(INTERFACES)
        if self._partial and not self.full and not changed_interfaces:
            self._targets = self._importers(parsed, self.go_changes)
            parsed = [go for go in parsed if go.relpath.rpartition("/")[0] in self._targets]
            total = len(parsed)
        self._resolved = len(parsed)
        resolved: dict[str, list[_Resolved]] = {}
        consulted: dict[str, frozenset[str]] = {}
        for n, go in enumerate(parsed, start=1):
            resolver.consulted = set()
            resolved[go.relpath] = self._resolve_calls(resolver, go)
            own = resolver.package_of(go)
            consulted[go.relpath] = frozenset(resolver.consulted | ({own.path} if own else set()))
            if n % 200 == 0 or n == total:
                self._tick("resolving", n, total)
        by_caller: dict[tuple[str, str], list[_Resolved]] = {}  # calls made in test files
        for rel, found in resolved.items():
            if rel.endswith("_test.go"):
                for r in found:
                    by_caller.setdefault((rel, r.caller), []).append(r)
        for go in parsed:
            resolver.consulted = set(consulted[go.relpath])
            graph = self._file_graph(resolver, go, resolved[go.relpath])
            if go.is_test:
                self._tests(go, by_caller, graph)
            self.done[ids.go_id(self.repo, go.relpath)] = graph
        self._package_graphs(resolver, self._targets)

    def _importers(self, parsed: list[GoFile], paths: set[str]) -> set[str]:
        """The directories of the packages with these import paths and of every package that
        imports one of them, directly or through others (test files' imports included)."""
        path_of: dict[str, str] = {}
        importers: dict[str, set[str]] = {}  # import path -> directories importing it
        for go in parsed:
            d = go.relpath.rpartition("/")[0]
            path_of.setdefault(d, self._path_of(d))
            for imp in go.imports:
                found = self.layout.resolve_import(d, imp.path)
                for p in {imp.path, self._path_of(found) if found is not None else imp.path}:
                    importers.setdefault(p, set()).add(d)
        reached = set(paths)
        dirs = {d for d, p in path_of.items() if p in reached}
        frontier = [path_of[d] for d in dirs] + sorted(reached)
        while frontier:
            for d in importers.get(frontier.pop(), ()):
                if d not in dirs:
                    dirs.add(d)
                    if path_of[d] not in reached:
                        reached.add(path_of[d])
                        frontier.append(path_of[d])
        return dirs

    def _resolve_calls(self, resolver: GoResolver, go: GoFile) -> list[_Resolved]:
        out: list[_Resolved] = []
        for call in go.calls:
            self.stats.calls += 1
            found: Found
            if call.chain is None:
                found = FUNCTION_VALUE if call.literal else None
            else:
                try:
                    found = resolver.chain(call.chain, go, call.locals, at=call.at)
                except RecursionError:  # bounded everywhere; this is the last line of defence
                    found = None
            if isinstance(found, Target) and found.kind in ("function", "method") and found.where is not None:
                self.stats.resolved += 1
                out.append(_Resolved(call.caller, found.where, call.line))
                continue
            if isinstance(found, Target) and found.kind == "type":
                self._count("conversions")
                self.stats.calls -= 1  # a conversion is not a call
            elif isinstance(found, Target) and found.kind in ("value", "func_value", "func_literal"):
                self._count("function_values")  # a value of a named function type
                self.stats.unresolved += 1
            elif found is BUILTIN:
                self.stats.builtin += 1
            elif found in (FUNCTION_VALUE, DYNAMIC, EXTERNAL, AMBIGUOUS):
                self._count({"function_value": "function_values"}.get(repr(found), repr(found)))
                self.stats.unresolved += 1
            else:
                self.stats.unresolved += 1
        return out

    def _count(self, key: str) -> None:
        self.why[key] = self.why.get(key, 0) + 1

    def _id(self, where: Def) -> str:
        return ids.go_id(self.repo, where.rel, where.member)

    def _file_graph(self, resolver: GoResolver, go: GoFile, resolved: list[_Resolved]) -> FileGraph:
        rel = go.relpath
        unit = self._units[ids.go_id(self.repo, rel)]
        pkg = resolver.package_of(go)
        path = pkg.path if pkg is not None else self._path_of(rel.rpartition("/")[0])
        fid = ids.go_id(self.repo, rel)
        constraint = go.constraint.text
        entity = Entity(
            id=fid,
            name=rel.rpartition("/")[2],
            type="file",
            aliases=(rel,),  # a file is named by its path
            path=rel,
            line_start=1,
            line_end=go.lines,
            signature=constraint or None,
            summary=f"package {go.package}" if go.package else "",
            source=unit.sha,
        )
        graph = FileGraph(rel, "go", unit.sha, entity, error=go.error)
        short = go.package or path.rpartition("/")[2]
        for d in go.defs.values():
            sid = ids.go_id(self.repo, rel, d.member)
            signature = f"{d.signature}  {constraint}" if constraint else d.signature
            aliases = [f"{rel}::{d.member}", f"{short}.{d.member}"]
            if d.kind == "method" and d.pointer:
                aliases.append(f"{path}.{d.receiver}.{d.name}")
            bases = [e.name for e in d.embedded]
            graph.entities.append(
                Entity(
                    id=sid,
                    name=d.name,
                    type=KINDS[d.kind],
                    aliases=tuple(aliases),
                    qualified_name=f"{path}.{d.member}",
                    path=rel,
                    line_start=d.start,
                    line_end=max(d.start, d.end),
                    signature=signature or None,
                    summary=d.summary,
                    source=d.digest,
                    search_text=search_text(d.doc, signature, (), bases, ()),
                )
            )
            graph.contains.append(edge(fid, EdgeKind.CONTAINS, sid))
        calls: dict[tuple[str, str], list[int]] = {}
        for r in resolved:
            caller = ids.go_id(self.repo, rel, r.caller) if r.caller else fid
            calls.setdefault((caller, self._id(r.target)), []).append(r.line)
        for (caller, callee), lines in calls.items():
            fact = edge(caller, EdgeKind.CALLS, callee, lines)
            graph.produced[fact.id] = fact
        for d in go.defs.values():
            if d.kind != "type":
                continue
            for e in d.embedded:
                base = resolver.type_target(e, go, None)
                if isinstance(base, Target) and base.where is not None:
                    fact = edge(ids.go_id(self.repo, rel, d.member), EdgeKind.INHERITS, self._id(base.where))
                    graph.produced[fact.id] = fact
        if any(d.kind in ("method", "type") for d in go.defs.values()):
            resolver.consulted.add(INTERFACES)
        if pkg is not None:
            for d in go.defs.values():
                for iface in self._implements.get((pkg.key, d.name), []) if d.kind == "type" else []:
                    resolver.consulted.add(resolver.packages[iface.package].path)
                    fact = edge(ids.go_id(self.repo, rel, d.member), EdgeKind.IMPLEMENTS, self._id(iface))
                    graph.produced[fact.id] = fact
        imported: dict[str, list[int]] = {}
        importer = rel.rpartition("/")[0]
        for imp in go.imports:
            d_ = self.layout.resolve_import(importer, imp.path)
            if d_ is not None and d_ in resolver.by_dir:
                resolver.consulted.add(resolver.by_dir[d_])
                imported.setdefault(ids.go_id(self.repo, d_ or "."), []).append(imp.line)
        for target, lines in imported.items():
            fact = edge(fid, EdgeKind.IMPORTS, target, lines)
            graph.produced[fact.id] = fact
        graph.consulted = frozenset(resolver.consulted)
        graph.is_test = go.is_test
        return graph

    def _tests(self, go: GoFile, by_caller: dict[tuple[str, str], list[_Resolved]], graph: FileGraph) -> None:
        """tested_by edges: what each test calls, and what the test-file helpers it calls reach."""
        for d in go.defs.values():
            if not is_test_func(go, d):
                continue
            reached: dict[Def, list[int]] = {}
            seen: set[Def] = set()
            for r in by_caller.get((go.relpath, d.member), ()):
                self._reach(r.target, r.line, reached, seen, by_caller, 0)
            test_id = ids.go_id(self.repo, go.relpath, d.member)
            for target, lines in reached.items():
                fact = edge(self._id(target), EdgeKind.TESTED_BY, test_id, lines)
                graph.produced[fact.id] = fact

    def _reach(
        self,
        target: Def,
        line: int,
        reached: dict[Def, list[int]],
        seen: set[Def],
        by_caller: dict[tuple[str, str], list[_Resolved]],
        hops: int,
    ) -> None:
        if not target.rel.endswith("_test.go"):
            reached.setdefault(target, []).append(line)
            return
        if target in seen or hops >= HOPS:
            return
        seen.add(target)
        name = target.member.rpartition(".")[2]
        if "." not in target.member and TEST_NAME.match(name):
            return  # another test is not a helper
        for r in by_caller.get((target.rel, target.member), ()):
            self._reach(r.target, line, reached, seen, by_caller, hops + 1)

    def _package_graphs(self, resolver: GoResolver, targets: set[str] | None) -> None:
        by_dir: dict[str, list[GoFile]] = {}
        for f in resolver.files.values():
            d = f.relpath.rpartition("/")[0]
            if targets is None or d in targets:
                by_dir.setdefault(d, []).append(f)
        for d, files in sorted(by_dir.items()):
            key = d or "."
            pid = ids.go_id(self.repo, key)
            unit = self._units[pid]
            own = [f for f in files if not is_external_test(f)] or files
            names = sorted({f.package for f in own if f.package})
            docs = [
                f.doc
                for f in sorted(own, key=lambda f: (not f.relpath.endswith("/doc.go"), f.relpath))
                if f.doc
            ]
            doc = docs[0] if docs else ""
            entity = Entity(
                id=pid,
                name=names[0] if names else key.rpartition("/")[2],
                type="package",
                qualified_name=self._path_of(d),
                path=key,
                summary=first_line(doc),
                source=unit.sha,
                search_text=search_text(doc, "", (), (), ()),
            )
            graph = FileGraph(key, GO_PACKAGE, unit.sha, entity, consulted=frozenset({self._path_of(d)}))
            for f in sorted(files, key=lambda f: f.relpath):
                graph.contains.append(edge(pid, EdgeKind.CONTAINS, ids.go_id(self.repo, f.relpath)))
            self.done[pid] = graph
