"""Helpers for the indexer tests: write a repository, read what the graph and indexes hold."""

from __future__ import annotations

from pathlib import Path

from graphctx.code.indexer import EVERY_PREDICATE
from graphctx.kernel.templates import (
    ENTITY_HASHES,
    FACTS_FROM_ROOTS,
    EntityHashesParams,
    FactsFromRootsParams,
)
from graphctx.scope import Scope
from graphctx.service import ContextService


def write_repo(root: Path, files: dict[str, str | None]) -> Path:
    """Create, overwrite or (value None) delete files under root."""
    for rel, text in files.items():
        path = root / rel
        if text is None:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def graph_hashes(service: ContextService, scope: Scope) -> dict[str, str]:
    found: dict[str, str] = {}
    after = ""
    while True:
        page = service.stores.graph.run(
            ENTITY_HASHES, scope, EntityHashesParams(after=after, limit=5000)
        ).items
        if not page:
            return found
        found.update((i.id, i.content_hash) for i in page)
        after = page[-1].id


def graph_snapshot(service: ContextService, scope: Scope) -> tuple[dict[str, str], set[tuple]]:
    """Every entity id with its content hash, and every edge out of them (id, ends, value, end of
    validity): what two indexes of the same tree must agree on."""
    hashes = graph_hashes(service, scope)
    facts: set[tuple] = set()
    for root in sorted(hashes):
        got = service.stores.graph.run(
            FACTS_FROM_ROOTS,
            scope,
            FactsFromRootsParams(roots=(root,), predicates=EVERY_PREDICATE, direction="out", limit=80),
        )
        assert not got.truncated
        facts |= {(f.id, f.subject_id, f.predicate, f.object_id, f.value, f.valid_to) for f in got.facts}
    return hashes, facts


def assert_indexes_match_graph(service: ContextService, scope: Scope) -> dict[str, str]:
    """Lexical and vector indexes hold exactly the graph's entities, at the graph's content hashes."""
    graph = graph_hashes(service, scope)
    assert service.stores.lexical.hashes(scope) == graph
    assert service.stores.vector is not None
    assert service.stores.vector.hashes(scope) == graph
    assert service.status(scope)["pending_index_work"] == 0
    return graph


def edges(service: ContextService, scope: Scope, name: str, kind: str = "calls", direction: str = "out"):
    """(subject, object, value) of `kind` edges around an entity, by qualified name."""
    env = service.neighbourhood(scope, name, edge_types=[kind], direction=direction, limit=200)
    assert not env["truncated"]
    return {(e["subject"], e["object"], e.get("value")) for e in env["edges"]}


def callees(service: ContextService, scope: Scope, name: str) -> set[str]:
    return {o for s, o, _ in edges(service, scope, name) if s == name}


def callers(service: ContextService, scope: Scope, name: str) -> set[str]:
    return {s for s, o, _ in edges(service, scope, name, direction="in") if o == name}


def lexical_ids(service: ContextService, scope: Scope, text: str) -> set[str]:
    return {h.entity_id for h in service.stores.lexical.search(scope, text, 10)}
