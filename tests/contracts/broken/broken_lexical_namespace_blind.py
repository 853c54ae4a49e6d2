"""Broken on purpose: the search's scope clause binds the tenant and the graph id but forgets the
namespace: a sibling namespace of the same tenant leaks into every search.
"""

from __future__ import annotations

from _shared import InRamTantivy, ScopeFieldBlindLexical, TestControlTantivy, lexical_factory  # noqa: F401

from graphctx.contracts.lexical import LexicalIndexContract


class NamespaceBlindLexical(ScopeFieldBlindLexical):
    name = "tantivy-namespace-blind"
    forgets = "namespace"


class TestBrokenNamespaceBlindLexical(InRamTantivy, LexicalIndexContract):
    index_class = NamespaceBlindLexical


create_lexical_index = lexical_factory(NamespaceBlindLexical)
