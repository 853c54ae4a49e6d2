"""Which parts of a query to try as exact identifiers, and what an exact match of each part means.

The rule (docs/architecture.md, "Exact first, without domination"):

- **Identity probes** are the whole query (as typed and stripped, and without one pair of wrapping
  quotes or backticks) and every identifier inside it whose shape prose never has: a compound name
  with a connector (`a.b`, `a::b`, `a/b`, `a#b`: qualified names, `file::name`, paths, hostnames) or an
  error code (`PAY-502`, `E1234`). Their exact matches are the query's identity: they rank before
  every approximate candidate, at most `NAMED_FIRST` of them for identifiers named inside a longer query.
- **Mention probes** are the other parts: quoted words and phrases, and single identifier-like tokens
  (`snake_case`, `camelCase`, `kebab-case`, with digits). A word quoted inside a sentence is not an
  identity; its matches form one more ranked list (the `mention` leg) that is fused with BM25 and dense
  by RRF like any other leg, with at most `PER_MENTION` entities per probe and `bounds.LEG_CANDIDATES`
  in all, so a common word that names many entities can never flood the answer.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from graphctx import bounds
from graphctx.kernel.templates import ExactMatch

MAX_CANDIDATES = 16
NAMED_FIRST = 3
"""Identifiers named inside a longer query whose exact matches rank first."""
PER_MENTION = 2
"""Entities one mention probe may contribute to the mention leg."""
_QUOTED = re.compile(r"[\"'`]([^\"'`]{1,256})[\"'`]")
_STRIP = "\"'`,;!?()[]{}<>"
_IDENTIFIER_HINT = re.compile(r"[._:/@\-#0-9]|[a-z][A-Z]")
_COMPOUND = re.compile(r"[^\W\d][\w-]*(?:(?:\.|::|/|#)[\w-]+)+")
_ERROR_CODE = re.compile(r"[A-Z][A-Z0-9]*-?[0-9]{2,}[A-Z0-9-]*")


@dataclass(frozen=True)
class Probes:
    whole: tuple[str, ...]
    """The whole query, as typed, stripped and unwrapped."""
    named: tuple[str, ...]
    """Compound identifiers named inside the query."""
    mentions: tuple[str, ...]
    """Quoted parts and single identifier-like tokens."""

    def values(self) -> list[str]:
        kept = [
            v
            for v in dict.fromkeys((*self.whole, *self.named, *self.mentions))
            if v and len(v.encode("utf-8")) <= bounds.NAME_BYTES
        ]
        return kept[:MAX_CANDIDATES]


def probes(query: str) -> Probes:
    stripped = query.strip()
    whole = [query, stripped]
    unwrapped = stripped.strip(_STRIP).rstrip(".:").strip()
    if unwrapped and " " not in unwrapped:
        whole.append(unwrapped)  # `shop.cart.Cart.total`?  ->  shop.cart.Cart.total
    named: list[str] = []
    mentions: list[str] = [m.group(1).strip() for m in _QUOTED.finditer(query)]
    for raw in query.split():
        token = raw.strip(_STRIP).rstrip(".:")
        if len(token) <= 1 or token in whole:
            continue
        if _COMPOUND.fullmatch(token) or _ERROR_CODE.fullmatch(token):
            named.append(token)
        elif _IDENTIFIER_HINT.search(token):
            mentions.append(token)
    for quoted in list(mentions):
        if _COMPOUND.fullmatch(quoted):
            named.append(quoted)
    whole_set = set(whole)
    return Probes(
        tuple(dict.fromkeys(whole)),
        tuple(v for v in dict.fromkeys(named) if v not in whole_set),
        tuple(v for v in dict.fromkeys(mentions) if v not in whole_set and v not in named),
    )


def exact_candidates(query: str) -> list[str]:
    """Every value the exact stage looks up for this query."""
    return probes(query).values()


def split_matches(found: Sequence[ExactMatch], p: Probes) -> tuple[list[ExactMatch], list[ExactMatch]]:
    """(identity matches in lookup order, the mention leg in lookup order, capped)."""
    whole = {v.casefold() for v in p.whole}
    named = {v.casefold() for v in p.named}
    identity: list[ExactMatch] = []
    mention: list[ExactMatch] = []
    per_value: dict[str, int] = {}
    named_first = 0
    for match in found:
        value = match.value.casefold()
        if value in whole:
            identity.append(match)
            continue
        if value in named and named_first < NAMED_FIRST:
            identity.append(match)
            named_first += 1
            continue
        if per_value.get(value, 0) < PER_MENTION and len(mention) < bounds.LEG_CANDIDATES:
            per_value[value] = per_value.get(value, 0) + 1
            mention.append(match)
    return identity, mention
