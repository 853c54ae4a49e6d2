"""Queries built only from analysed tokens with term/boolean queries: user text never reaches tantivy's
query parser, so `tenant_id:other`, `*`, ranges and boosts in it are just words."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from tantivy import Occur, Query, Schema, TextAnalyzer

from graphctx.adapters.tantivy.analysis import clean, exact_terms, identifier_tokens, query_exact_terms
from graphctx.adapters.tantivy.schema import (
    ALIAS_IDENT,
    BODY,
    BODY_IDENT,
    EXACT,
    NAME_IDENT,
    OTHER_IDENT,
    SCOPE_FIELDS,
)
from graphctx.scope import Scope


@dataclass(frozen=True)
class Weights:
    """Query-time boost of each field (0 leaves the field out). The defaults were chosen by
    measurement on the development split of bench/retrieval_quality.py (bench/tune_lexical.py);
    docs/results.md reports them on the held-out split."""

    exact: float = 3.0
    text: Mapping[str, float] = field(
        default_factory=lambda: {
            "name": 0.0, "aliases": 2.0, "qualified_name": 2.0, "path": 2.0, "type": 2.0, "summary": 3.0,
            BODY: 3.0,
        }
    )  # fmt: skip
    ident: Mapping[str, float] = field(
        default_factory=lambda: {NAME_IDENT: 3.0, ALIAS_IDENT: 2.0, OTHER_IDENT: 3.0, BODY_IDENT: 2.0}
    )


WEIGHTS = Weights()
WHOLE_NAME_SCORE = 1_000.0
"""What a document whose name, alias or qualified name is the whole query adds to its score: more than
any sum of BM25 clauses reaches, so such a document ranks first (an identifier found inside a longer
query keeps its ordinary `exact` weight, so prose never floods the top with same-named entities)."""


def scope_filter(schema: Schema, scope: Scope) -> Query:
    """All documents of exactly this scope; scores 0 so it never shifts BM25 values."""
    values = (scope.tenant_id, scope.namespace, scope.graph_id)
    terms = [
        (Occur.Must, Query.term_query(schema, field, value))
        for field, value in zip(SCOPE_FIELDS, values, strict=True)
    ]
    return Query.const_score_query(Query.boolean_query(terms), 0.0)


def text_clauses(
    schema: Schema, text: str, english: TextAnalyzer, weights: Weights = WEIGHTS
) -> list[tuple[Occur, Query]]:
    """SHOULD clauses, one per (field, distinct token); empty when the text has no tokens."""
    clauses: list[tuple[Occur, Query]] = []

    def add(fields: Mapping[str, float], tokens: list[str]) -> None:
        for token in dict.fromkeys(tokens):
            for name, boost in fields.items():
                if boost <= 0:
                    continue
                term = Query.term_query(schema, name, token)
                clauses.append((Occur.Should, Query.boost_query(term, boost)))

    text = clean(text)
    whole = exact_terms(text)  # the query as one name: its entity ranks first (exact_identifier_field)
    for term in whole:
        exact = Query.term_query(schema, EXACT, term)
        clauses.append((Occur.Should, Query.const_score_query(exact, WHOLE_NAME_SCORE)))
    add({EXACT: weights.exact}, [t for t in query_exact_terms(text) if t not in whole])
    add(weights.ident, identifier_tokens(text))
    add(weights.text, english.analyze(text))
    return clauses


def search_query(
    schema: Schema, scope: Scope, text: str, english: TextAnalyzer, weights: Weights = WEIGHTS
) -> Query | None:
    """Scope filter AND (any text clause); None when the text yields no tokens at all."""
    clauses = text_clauses(schema, text, english, weights)
    if not clauses:
        return None
    return Query.boolean_query(
        [(Occur.Must, scope_filter(schema, scope)), (Occur.Must, Query.boolean_query(clauses))]
    )
