"""Index a repository into the code graph, incrementally, through the service's write path.

Each repository is its own unit: its entities' ids carry its name (graphctx.code.ids), so indexing,
re-indexing or removing one never touches another indexed into the same scope. The graph is
authoritative: the stored module/document entities carry the sha256 of their file, so a re-index
compares the tree with the graph alone (no side manifest). Writes go only to what differs: changed
entities, edges of changed files and of the unchanged files whose resolution consulted a changed
module. Templates cannot delete a single fact, so an entity that lost an edge is deleted and
re-created with every edge it should have — edges from other repositories included. Imports of
modules another repository in the scope provides resolve into it (graphctx.code.external).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any

from graphctx import bounds
from graphctx.code import ids
from graphctx.code.build import EVERY_MODULE, FileGraph, document_graph
from graphctx.code.frontend import FrontEnd
from graphctx.code.golang import GO_PACKAGE, GoFrontEnd
from graphctx.code.ids import document_id, file_key, module_id
from graphctx.code.interface import file_sha
from graphctx.code.layout import Layout, discover, project_name
from graphctx.code.markdown import MentionIndex, parse_markdown
from graphctx.code.python import PythonFrontEnd
from graphctx.code.report import IndexReport
from graphctx.code.repos import (
    PENDING_LAYOUT,
    RESOLUTION,
    Repository,
    list_repositories,
    repository_entity,
)
from graphctx.code.walk import SourceFile, walk
from graphctx.errors import GraphctxError, InputError, NotFound
from graphctx.garbage import fewer_collections
from graphctx.kernel.reads import batches, stored_hashes
from graphctx.kernel.stores import Stores
from graphctx.kernel.templates import (
    ENTITY_GET,
    FACT_UPSERT,
    FACTS_FROM_ROOTS,
    Direction,
    EntityGetParams,
    FactsFromRootsParams,
    FactUpsertParams,
)
from graphctx.model import EdgeKind, Entity, Fact
from graphctx.scope import Scope
from graphctx.writes import IndexSync

ENTITY_BATCH = 1000  # entity.delete / entity.get take at most 1000 ids
FACT_BATCH = 5000  # fact.upsert takes at most 5000 facts
OFFLOAD_FILES = 100
"""Files to parse from which the lexical index is written by its own process, when it offers one
(IndexSync.pipelined): starting it costs about a third of a second, more than it saves below this."""
ROOTS = 64  # fact.from_roots takes at most 64 roots ...
FACTS_PER_READ = bounds.MAX_FACTS  # ... and returns at most 80 facts
OUT_PREDICATES = (
    EdgeKind.CALLS.value,
    EdgeKind.INHERITS.value,
    EdgeKind.IMPLEMENTS.value,
    EdgeKind.IMPORTS.value,
    EdgeKind.MENTIONS.value,
    EdgeKind.EXPORTS.value,
)
EVERY_PREDICATE = (*OUT_PREDICATES, EdgeKind.TESTED_BY.value, EdgeKind.CONTAINS.value)
LEGACY_PREFIXES = ("md:", "py:")
MAX_EXCLUDES = 100
MAX_ROOTS = 100
PENDING = "sha256:pending"  # a file entity whose edges are being rewritten
PYTHON_WORKERS = 2  # processes parsing Python files ahead when index_workers is unset (at most the cores)

IndexProgress = Callable[[str, int, int], None]  # (phase, done, total)


def _entity_key(e: Entity) -> tuple[str, str]:
    # content_hash covers every indexed field; source carries the file or symbol sha256
    return (e.content_hash, e.source)


CODE_TYPES = frozenset(
    {"module", "class", "function", "method", "document", "section", "package", "file", "type"}
)


def _is_code(e: Entity, repo: str) -> bool:
    """An entity this repository's indexer wrote: a code type and a path that matches its id (a
    memory entity whose id merely looks like a code id is not code)."""
    parsed = ids.parse(e.id)
    return e.type in CODE_TYPES and parsed is not None and parsed.repo == repo and e.path == parsed.path


def _is_go_package(entity_id: str) -> bool:
    parsed = ids.parse(entity_id)
    return parsed is not None and parsed.lang == "go" and not parsed.path.endswith(".go")


def _is_legacy_code(e: Entity) -> bool:
    return e.type in CODE_TYPES and ids.is_legacy(e.id) and e.path == file_key(e.id)[3:]


def check_excludes(patterns: Sequence[str]) -> list[str]:
    if isinstance(patterns, str):
        raise InputError("exclude must be a list of patterns", field="exclude")
    bounds.check_count("exclude patterns", list(patterns), MAX_EXCLUDES)
    return [bounds.check_selector("exclude pattern", p) for p in patterns]


def check_roots(roots: Sequence[str]) -> list[str]:
    if isinstance(roots, str):
        raise InputError("roots must be a list of directories", field="roots")
    bounds.check_count("roots", list(roots), MAX_ROOTS)
    checked = [bounds.check_selector("root", r).strip() for r in roots]
    for r in checked:
        if r.startswith("/") or ".." in r.replace("\\", "/").split("/"):
            raise InputError(f"root {r[:60]!r} must be a directory inside the repository", field="roots")
    return checked


class Indexer:
    def __init__(
        self,
        stores: Stores,
        sync: IndexSync,
        progress: IndexProgress | None = None,
        *,
        workers: int | None = None,
    ) -> None:
        self.stores = stores
        self.sync = sync
        self.progress = progress
        # processes parsing files (the index_workers setting); unset: Python's parsed ahead by
        # PYTHON_WORKERS, Go's here (what measured fastest for each on two cores)
        self.py_workers = workers if workers is not None else PYTHON_WORKERS
        self.go_workers = workers if workers is not None else 1

    def _tick(self, phase: str, done: int, total: int) -> None:
        if self.progress is not None:
            self.progress(phase, done, total)

    # -- graph reads ---------------------------------------------------------------------------

    def _stored_ids(self, scope: Scope, prefixes: Sequence[str]) -> dict[str, str]:
        """Every id under the prefixes, with its content hash (id-ordered range scans)."""
        graph = self.stores.graph
        return {h.id: h.content_hash for prefix in prefixes for h in stored_hashes(graph, scope, prefix)}

    def _code_ids(self, scope: Scope, repo: str) -> tuple[dict[str, str], dict[str, Entity]]:
        """The stored entities this repository's indexer owns, and its module/document entities."""
        stored = self._stored_ids(scope, ids.prefixes(repo))
        files = self._hydrate(scope, sorted({file_key(i) for i in stored} & set(stored)))
        code_files = {i: e for i, e in files.items() if _is_code(e, repo)}
        orphans = self._hydrate(scope, [i for i in stored if file_key(i) not in code_files])
        owned = {
            i: h
            for i, h in stored.items()
            if file_key(i) in code_files or (i in orphans and _is_code(orphans[i], repo))
        }
        return owned, code_files

    def _legacy(self, scope: Scope) -> list[str]:
        """Code entities of the single-repository id scheme (`py:{path}`): the one repository a
        scope held before repositories had names."""
        found = [i for i in self._stored_ids(scope, LEGACY_PREFIXES) if ids.is_legacy(i)]
        return sorted(i for i, e in self._hydrate(scope, found).items() if _is_legacy_code(e))

    def _hydrate(self, scope: Scope, ids: Sequence[str]) -> dict[str, Entity]:
        out: dict[str, Entity] = {}
        for chunk in batches(list(ids), ENTITY_BATCH):
            got = self.stores.graph.run(ENTITY_GET, scope, EntityGetParams(ids=tuple(chunk))).entities
            out.update((e.id, e) for e in got)
        return out

    def _read_facts(
        self,
        scope: Scope,
        roots: list[str],
        predicates: tuple[str, ...],
        direction: Direction,
        weight: dict[str, int],
    ) -> tuple[list[Fact], set[str]]:
        """Facts of the roots, read in batches sized by the expected count; a batch that comes back
        cut is split, and a single root whose facts do not fit in one read is returned as `overflow`."""
        facts: list[Fact] = []
        overflow: set[str] = set()
        groups: list[list[str]] = []
        current: list[str] = []
        load = 0
        for root in roots:
            w = max(1, weight.get(root, 0))
            if current and (load + w > FACTS_PER_READ * 3 // 4 or len(current) >= ROOTS):
                groups.append(current)
                current, load = [], 0
            current.append(root)
            load += w
        if current:
            groups.append(current)
        while groups:
            batch = groups.pop()
            params = FactsFromRootsParams(
                roots=tuple(batch),
                predicates=predicates,
                direction=direction,
                include_invalid=True,
                limit=FACTS_PER_READ,
            )
            got = self.stores.graph.run(FACTS_FROM_ROOTS, scope, params)
            if not got.truncated:
                facts.extend(got.facts)
            elif len(batch) == 1:
                overflow.add(batch[0])
            else:
                half = len(batch) // 2
                groups += [batch[:half], batch[half:]]
        return facts, overflow

    # -- the run -------------------------------------------------------------------------------

    def run(
        self,
        scope: Scope,
        root: Path,
        exclude: Sequence[str],
        *,
        repo: str | None = None,
        roots: Sequence[str] = (),
    ) -> IndexReport:
        with fewer_collections():  # what a run builds lives to its end (graphctx.garbage)
            return self._run(scope, root, exclude, repo, roots)

    def _run(
        self, scope: Scope, root: Path, exclude: Sequence[str], repo: str | None, roots: Sequence[str]
    ) -> IndexReport:
        started = time.perf_counter()
        root = root.expanduser().resolve()
        report = IndexReport(root=str(root))
        walked = walk(root, exclude)
        report.skipped = [*walked.skipped_large, *walked.skipped_names]
        texts = {f.relpath: f.data for f in walked.files}
        repositories = {r.name: r for r in list_repositories(self.stores.graph, scope)}
        # unnamed, a directory indexed before keeps its repository's name: a project name found
        # later (declared since, or read by a newer graphctx) does not make it a second repository
        here = [n for n, r in repositories.items() if r.root == str(root)]
        name = (
            ids.check_repo_name(repo)
            if repo is not None
            else here[0]
            if len(here) == 1
            else ids.default_repo_name(root, project_name(texts.get))
        )
        layout, report.layout_notes = discover(sorted(texts), texts.get, check_roots(roots))
        report.repo, report.roots = name, [r.describe() for r in layout.roots]
        others = [r for n, r in repositories.items() if n != name]
        python = PythonFrontEnd(
            self.stores.graph,
            scope,
            name,
            layout,
            walked.files,
            report,
            others,
            exclude,
            self._tick,
            workers=self.py_workers,
        )
        fronts: list[FrontEnd] = [
            python,
            GoFrontEnd(name, walked.files, report, self._tick, workers=self.go_workers),
        ]
        files = {i: f for front in fronts for i, f in front.units().items()}
        files.update((document_id(name, f.relpath), f) for f in walked.files if f.kind == "md")
        self._tick("scanning", 0, len(files))
        record = repositories.get(name)
        legacy = self._legacy(scope) if not repositories else []
        stored, code_files = self._code_ids(scope, name)
        stored_files = sorted({file_key(i) for i in stored})
        shas = {i: e.source for i, e in code_files.items()}  # as stored (a module's carries its interface)
        report.layout_changed = bool(stored) and (
            record is None or record.layout != layout.fingerprint or record.resolution != RESOLUTION
        )
        changed = (
            set(files)
            if report.layout_changed
            else {i for i, f in files.items() if file_sha(shas.get(i, "")) != f.sha}
        )
        deleted = set(stored_files) - set(files)
        # the counts are of files: a Go package is a unit too, but not a file
        seen = {i for i, f in files.items() if f.kind != GO_PACKAGE}
        report.files_seen = len(seen)
        report.files_new = sum(1 for i in changed & seen if i not in shas)
        report.files_changed = len(changed & seen) - report.files_new
        report.files_deleted = sum(1 for i in deleted if not _is_go_package(i))
        report.files_unchanged = len(seen - changed)
        if not changed and not deleted and not legacy and record is not None:
            self._count_stored(report, fronts, stored)
            if record.root != str(root):  # the same repository checked out elsewhere
                self._register(scope, name, root, layout.fingerprint, layout, record)
            report.seconds = round(time.perf_counter() - started, 3)
            return report
        if legacy:
            self._delete(scope, report, legacy)
            report.legacy_removed = len(legacy)
            report.entities_deleted = 0
        # the repository is registered before any of its entities is written; a run that changes
        # names marks its layout pending, so a run that dies midway redoes every file next time
        pending = record is None or report.layout_changed
        self._register(scope, name, root, PENDING_LAYOUT if pending else layout.fingerprint, layout, record)
        for front in fronts:
            full = report.layout_changed or not any(i.startswith(f"{front.lang}:") for i in stored)
            front.begin(changed, deleted, full, shas)
        graphs = self._graphs(fronts, files, name, stored, changed)
        with self.sync.pipelined(offload=len(changed) >= OFFLOAD_FILES) as queued:
            held = self._apply(scope, report, name, fronts, graphs, stored, changed, deleted, shas)
        _add_errors(report, queued.errors)
        report.vector_skipped += len(queued.vector_skipped)
        documents = sum(1 for g in graphs.values() if g.kind == "md")
        report.files_parsed = sum(f.parsed for f in fronts) + documents
        for front in fronts:
            front.count(report, graphs if front.full else None, held)
        if python.full:
            report.documents = documents
            report.sections = sum(len(g.entities) for g in graphs.values() if g.kind == "md")
            report.edges = sum(len(g.produced) + len(g.contains) for g in graphs.values())
        else:
            self._count_documents(report, held)
        imports = python.external_imports()
        self._register(scope, name, root, layout.fingerprint, layout, record, report, imports)
        py_changes = python.changed_names
        provided = {n.split(".")[0] for n in py_changes} & layout.packages
        if provided and others:
            report.dependents = self._refresh_dependents(scope, name, py_changes, provided, exclude)
        report.seconds = round(time.perf_counter() - started, 3)
        return report

    def _graphs(
        self,
        fronts: Sequence[FrontEnd],
        files: dict[str, SourceFile],
        repo: str,
        stored: dict[str, str],
        changed: set[str],
    ) -> dict[str, FileGraph]:
        """The desired graph of what this run must look at: each language's, and the documents
        when code changed (their mentions depend on the whole symbol table)."""
        graphs: dict[str, FileGraph] = {}
        for front in fronts:
            graphs.update(front.graphs(stored, changed))
        known: dict[str, str] = {}
        for front in fronts:
            known.update(front.known(stored, graphs))
        for g in graphs.values():
            for e in [g.file_entity, *g.entities]:
                if e.qualified_name:
                    known[e.qualified_name] = e.id
        mentions = MentionIndex(known)
        code_changed = any(front.changed_names for front in fronts)
        for key, f in files.items():
            if f.kind == "md" and (code_changed or key in changed):
                graphs[key] = document_graph(parse_markdown(f.relpath, f.data), f.sha, mentions, repo)
        return graphs

    def _refresh_dependents(
        self, scope: Scope, name: str, changed: set[str], provided: set[str], exclude: Sequence[str]
    ) -> dict[str, int]:
        """Re-resolve the other repositories' files that import what this run changed, so their
        calls into it follow (a library indexed after the service that uses it). Only a repository
        whose checkout is exactly what the graph holds is touched; one with unindexed edits waits
        for its own re-index. Returns the files re-resolved per repository."""
        repositories = list_repositories(self.stores.graph, scope)
        done: dict[str, int] = {}
        for record in repositories:
            if record.name == name or not provided & set(record.imports):
                continue
            root = Path(record.root)
            if not record.root or not root.is_dir():
                continue
            try:
                walked = walk(root, exclude)
            except (GraphctxError, OSError):
                continue
            py = [f for f in walked.files if f.kind == "py"]
            layout = Layout.from_fingerprint(record.layout, [f.relpath for f in py])
            if layout is None:
                continue
            stored, code_files = self._code_ids(scope, record.name)
            files = {module_id(record.name, f.relpath): f for f in py}
            stored_py = {file_key(i) for i in stored if i.startswith("py:")}
            edited = any(file_sha(code_files[i].source) != f.sha for i, f in files.items())
            if stored_py != set(files) or edited:
                continue  # edited since it was indexed: its own re-index resolves it
            shas = {i: e.source for i, e in code_files.items()}
            report = IndexReport(root=record.root, repo=record.name)
            others = [r for r in repositories if r.name != record.name]
            python = PythonFrontEnd(
                self.stores.graph, scope, record.name, layout, py, report, others, exclude, self._tick
            )
            python.reresolve(changed)
            graphs = self._graphs([python], files, record.name, stored, set())
            if graphs:
                self._apply(scope, report, record.name, [python], graphs, stored, set(), set(), shas)
                done[record.name] = report.files_reresolved
        return done

    def _register(
        self,
        scope: Scope,
        name: str,
        root: Path,
        fingerprint: str,
        layout: Layout,
        record: Repository | None,
        report: IndexReport | None = None,
        imports: set[str] | None = None,
    ) -> None:
        """Write the repository entity when what it records changed."""
        if report is not None:
            summary = (
                f"{report.modules or 0} Python modules, {report.symbols or 0} symbols, "
                f"{report.documents or 0} Markdown documents"
            )
        else:
            summary = record.summary if record is not None else "being indexed"
        if imports is None:
            imports = set(record.imports) if record is not None else set()
        entity = repository_entity(
            name, str(root), fingerprint, sorted(layout.packages), summary, sorted(imports)
        )
        unchanged = record is not None and (
            record.root,
            record.layout,
            record.summary,
            record.resolution,
        ) == (entity.source, entity.signature, entity.summary, RESOLUTION)
        if (
            unchanged
            and record is not None
            and (set(record.packages), set(record.imports)) == (layout.packages, imports)
        ):
            return
        _, synced = self.sync.upsert_entities(scope, [entity])
        if synced.index_error and report is not None:
            report.index_errors.append(synced.index_error)

    def remove(self, scope: Scope, name: str) -> dict[str, Any]:
        """Delete a repository: every entity under its prefixes (and their edges), then its entity."""
        name = ids.check_repo_name(name)
        repositories = {r.name for r in list_repositories(self.stores.graph, scope)}
        owned = self._stored_ids(scope, ids.prefixes(name))
        if name not in repositories and not owned:
            raise NotFound(f"no repository named {name!r} in this scope", name=name)
        report = IndexReport(root="", repo=name)
        entities = self._hydrate(scope, sorted(owned))
        mine = sorted(i for i, e in entities.items() if _is_code(e, name))
        self._delete(scope, report, mine)
        self._delete(scope, report, [ids.repository_id(name)])
        return {
            "repo": name,
            "entities_deleted": report.entities_deleted,
            "index_errors": report.index_errors,
        }

    @staticmethod
    def _count_stored(report: IndexReport, fronts: Sequence[FrontEnd], stored: Collection[str]) -> None:
        for front in fronts:
            front.count(report, None, set(stored))
        Indexer._count_documents(report, stored)

    @staticmethod
    def _count_documents(report: IndexReport, stored: Collection[str]) -> None:
        report.documents = sum(1 for i in stored if i.startswith("md:") and "#" not in i)
        report.sections = sum(1 for i in stored if i.startswith("md:") and "#" in i)

    def _apply(
        self,
        scope: Scope,
        report: IndexReport,
        repo: str,
        fronts: Sequence[FrontEnd],
        graphs: dict[str, FileGraph],
        stored: dict[str, str],
        changed: set[str],
        deleted: set[str],
        shas: dict[str, str],
    ) -> set[str]:
        """Write what differs; returns the code ids the graph holds afterwards."""
        changed_modules = {n for front in fronts for n in front.changed_names}
        affected = set(changed)
        for i, g in graphs.items():
            if i in changed:
                continue
            if (EVERY_MODULE in g.consulted and changed_modules) or (g.consulted & changed_modules):
                affected.add(i)
        report.files_reresolved = len(affected - changed)
        desired = {e.id: e for g in graphs.values() for e in [g.file_entity, *g.entities]}
        gone = [i for i in stored if (file_key(i) in graphs and i not in desired) or file_key(i) in deleted]
        gone_set = set(gone)

        # entities that are new or differ from what the graph holds
        maybe = [i for g in (graphs[c] for c in changed) for i in g.owned_ids() if i in stored]
        old = self._hydrate(scope, maybe)
        write: dict[str, Entity] = {}
        for i, e in desired.items():
            if i not in stored or (i in old and _entity_key(old[i]) != _entity_key(e)):
                write[i] = e

        # edges: what the affected files yield now against what the graph holds for them
        recreate: set[str] = set()
        facts: dict[str, Fact] = {}
        for n, i in enumerate(sorted(affected), start=1):
            g = graphs[i]
            facts.update(self._fact_diff(scope, g, stored, gone_set, recreate))
            if n % 20 == 0 or n == len(affected):
                self._tick("comparing", n, len(affected))
        fresh = {i for i in desired if i not in stored} | recreate
        for key, g in graphs.items():
            # a changed child's edge carries its `def` line; a changed file's are all written again
            # (unchanged ones are no-ops), since a run that died before its edges left its entities
            # stored but not their `contains` edges
            for fact in g.contains:
                if (
                    key in changed
                    or fact.subject_id in fresh
                    or fact.object_id in fresh
                    or fact.object_id in write
                ):
                    facts[fact.id] = fact
        if recreate:
            # every edge of a re-created entity is written again, callers in unparsed files included,
            # and edges from other repositories (their files are not parsed here) are kept as they were
            for front in fronts:
                graphs.update(front.more(recreate))
            for g in graphs.values():
                for fact in g.produced.values():
                    if fact.subject_id in recreate or fact.object_id in recreate:
                        facts[fact.id] = fact
            for fact in self._foreign_edges(scope, sorted(recreate), repo):
                facts.setdefault(fact.id, fact)
            for i in recreate:
                write[i] = desired[i]
        report.entities_recreated = len(recreate)

        # writes: symbols out, entities in (files keep their old sha until the end), edges, files last
        file_ids = {i for i in gone if i == file_key(i)}
        # an unchanged file whose entities are re-created is marked changed until its edges are all
        # back, so a run that fails midway redoes it (and its callers) next time
        dirty = sorted({file_key(i) for i in recreate} - changed)
        self._upsert(
            scope, report, [graphs[i].file_entity.model_copy(update={"source": PENDING}) for i in dirty]
        )
        self._delete(scope, report, [i for i in gone if i not in file_ids] + sorted(recreate))
        first = []
        for i, e in write.items():
            keep_old_sha = i in graphs and i in changed
            first.append(e.model_copy(update={"source": shas.get(i, "")}) if keep_old_sha else e)
        self._upsert(scope, report, first)
        self.sync.send_gathered()  # indexed while the edges are written
        self._facts(scope, report, list(facts.values()))
        self._delete(scope, report, sorted(file_ids))
        self._upsert(scope, report, [graphs[i].file_entity for i in sorted({*changed, *dirty})])
        report.entities_written = len(set(write) | changed)  # the two-step file write counts once
        report.entities_deleted -= len(recreate)
        return (stored.keys() - gone_set) | desired.keys()

    def _foreign_edges(self, scope: Scope, roots: list[str], repo: str) -> list[Fact]:
        """The edges between these entities and entities that are not this repository's."""
        found: list[Fact] = []
        directions: tuple[Direction, ...] = ("out", "in")
        for direction in directions:
            facts, _ = self._read_facts(scope, roots, EVERY_PREDICATE, direction, {})
            for fact in facts:
                other = fact.object_id if direction == "out" else fact.subject_id
                parsed = ids.parse(other or "")
                if other and (parsed is None or parsed.repo != repo) and fact.valid_to is None:
                    found.append(fact)
        return found

    def _fact_diff(
        self, scope: Scope, g: FileGraph, stored: dict[str, str], gone: set[str], recreate: set[str]
    ) -> dict[str, Fact]:
        """The facts of this file to write; entities whose stale edges must go are added to recreate."""
        existing = [i for i in g.owned_ids() if i in stored]
        if not existing:
            return dict(g.produced)
        weight: dict[str, int] = {}
        tested: dict[str, int] = {}
        for fact in g.produced.values():
            if fact.predicate == EdgeKind.TESTED_BY.value:
                tested[fact.object_id or ""] = tested.get(fact.object_id or "", 0) + 1
            else:
                weight[fact.subject_id] = weight.get(fact.subject_id, 0) + 1
        old, overflow = self._read_facts(scope, existing, OUT_PREDICATES, "out", weight)
        if g.is_test:
            roots = [i for i in existing if i != g.file_id]
            more, over = self._read_facts(scope, roots, (EdgeKind.TESTED_BY.value,), "in", tested)
            old += more
            overflow |= over
        recreate |= overflow - gone
        write = {}
        held = {f.id: f for f in old}
        for fid, fact in g.produced.items():
            before = held.get(fid)
            if before is None or before.value != fact.value or before.valid_to is not None:
                write[fid] = fact
        for fid, fact in held.items():
            if fid in g.produced:
                continue
            if fact.subject_id in gone or fact.object_id in gone:
                continue  # goes with the deleted entity
            mine = fact.object_id if fact.predicate == EdgeKind.TESTED_BY.value else fact.subject_id
            if mine:
                recreate.add(mine)
        return write

    # -- batched writes through the journal ----------------------------------------------------

    def _delete(self, scope: Scope, report: IndexReport, ids: list[str]) -> None:
        for chunk in batches(ids, ENTITY_BATCH):
            result, synced = self.sync.delete_entities(scope, list(chunk))
            report.entities_deleted += result.deleted
            _add_errors(report, [synced.index_error] if synced.index_error else [])
            self._tick("deleting", len(chunk), len(ids))

    def _upsert(self, scope: Scope, report: IndexReport, entities: list[Entity]) -> None:
        done = 0
        for chunk in batches(entities, FACT_BATCH):
            _, synced = self.sync.upsert_entities(scope, list(chunk))
            report.vector_skipped += len(synced.vector_skipped)
            _add_errors(report, [synced.index_error] if synced.index_error else [])
            done += len(chunk)
            self._tick("writing symbols", done, len(entities))

    def _facts(self, scope: Scope, report: IndexReport, facts: list[Fact]) -> None:
        done = 0
        for chunk in batches(facts, FACT_BATCH):
            result = self.stores.graph.run(FACT_UPSERT, scope, FactUpsertParams(facts=tuple(chunk)))
            report.facts_written += result.created + result.updated
            done += len(chunk)
            self._tick("writing edges", done, len(facts))


def _add_errors(report: IndexReport, errors: Sequence[str]) -> None:
    """A queued index failure is reported by every write after it: each message once."""
    report.index_errors += [e for e in dict.fromkeys(errors) if e not in report.index_errors]
