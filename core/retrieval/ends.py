"""Names for the far ends of facts: what expansion prints beside each fact, read narrowly."""

from __future__ import annotations

from collections.abc import Iterable

from graphctx.kernel.ports import GraphStore
from graphctx.kernel.templates import ENTITY_GET, ENTITY_NAMES, EntityGetParams
from graphctx.model import Fact
from graphctx.retrieval.isolation import Isolation
from graphctx.scope import Scope


def name_ends(
    graph: GraphStore, scope: Scope, isolation: Isolation, names: dict[str, str], facts: Iterable[Fact]
) -> dict[str, str]:
    """Add the display name of every fact endpoint `names` lacks, each re-checked against the scope.

    A store that translates `entity.names` answers only the fields a name needs; any other is asked
    to hydrate the whole entities (same names, more bytes)."""
    missing = sorted({i for f in facts for i in (f.subject_id, f.object_id) if i and i not in names})
    if not missing:
        return names
    params = EntityGetParams(ids=tuple(missing))
    if ENTITY_NAMES.name in graph.capabilities.templates:
        found = graph.run(ENTITY_NAMES, scope, params).names
        names.update({n.id: n.display_name() for n in found if isolation.admit_name(n)})
    else:
        ends = graph.run(ENTITY_GET, scope, params).entities
        names.update({e.id: e.display_name() for e in ends if isolation.admit_entity(e)})
    return names
