"""The index schema and the documents written into it."""

from __future__ import annotations

from functools import lru_cache
from itertools import repeat
from typing import TYPE_CHECKING, NamedTuple

from tantivy import Document, PreTokenizedString, Schema, SchemaBuilder, Token

from graphctx.adapters.tantivy.analysis import EN_ANALYSER, clean, exact_terms, identifier_tokens
from graphctx.scope import Scope

if TYPE_CHECKING:  # the writer child builds documents without importing the models
    from graphctx.kernel.ports import LexicalDoc

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


class WireDoc(NamedTuple):
    """A LexicalDoc's values as the writer child gets them: a plain tuple to pickle and unpickle,
    with the same field names, so `to_document` reads either."""

    entity_id: str
    name: str
    aliases: tuple[str, ...]
    type: str
    qualified_name: str
    path: str
    summary: str
    text: str
    content_hash: str

    @classmethod
    def of(cls, doc: LexicalDoc) -> WireDoc:
        return cls(
            doc.entity_id,
            doc.name,
            tuple(doc.aliases),
            doc.type,
            doc.qualified_name,
            doc.path,
            doc.summary,
            doc.text,
            doc.content_hash,
        )


def doc_key(scope: Scope, entity_id: str) -> str:
    """Unique per (tenant, namespace, graph, entity): equal ids in two scopes never clobber each other."""
    return _SEP.join((scope.tenant_id, scope.namespace, scope.graph_id, clean(entity_id)))


def _pre_tokenized(values: list[str], tokens: list[str]) -> PreTokenizedString:
    """The values (each one's identifier tokens, in order, in `tokens`) as one pre-tokenized text."""
    return PreTokenizedString("\n".join(values), list(map(Token, tokens, range(len(tokens)), _ZEROS, _ZEROS)))


_ZEROS = repeat(0)


@lru_cache(maxsize=4096)
def _small_tokens(value: str) -> tuple[str, ...]:
    """Identifier tokens of a short value that recurs across documents (a path, a type)."""
    return tuple(identifier_tokens(value))


def to_document(scope: Scope, doc: LexicalDoc | WireDoc) -> Document:
    out = Document()
    add = out.add_text
    for field, value in zip(SCOPE_FIELDS, (scope.tenant_id, scope.namespace, scope.graph_id), strict=True):
        add(field, value)
    entity_id = clean(doc.entity_id)
    add(KEY, _SEP.join((scope.tenant_id, scope.namespace, scope.graph_id, entity_id)))
    add(ENTITY_ID, entity_id)
    add(CONTENT_HASH, clean(doc.content_hash))

    # every value cleaned once; the same text reaches the English fields, the identifier fields
    # and the exact field as before
    name = clean(doc.name) if doc.name else ""
    aliases = [clean(a) for a in doc.aliases]
    qualified = clean(doc.qualified_name) if doc.qualified_name else ""
    kind = clean(doc.type) if doc.type else ""
    path = clean(doc.path) if doc.path else ""
    summary = clean(doc.summary) if doc.summary else ""
    text = clean(doc.text) if doc.text else ""
    if name:
        add("name", name)
    for alias in aliases:
        if alias:
            add("aliases", alias)
    for field, value in (("qualified_name", qualified), ("type", kind), ("path", path), ("summary", summary)):
        if value:
            add(field, value)
    if text:
        add(BODY, text)

    if name:
        out.add_pre_tokenized_text(NAME_IDENT, _pre_tokenized([name], identifier_tokens(name)))
    present = [a for a in aliases if a]
    if qualified:
        present.append(qualified)
    if present:
        tokens = [t for v in present for t in identifier_tokens(v)]
        out.add_pre_tokenized_text(ALIAS_IDENT, _pre_tokenized(present, tokens))
    other = [v for v in (path, kind, summary) if v]
    if other:
        tokens = list(_small_tokens(path)) if path else []
        if kind:
            tokens += _small_tokens(kind)
        if summary:
            tokens += identifier_tokens(summary)
        out.add_pre_tokenized_text(OTHER_IDENT, _pre_tokenized(other, tokens))
    if text:
        out.add_pre_tokenized_text(BODY_IDENT, _pre_tokenized([text], identifier_tokens(text)))

    exact = [t for v in (doc.name, *aliases, doc.qualified_name) if v for t in exact_terms(v)]
    for term in dict.fromkeys(exact):
        add(EXACT, term)
    return out
