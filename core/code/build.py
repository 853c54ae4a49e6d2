"""The desired code graph of a repository: entities and facts per file, built from parsed modules
and documents (shape: /work/helpers/code-graph.md). Nothing here touches a store."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from graphctx import bounds
from graphctx.code.markdown import Document, MentionIndex
from graphctx.code.pyparse import Module
from graphctx.code.resolve import BUILTIN, Resolver, Target
from graphctx.model import EdgeKind, Entity, Fact, stable_hash
from graphctx.redact import redact

SOURCE = "code-index"
EVERY_MODULE = "*"  # what a document's mentions depend on: the whole symbol table
VALUE_BYTES = bounds.FACT_VALUE_BYTES - 96
TEST_DIRS = frozenset({"test", "tests"})


def module_id(relpath: str) -> str:
    return f"py:{relpath}"


def symbol_id(relpath: str, qualname: str) -> str:
    return f"py:{relpath}::{qualname}"


def document_id(relpath: str) -> str:
    return f"md:{relpath}"


def section_id(relpath: str, slug: str) -> str:
    return f"md:{relpath}#{slug}"


def file_key(entity_id: str) -> str:
    """The id of the module/document entity a code entity belongs to."""
    if entity_id.startswith("py:"):
        return entity_id.split("::", 1)[0]
    return entity_id.split("#", 1)[0]


def is_test_file(relpath: str) -> bool:
    parts = relpath.split("/")
    name = parts[-1]
    return name.startswith("test_") or name.endswith("_test.py") or any(p in TEST_DIRS for p in parts[:-1])


def edge_id(subject: str, predicate: str, obj: str) -> str:
    return "e_" + stable_hash(subject, predicate, obj)


def _lines_value(lines: Iterable[int]) -> str:
    text = ""
    for line in sorted(set(lines)):
        piece = f",{line}" if text else str(line)
        if len(text) + len(piece) > VALUE_BYTES:
            break
        text += piece
    return text


def edge(subject: str, predicate: EdgeKind, obj: str, lines: Iterable[int] = ()) -> Fact:
    value = _lines_value(lines) or None
    return Fact(
        id=edge_id(subject, predicate.value, obj),
        subject_id=subject,
        predicate=predicate.value,
        object_id=obj,
        value=value,
        source=SOURCE,
    )


@dataclass
class FileGraph:
    relpath: str
    kind: str  # "py" | "md"
    sha: str
    file_entity: Entity
    entities: list[Entity] = field(default_factory=list)  # symbols or sections
    produced: dict[str, Fact] = field(default_factory=dict)  # edges this file's content yields
    contains: list[Fact] = field(default_factory=list)  # structural; implied by the ids
    consulted: frozenset[str] = frozenset()
    error: str | None = None

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
    """Entities and containment of one module (no resolution yet)."""
    rel = module.relpath
    mid = module_id(rel)
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
        source=sha,
        search_text=search_text(module.docstring, "", (), (), module.refs.get("", ())),
    )
    graph = FileGraph(rel, "py", sha, entity, error=module.error)
    for d in module.defs.values():
        sid = symbol_id(rel, d.qualname)
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
        parent = symbol_id(rel, d.parent) if d.parent else mid
        graph.contains.append(edge(parent, EdgeKind.CONTAINS, sid))
    return graph


def resolve_module(module: Module, graph: FileGraph, resolver: Resolver, stats: Stats) -> None:
    """Calls, tested_by, inherits and imports this module's content yields."""
    modules = resolver.modules
    rel = module.relpath
    resolver.consulted = set()
    testing = is_test_file(rel)
    calls: dict[tuple[str, str], list[int]] = {}
    tests: dict[tuple[str, str], list[int]] = {}
    for call in module.calls:
        stats.calls += 1
        if call.chain is None:
            stats.unresolved += 1
            continue
        found = resolver.chain(call.block, module.name, call.chain)
        if not isinstance(found, Target) or found.kind == "module":
            if found is BUILTIN:
                stats.builtin += 1
            else:
                stats.unresolved += 1
            continue
        target_rel = modules[found.module].relpath
        callee = symbol_id(target_rel, found.qualname)
        caller = symbol_id(rel, call.caller) if call.caller else graph.file_id
        if not (_fits(callee) and _fits(caller)):
            stats.unresolved += 1
            continue
        stats.resolved += 1
        calls.setdefault((caller, callee), []).append(call.line)
        if testing and not is_test_file(target_rel):
            test = _test_def(module, call.caller)
            if test is not None:
                tests.setdefault((callee, symbol_id(rel, test)), []).append(call.line)
    for (caller, callee), lines in calls.items():
        fact = edge(caller, EdgeKind.CALLS, callee, lines)
        graph.produced[fact.id] = fact
    for (symbol, test), lines in tests.items():
        fact = edge(symbol, EdgeKind.TESTED_BY, test, lines)
        graph.produced[fact.id] = fact
    for cls in module.classes.values():
        sid = symbol_id(rel, cls.qualname)
        for chain in cls.bases:
            base = resolver.chain(cls.scope, module.name, chain) if chain is not None else None
            if isinstance(base, Target) and base.kind == "class":
                bid = symbol_id(modules[base.module].relpath, base.qualname)
                if _fits(sid) and _fits(bid) and bid != sid:
                    fact = edge(sid, EdgeKind.INHERITS, bid)
                    graph.produced[fact.id] = fact
    imported: dict[str, list[int]] = {}
    for imp in module.imports:
        for candidate in imp.targets:
            resolver.consulted.add(candidate)
            if candidate in modules and candidate != module.name:
                imported.setdefault(module_id(modules[candidate].relpath), []).append(imp.line)
                break
    for target, lines in imported.items():
        fact = edge(graph.file_id, EdgeKind.IMPORTS, target, lines)
        graph.produced[fact.id] = fact
    graph.consulted = frozenset(resolver.consulted)


def _test_def(module: Module, caller: str) -> str | None:
    """The outermost test function or method a call site sits in."""
    if not caller:
        return None
    parts = caller.split(".")
    for i in range(1, len(parts) + 1):
        d = module.defs.get(".".join(parts[:i]))
        if d is not None and d.kind != "class" and d.name.startswith("test"):
            return d.qualname
    return None


def document_graph(doc: Document, sha: str, mentions: MentionIndex) -> FileGraph:
    did = document_id(doc.relpath)
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
        sid = section_id(doc.relpath, section.slug)
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
