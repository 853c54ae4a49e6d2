"""Queries built only from analysed tokens with term/boolean queries: user text never reaches tantivy's
query parser, so `tenant_id:other`, `*`, ranges and boosts in it are just words."""

from __future__ import annotations

from tantivy import Occur, Query, Schema, TextAnalyzer

from graphctx.adapters.tantivy.analysis import clean, identifier_tokens, query_exact_terms
from graphctx.adapters.tantivy.schema import (
    ALIAS_IDENT,
    EXACT,
    NAME_IDENT,
    OTHER_IDENT,
    SCOPE_FIELDS,
)
from graphctx.scope import Scope

# name/identifiers > aliases/qualified name > path, type, summary; exact whole names above all.
EXACT_BOOST = 8.0
TEXT_BOOSTS = {"name": 3.0, "aliases": 2.0, "qualified_name": 2.0, "path": 1.0, "type": 1.0, "summary": 1.0}
IDENT_BOOSTS = {NAME_IDENT: 3.0, ALIAS_IDENT: 2.0, OTHER_IDENT: 0.5}


def scope_filter(schema: Schema, scope: Scope) -> Query:
    """All documents of exactly this scope; scores 0 so it never shifts BM25 values."""
    values = (scope.tenant_id, scope.namespace, scope.graph_id)
    terms = [
        (Occur.Must, Query.term_query(schema, field, value))
        for field, value in zip(SCOPE_FIELDS, values, strict=True)
    ]
    return Query.const_score_query(Query.boolean_query(terms), 0.0)


def text_clauses(schema: Schema, text: str, english: TextAnalyzer) -> list[tuple[Occur, Query]]:
    """SHOULD clauses, one per (field, distinct token); empty when the text has no tokens."""
    clauses: list[tuple[Occur, Query]] = []

    def add(fields: dict[str, float], tokens: list[str]) -> None:
        for token in dict.fromkeys(tokens):
            for field, boost in fields.items():
                term = Query.term_query(schema, field, token)
                clauses.append((Occur.Should, Query.boost_query(term, boost)))

    text = clean(text)
    add({EXACT: EXACT_BOOST}, query_exact_terms(text))
    add(IDENT_BOOSTS, identifier_tokens(text))
    add(TEXT_BOOSTS, english.analyze(text))
    return clauses


def search_query(schema: Schema, scope: Scope, text: str, english: TextAnalyzer) -> Query | None:
    """Scope filter AND (any text clause); None when the text yields no tokens at all."""
    clauses = text_clauses(schema, text, english)
    if not clauses:
        return None
    return Query.boolean_query(
        [(Occur.Must, scope_filter(schema, scope)), (Occur.Must, Query.boolean_query(clauses))]
    )
