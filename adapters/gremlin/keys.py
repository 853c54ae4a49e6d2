"""Labels and property keys of the Gremlin graph model: constants of code, never user values."""

from __future__ import annotations

VERTEX_LABEL = "entity"

# scope, on every vertex and every edge
TENANT_ID = "tenant_id"
NAMESPACE = "namespace"
GRAPH_ID = "graph_id"

# entity vertices
ENTITY_ID = "entity_id"
NAME = "name"
NAME_KEY = "name_key"  # casefolded name: find_exact by name
TYPE = "type"
ALIASES = "aliases"  # JSON array of the aliases, in order
ALIAS_KEY = "alias_key"  # set cardinality, one casefolded alias per value: find_exact by alias
SUMMARY = "summary"
QUALIFIED_NAME = "qualified_name"
PATH = "path"
LINE_START = "line_start"
LINE_END = "line_end"
SIGNATURE = "signature"
SOURCE = "source"
SEARCH_TEXT = "search_text"  # indexed-only text; absent when empty
CONTENT_HASH = "content_hash"
SORT_KEY = "sort_key"  # hex of the UTF-8 id: the server's string order is code-point order
CREATED_AT = "created_at"
UPDATED_AT = "updated_at"

ENTITY_OPTIONAL = (QUALIFIED_NAME, PATH, LINE_START, LINE_END, SIGNATURE, SEARCH_TEXT)
"""Entity fields that may be None: stored as absent properties."""
ENTITY_KEYS = (
    TENANT_ID, NAMESPACE, GRAPH_ID, ENTITY_ID, NAME, TYPE, ALIASES, SUMMARY, *ENTITY_OPTIONAL,
    SOURCE, CONTENT_HASH, CREATED_AT, UPDATED_AT,
)  # fmt: skip
"""What a read fetches to rebuild an Entity."""
NAME_KEYS = (TENANT_ID, NAMESPACE, GRAPH_ID, ENTITY_ID, NAME, QUALIFIED_NAME)
"""What entity.names fetches."""

# fact edges
FACT_ID = "fact_id"
PREDICATE = "predicate"
SUBJECT_ID = "subject_id"
OBJECT_ID = "object_id"
LITERAL = "literal"  # True on the self-loop that stores a value-only fact
VALUE = "value"
CONFIDENCE = "confidence"
VALID_FROM = "valid_from"
VALID_TO = "valid_to"
ORDER_KEY = "order_key"  # the catalogue edge order (subject, predicate, object, id) as one string

FACT_OPTIONAL = (OBJECT_ID, VALUE, VALID_FROM, VALID_TO)
FACT_KEYS = (
    TENANT_ID, NAMESPACE, GRAPH_ID, FACT_ID, PREDICATE, SUBJECT_ID, *FACT_OPTIONAL, SOURCE, CONFIDENCE,
    CREATED_AT, UPDATED_AT,
)  # fmt: skip
