"""The desired code graph of a repository: entities and facts per file, built from parsed modules
and documents (shape: /work/helpers/code-graph.md). Nothing here touches a store."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from graphctx import bounds
from graphctx.code.ids import document_id, module_id, section_id, symbol_id
from graphctx.code.interface import digest, module_source
from graphctx.code.layout import is_test_path
from graphctx.code.markdown import Document, MentionIndex
from graphctx.code.pyparse import Module
from graphctx.code.resolve import BUILTIN, Resolver, Target
from graphctx.code.testmap import ExerciseMap, Resolved
from graphctx.model import EdgeKind, Entity, Fact, code_edge_id
from graphctx.redact import redact

SOURCE = "code-index"
EVERY_MODULE = "*"  # what a document's mentions depend on: the whole symbol table
VALUE_BYTES = bounds.FACT_VALUE_BYTES - 96


def _lines_value(lines: Iterable[int]) -> str:
    text = ""
    for line in sorted(set(lines)):
        piece = f",{line}" if text else str(line)
        if len(text) + len(piece) > VALUE_BYTES:
            break
        text += piece
    return text


def edge(subject: str, predicate: EdgeKind, obj: str, lines: Iterable[int] = ()) -> Fact:
    """One edge of the code graph, its ids checked as the model checks an entity id. The rest is
    not validated again (half the cost of an edge, and an index makes one per call site): the
    predicate is an EdgeKind, the value line numbers within VALUE_BYTES (nothing to redact), the
    source a constant and the id a hash, so the model's validation could not refuse or change them."""
    for entity_id in (subject, obj):
        bounds.check_text("entity id", entity_id, bounds.ID_BYTES)
    return Fact.from_store(
        id=code_edge_id(subject, predicate.value, obj),
        subject_id=subject,
        predicate=predicate.value,
        object_id=obj,
        value=_lines_value(lines) or None,
        source=SOURCE,
    )


@dataclass
class FileGraph:
    relpath: str
    kind: str  # "py" | "md" | "go" | "gopkg"
    sha: str
    file_entity: Entity
    entities: list[Entity] = field(default_factory=list)  # symbols or sections
    produced: dict[str, Fact] = field(default_factory=dict)  # edges this file's content yields
    contains: list[Fact] = field(default_factory=list)  # structural; implied by the ids
    consulted: frozenset[str] = frozenset()
    error: str | None = None
    is_test: bool = False  # test code: its entities are the objects of the tested_by edges it yields

    @property
    def file_id(self) -> str:
        return self.file_entity.id

    def owned_ids(self) -> list[str]:
        return [self.file_entity.id, *(e.id for e in self.entities)]


@dataclass
class Stats:
    calls: int = 0
    resolved: int = 0
    unresolved: int = 0
    builtin: int = 0


def search_text(
    docstring: str, signature: str, decorators: Iterable[str], bases: Iterable[str], refs: Iterable[str]
) -> str:
    """What a searcher may type to find a definition, as indexed-only text: the whole docstring, the
    signature (parameter names and annotations), decorators, base classes and the names its body
    references. Bounded to the model's limit; redacted by the Entity like every stored text."""
    parts = [docstring.strip(), signature]
    decorators, bases = list(decorators), list(bases)
    if decorators:
        parts.append("decorators: " + " ".join(decorators))
    if bases:
        parts.append("bases: " + " ".join(bases))
    parts.append(" ".join(sorted(refs)))
    return _bounded(redact("\n".join(p for p in parts if p)), bounds.SEARCH_TEXT_BYTES)


def _bounded(text: str, limit: int) -> str:
    data = text.encode("utf-8")
    return text if len(data) <= limit else data[:limit].decode("utf-8", "ignore")


def _fits(entity_id: str) -> bool:
    return len(entity_id.encode("utf-8")) <= bounds.ID_BYTES


