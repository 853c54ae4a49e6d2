"""Repositories as units of a code graph: one `repository` entity per indexed repository, whose
id prefixes (graphctx.code.ids) enumerate its modules, symbols, documents and sections.

The entity records what a later run needs: the root it was indexed from (its `source`), the layout
its qualified names were computed with (`signature`; a changed layout renames modules, so the next
run redoes every file), the top-level import names it provides and those it imports from elsewhere
(indexed-only `search_text`): how another repository's imports find it, and which repositories to
re-resolve when one they import from changes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from graphctx.code.ids import REPO_PREFIX, repository_id
from graphctx.kernel.ports import GraphStore
from graphctx.kernel.reads import batches, stored_hashes
from graphctx.kernel.templates import ENTITY_GET, EntityGetParams
from graphctx.model import Entity, NodeKind
from graphctx.retrieval.isolation import Isolation
from graphctx.scope import Scope

PENDING_LAYOUT = "layout: pending"  # written before a run that changes names, replaced after it
_PACKAGES = "packages:"
_IMPORTS = "imports:"
_RESOLUTION = "resolution:"
MAX_IMPORTS = 1000
RESOLUTION = "3"
"""The indexer's resolution rules (2: `exports` edges, `from a.b import c` reads the module a.b; 3:
plain modules' star and `__all__` re-exports, every name of a chained assignment `a = b = f`, and
the signatures of files in another encoding than UTF-8):
a repository recorded with other rules has every file redone at its next index, as a changed
layout has, so an upgrade does not leave edges of the old rules on unchanged files."""


@dataclass(frozen=True)
class Repository:
    name: str
    root: str  # the directory it was last indexed from
    layout: str  # the layout fingerprint its names were computed with (PENDING_LAYOUT mid-run)
    packages: tuple[str, ...]  # top-level import names it provides
    summary: str
    imports: tuple[str, ...] = ()  # top-level names it imports that it does not define itself
    resolution: str = ""  # the RESOLUTION its edges were made with ("" before it was recorded)

    @property
    def id(self) -> str:
        return repository_id(self.name)

    def as_dict(self) -> dict[str, object]:
        return {
            "repo": self.name,
            "root": self.root,
            "layout": self.layout,
            "packages": list(self.packages),
            "summary": self.summary,
        }


def repository_entity(
    name: str, root: str, layout: str, packages: Sequence[str], summary: str, imports: Sequence[str] = ()
) -> Entity:
    listed = sorted(set(imports))[:MAX_IMPORTS]
    return Entity(
        id=repository_id(name),
        name=name,
        type=NodeKind.REPOSITORY.value,
        summary=summary,
        signature=layout,
        source=root,
        search_text=(
            f"{_PACKAGES} {' '.join(sorted(set(packages)))}\n{_IMPORTS} {' '.join(listed)}\n"
            f"{_RESOLUTION} {RESOLUTION}"
        ),
    )


def as_repository(entity: Entity) -> Repository | None:
    if entity.type != NodeKind.REPOSITORY.value or entity.id != repository_id(entity.name):
        return None
    fields: dict[str, tuple[str, ...]] = {_PACKAGES: (), _IMPORTS: (), _RESOLUTION: ()}
    for line in entity.search_text.splitlines():
        for key in fields:
            if line.startswith(key):
                fields[key] = tuple(line[len(key) :].split())
    return Repository(
        entity.name,
        entity.source,
        entity.signature or "",
        fields[_PACKAGES],
        entity.summary,
        fields[_IMPORTS],
        " ".join(fields[_RESOLUTION]),
    )


def list_repositories(graph: GraphStore, scope: Scope) -> list[Repository]:
    """Every repository indexed into the scope, by name."""
    ids = [h.id for h in stored_hashes(graph, scope, REPO_PREFIX)]
    found: list[Repository] = []
    isolation = Isolation(scope)
    for chunk in batches(ids, 1000):
        for entity in graph.run(ENTITY_GET, scope, EntityGetParams(ids=tuple(chunk))).entities:
            repo = as_repository(entity) if isolation.admit_entity(entity) else None
            if repo is not None:
                found.append(repo)
    return sorted(found, key=lambda r: r.name)
