"""Broken on purpose: the search's scope clause binds the tenant and the namespace but forgets the graph
id: a shared code graph leaks into the tenant's memory searches (and the other way round).
"""

from __future__ import annotations

from _shared import InRamTantivy, ScopeFieldBlindLexical, TestControlTantivy, lexical_factory  # noqa: F401

from graphctx.contracts.lexical import LexicalIndexContract


class GraphIdBlindLexical(ScopeFieldBlindLexical):
    name = "tantivy-graph-id-blind"
    forgets = "graph_id"


class TestBrokenGraphIdBlindLexical(InRamTantivy, LexicalIndexContract):
    index_class = GraphIdBlindLexical


create_lexical_index = lexical_factory(GraphIdBlindLexical)