def module_graph(module: Module, sha: str) -> FileGraph:
    """Entities and containment of one module (no resolution yet). A decorated definition's range
    starts at its first decorator; its `contains` edge carries the `def` line."""
    rel, repo = module.relpath, module.repo
    mid = module_id(repo, rel)
    name = module.name.rpartition(".")[2] or module.name or rel
    entity = Entity(
        id=mid,
        name=name[:200],
        type="module",
        qualified_name=module.name or None,
        path=rel,
        line_start=1,
        line_end=module.lines,
        summary=module.summary,
        source=module_source(sha, digest(module)),
        search_text=search_text(module.docstring, "", (), (), module.refs.get("", ())),
    )
    graph = FileGraph(rel, "py", sha, entity, error=module.error, is_test=is_test_path(rel))
    for d in module.defs.values():
        sid = symbol_id(repo, rel, d.qualname)
        if not _fits(sid):
            continue
        qualified = f"{module.name}.{d.qualname}" if module.name else d.qualname
        graph.entities.append(
            Entity(
                id=sid,
                name=d.name,
                type=d.kind,
                aliases=(f"{rel}::{d.qualname}",),
                qualified_name=qualified,
                path=rel,
                line_start=d.start,
                line_end=max(d.start, d.end),
                signature=d.signature or None,
                summary=d.summary,
                source=d.digest,
                search_text=search_text(
                    d.docstring, d.signature, d.decorators, d.bases, module.refs.get(d.qualname, ())
                ),
            )
        )
        parent = symbol_id(repo, rel, d.parent) if d.parent else mid
        decorated = (d.def_line,) if d.def_line and d.def_line != d.start else ()
        graph.contains.append(edge(parent, EdgeKind.CONTAINS, sid, decorated))
    return graph


def resolve_module(
    module: Module, graph: FileGraph, resolver: Resolver, stats: Stats, exercises: ExerciseMap
) -> None:
    """Calls, tested_by, inherits and imports this module's content yields."""
    modules = resolver.modules
    rel, repo = module.relpath, module.repo
    resolver.consulted = set()
    calls: dict[tuple[str, str], list[int]] = {}
    resolved: list[Resolved] = []
    for call in module.calls:
        stats.calls += 1
        if call.chain is None:
            stats.unresolved += 1
            continue
        found = resolver.chain(call.block, module.name, call.chain)
        if not isinstance(found, Target) or found.kind in ("module", "instance"):
            if found is BUILTIN:
                stats.builtin += 1
            else:
                stats.unresolved += 1
            continue
        callee = _target_id(modules[found.module], found)
        caller = symbol_id(repo, rel, call.caller) if call.caller else graph.file_id
        if not (_fits(callee) and _fits(caller)):
            stats.unresolved += 1
            continue
        stats.resolved += 1
        calls.setdefault((caller, callee), []).append(call.line)
        resolved.append(Resolved(call.caller, found, call.line))
    for (caller, callee), lines in calls.items():
        fact = edge(caller, EdgeKind.CALLS, callee, lines)
        graph.produced[fact.id] = fact
    if is_test_path(rel):
        for (target, test), lines in exercises.edges(module, resolved).items():
            symbol, test_id = _target_id(modules[target.module], target), symbol_id(repo, rel, test)
            if _fits(symbol) and _fits(test_id):
                fact = edge(symbol, EdgeKind.TESTED_BY, test_id, lines)
                graph.produced[fact.id] = fact
    for cls in module.classes.values():
        sid = symbol_id(repo, rel, cls.qualname)
        for chain in cls.bases:
            base = resolver.chain(cls.scope, module.name, chain) if chain is not None else None
            if isinstance(base, Target) and base.kind == "class":
                bid = _target_id(modules[base.module], base)
                if _fits(sid) and _fits(bid) and bid != sid:
                    fact = edge(sid, EdgeKind.INHERITS, bid)
                    graph.produced[fact.id] = fact
    imported: dict[str, list[int]] = {}
    for imp in module.imports:
        for candidate in imp.targets:
            resolver.consulted.add(candidate)
            target_module = modules.get(candidate)
            if target_module is not None and candidate != module.name:
                imported.setdefault(module_id(target_module.repo, target_module.relpath), []).append(imp.line)
                break
    for target_id, lines in imported.items():
        fact = edge(graph.file_id, EdgeKind.IMPORTS, target_id, lines)
        graph.produced[fact.id] = fact
    if module.is_package or module.stars or module.all_names is not None:
        for target_id, lines in _exports(module, resolver).items():
            fact = edge(graph.file_id, EdgeKind.EXPORTS, target_id, lines)
            graph.produced[fact.id] = fact
    graph.consulted = frozenset(resolver.consulted)


