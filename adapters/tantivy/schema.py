"""The index schema and the documents written into it."""

from __future__ import annotations

from tantivy import Document, PreTokenizedString, Schema, SchemaBuilder, Token

from graphctx.adapters.tantivy.analysis import EN_ANALYSER, clean, exact_terms, identifier_tokens
from graphctx.kernel.ports import LexicalDoc
from graphctx.scope import Scope

# Stored, untokenized: the scope a hit came from, its id and hash, and the unique upsert key.
SCOPE_FIELDS = ("tenant_id", "namespace", "graph_id")
KEY = "key"
ENTITY_ID = "entity_id"
CONTENT_HASH = "content_hash"
LAYOUT = 2
"""Version of the fields and analysers below. An index written with another layout is rebuilt from
the graph (TantivyLexicalIndex, `graphctx.writes.IndexSync.refill`). 2: stop words, indexed-only text."""
# English-stemmed text, analysed by tantivy with EN_ANALYSER; BODY holds the indexed-only search text.
BODY = "body"
TEXT_FIELDS = ("name", "aliases", "qualified_name", "type", "path", "summary", BODY)
# Identifier parts + whole identifiers, tokenized in Python (see analysis.identifier_tokens).
NAME_IDENT = "name_ident"
ALIAS_IDENT = "alias_ident"  # aliases and qualified name
OTHER_IDENT = "other_ident"  # path, type and summary
BODY_IDENT = "body_ident"  # the indexed-only search text
IDENT_FIELDS = (NAME_IDENT, ALIAS_IDENT, OTHER_IDENT, BODY_IDENT)
# Whole names, aliases and qualified names in lower case (analysis.exact_terms).
EXACT = "exact"

_SEP = "\x1f"  # scope selectors cannot contain it (graphctx.scope), so the key is unambiguous


def build_schema() -> Schema:
    builder = SchemaBuilder()
    for field in (*SCOPE_FIELDS, KEY, ENTITY_ID, CONTENT_HASH):
        builder.add_text_field(field, stored=True, tokenizer_name="raw", index_option="basic")
    for field in TEXT_FIELDS:
        builder.add_text_field(field, tokenizer_name=EN_ANALYSER, index_option="freq")
    # Pre-tokenized values bypass the tokenizer; "raw" is built in, so nothing needs registering.
    for field in IDENT_FIELDS:
        builder.add_text_field(field, tokenizer_name="raw", index_option="freq")
    builder.add_text_field(EXACT, tokenizer_name="raw", index_option="basic")
    return builder.build()


def doc_key(scope: Scope, entity_id: str) -> str:
    """Unique per (tenant, namespace, graph, entity): equal ids in two scopes never clobber each other."""
    return _SEP.join((scope.tenant_id, scope.namespace, scope.graph_id, clean(entity_id)))


def _pre_tokenized(values: list[str]) -> PreTokenizedString:
    text = "\n".join(values)
    tokens = [
        Token(tok, pos, 0, 0) for pos, tok in enumerate(t for v in values for t in identifier_tokens(v))
    ]
    return PreTokenizedString(text, tokens)


def to_document(scope: Scope, doc: LexicalDoc) -> Document:
    out = Document()
    for field, value in zip(SCOPE_FIELDS, (scope.tenant_id, scope.namespace, scope.graph_id), strict=True):
        out.add_text(field, value)
    out.add_text(KEY, doc_key(scope, doc.entity_id))
    out.add_text(ENTITY_ID, clean(doc.entity_id))
    out.add_text(CONTENT_HASH, clean(doc.content_hash))

    aliases = [clean(a) for a in doc.aliases]
    texts = {
        "name": [doc.name],
        "aliases": aliases,
        "qualified_name": [doc.qualified_name],
        "type": [doc.type],
        "path": [doc.path],
        "summary": [doc.summary],
        BODY: [doc.text],
    }
    for field, values in texts.items():
        for value in values:
            if value:
                out.add_text(field, clean(value))

    idents = {
        NAME_IDENT: [doc.name],
        ALIAS_IDENT: [*aliases, doc.qualified_name],
        OTHER_IDENT: [doc.path, doc.type, doc.summary],
        BODY_IDENT: [doc.text],
    }
    for field, values in idents.items():
        present = [clean(v) for v in values if v]
        if present:
            out.add_pre_tokenized_text(field, _pre_tokenized(present))

    exact = [t for v in (doc.name, *aliases, doc.qualified_name) if v for t in exact_terms(v)]
    for term in dict.fromkeys(exact):
        out.add_text(EXACT, term)
    return out