def _exports(package: Module, resolver: Resolver) -> dict[str, list[int]]:
    """The definitions of other modules a package's `__init__` binds by import under their own
    names, so `pkg.get` names `pkg.api.get` (`from .api import get`, or `from .api import *`): the
    public names, or those of a literal `__all__`. A plain module re-exports what its star imports
    bind and the imports its literal `__all__` lists (a shim such as attrs' `attrs/validators.py`:
    `from attr.validators import *`), not every name it imports for its own use. A name renamed on
    import is not followed. The lookups are recorded as consulted, so a change along the way
    re-resolves the package."""
    modules = resolver.modules
    wanted = package.all_names
    imports = package.top.imports if package.is_package or wanted is not None else {}
    bound = {name: frozenset(paths) for name, paths in imports.items()}
    for star in package.stars:  # what each star import can bind, resolved like any other name
        source = modules.get(star)
        if source is not None:
            names = (
                source.all_names if source.all_names is not None else {*source.top.defs, *source.top.imports}
            )
            bound.update((n, frozenset({f"{star}.{n}"})) for n in names if n not in bound)
    out: dict[str, list[int]] = {}
    for name, paths in sorted(bound.items()):
        if (name.startswith("_") if wanted is None else name not in wanted) or name in package.top.defs:
            continue
        found = resolver.module_name(package.name, name)
        if not isinstance(found, Target) or found.module == package.name or found.module not in modules:
            continue
        target = modules[found.module]
        if found.kind == "module":
            target_id = module_id(target.repo, target.relpath)
        elif found.kind in ("class", "function", "method"):
            target_id = _target_id(target, found)
        else:
            continue
        if found.dotted.rpartition(".")[2] != name or not _fits(target_id):
            continue
        sources = paths | {p.rpartition(".")[0] for p in paths}  # a star import names its module
        out[target_id] = [imp.line for imp in package.imports if sources & set(imp.targets)][:1]
    return out


def _target_id(module: Module, target: Target) -> str:
    return symbol_id(module.repo, module.relpath, target.qualname)


def document_graph(doc: Document, sha: str, mentions: MentionIndex, repo: str) -> FileGraph:
    did = document_id(repo, doc.relpath)
    name = doc.relpath.rpartition("/")[2]
    entity = Entity(
        id=did,
        name=name[:200],
        type="document",
        path=doc.relpath,
        line_start=1,
        line_end=doc.lines,
        summary=doc.title,
        source=sha,
    )
    graph = FileGraph(doc.relpath, "md", sha, entity, consulted=frozenset({EVERY_MODULE}))
    for section in doc.sections:
        sid = section_id(repo, doc.relpath, section.slug)
        if not _fits(sid):
            continue
        graph.entities.append(
            Entity(
                id=sid,
                name=section.heading,
                type="section",
                path=doc.relpath,
                line_start=section.start,
                line_end=max(section.start, section.end),
                summary=section.summary,
                search_text=_bounded(redact("\n".join(section.text)).strip(), bounds.SEARCH_TEXT_BYTES),
            )
        )
        graph.contains.append(edge(did, EdgeKind.CONTAINS, sid))
        for target in mentions.mentions(section.text):
            fact = edge(sid, EdgeKind.MENTIONS, target)
            graph.produced[fact.id] = fact
    return graph
