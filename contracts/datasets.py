"""Canonical contract datasets: deterministic, versioned, the same for every adapter.

Bump DATASET_VERSION (and note it in docs/contracts-changelog.md) whenever a dataset changes.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

import numpy as np
from numpy.typing import NDArray

from graphctx.kernel.ports import LexicalDoc, VectorRecord
from graphctx.model import Entity, Fact

DATASET_VERSION = 3

T0 = datetime(2024, 1, 1, tzinfo=UTC)
T_CHANGE = datetime(2025, 6, 1, tzinfo=UTC)
T_NOW = datetime(2025, 11, 29, 12, 0, tzinfo=UTC)
T_MICRO = datetime(2025, 3, 4, 5, 6, 7, 123457, tzinfo=UTC)
"""An instant with microseconds (odd, so a store rounding to milliseconds is caught too)."""

CONTROL_CHARACTERS = "".join(chr(c) for c in (*range(1, 32), 0x7F)) + "\u2028\u2029\ufeff\u200b"
"""Every C0 control character but NUL (no stored text holds NUL), DEL, line/paragraph separators, a
byte-order mark and a zero-width space: kept exactly, never stripped or escaped."""
LARGE_SCOPE = 2_100
"""Records in a large scope: more than any page (1,000) or `IN` list (999) a backend may cut at."""
LARGE_TIES = 150
"""Records that tie: more than any limit (100) plus any over-fetch an adapter may add."""


def sized(n_bytes: int, char: str = "é") -> str:
    """A text of exactly `n_bytes` UTF-8 bytes ending in a multi-byte character (a store that cuts by
    characters, or by bytes mid-character, is caught)."""
    return "x" * (n_bytes - len(char.encode())) + char


def large_ids(n: int) -> list[str]:
    """Ids that order differently by code point, by byte, by case-insensitive collation and by
    length: upper and lower case, digits, punctuation, accents, CJK, prefixes of one another."""
    stems = ["a", "A", "a-", "a0", "aa", "B", "b", "é", "É", "z", "Z", "日本", "~", "0", "9-"]
    made = [
        f"{stems[i % len(stems)]}{i:05d}" if i % 7 else stems[i % len(stems)] * (1 + i % 3) + str(i)
        for i in range(n)
    ]
    assert len(set(made)) == n, "the contract's ids collide"
    return made


def _entity(id: str, name: str, type: str = "thing", **kw: object) -> Entity:
    return Entity(id=id, name=name, type=type, created_at=T0, updated_at=T0, **kw)  # type: ignore[arg-type]


def memory_entities() -> list[Entity]:
    """A small engineering organisation."""
    return [
        _entity(
            "svc-checkout",
            "checkout-api",
            "service",
            aliases=("checkout", "co-api"),
            summary="Turns carts into orders and charges cards through the payment gateway.",
        ),
        _entity(
            "svc-pay",
            "payment-gateway",
            "service",
            aliases=("pgw", "PAY-502-UPSTREAM"),
            summary="Talks to the card processor with idempotency keys.",
        ),
        _entity("svc-inv", "inventory-svc", "service", aliases=("inventory",), summary="Stock reservations."),
        _entity("team-pay", "Payments Team", "team", aliases=("payments",), summary="Owns card processing."),
        _entity("team-com", "Commerce Platform", "team", aliases=("commerce",), summary="Owns checkout."),
        _entity("inc-1", "INC-2041 checkout latency spike", "incident", summary="p99 rose to 9 s."),
        _entity("db-redis", "redis-sessions", "datastore", aliases=("redis",), summary="Old session store."),
        _entity("adr-12", "ADR-012 sessions to Postgres", "decision", summary="Move sessions off Redis."),
    ]


def memory_facts() -> list[Fact]:
    """Facts that change over time: ownership moved on T_CHANGE; a dependency ended."""

    def f(s: str, p: str, o: str | None = None, **kw: object) -> Fact:
        return Fact(subject_id=s, predicate=p, object_id=o, created_at=T0, updated_at=T0, **kw)  # type: ignore[arg-type]

    return [
        f("svc-checkout", "owned_by", "team-pay", valid_from=T0, valid_to=T_CHANGE),
        f("svc-checkout", "owned_by", "team-com", valid_from=T_CHANGE),
        f("svc-checkout", "depends_on", "svc-pay"),
        f("svc-checkout", "depends_on", "svc-inv"),
        f("svc-checkout", "depends_on", "db-redis", valid_to=T_CHANGE),
        f("svc-pay", "owned_by", "team-pay"),
        f("inc-1", "affected", "svc-checkout", value="p99 9 s"),
        f("db-redis", "caused", "inc-1", confidence=0.9),
        f("adr-12", "relates_to", "db-redis"),
        f("adr-12", "note", value="accepted after the second eviction incident"),
    ]


def code_entities() -> list[Entity]:
    """A tiny repository: a module with a class, a method, functions and a test."""
    return [
        _entity("repo", "shop", "repository"),
        _entity("mod-cart", "cart", "module", qualified_name="shop.cart", path="shop/cart.py"),
        _entity(
            "cls-cart",
            "Cart",
            "class",
            qualified_name="shop.cart.Cart",
            path="shop/cart.py",
            line_start=10,
            line_end=60,
            signature="class Cart",
        ),
        _entity(
            "m-add",
            "add_item",
            "method",
            qualified_name="shop.cart.Cart.add_item",
            path="shop/cart.py",
            line_start=20,
            line_end=35,
            signature="def add_item(self, sku: str, qty: int) -> None",
            # indexed-only text (graphctx.model.Entity.search_text): stores keep it, cards never show it
            search_text="Add qty units of sku to the cart.\nsku: str qty: int\nself._lines append",
        ),
        _entity(
            "f-price",
            "price_of",
            "function",
            qualified_name="shop.pricing.price_of",
            path="shop/pricing.py",
            line_start=5,
            line_end=12,
            signature="def price_of(sku: str) -> Decimal",
        ),
        _entity(
            "t-add",
            "test_add_item",
            "function",
            qualified_name="tests.test_cart.test_add_item",
            path="tests/test_cart.py",
            line_start=3,
            line_end=9,
        ),
    ]


def code_facts() -> list[Fact]:
    def f(s: str, p: str, o: str) -> Fact:
        return Fact(subject_id=s, predicate=p, object_id=o, created_at=T0, updated_at=T0)

    return [
        f("repo", "contains", "mod-cart"),
        f("mod-cart", "contains", "cls-cart"),
        f("cls-cart", "contains", "m-add"),
        f("m-add", "calls", "f-price"),
        f("mod-cart", "imports", "f-price"),
        f("m-add", "tested_by", "t-add"),
    ]


def hub(n: int = 60, prefix: str = "leaf") -> tuple[list[Entity], list[Fact]]:
    """A hub with n out-neighbours and n in-neighbours: limits and clamps at their edges."""
    ents = [_entity("hub", "hub")]
    facts = []
    for i in range(n):
        ents.append(_entity(f"{prefix}-out-{i:03d}", f"{prefix} out {i}"))
        ents.append(_entity(f"{prefix}-in-{i:03d}", f"{prefix} in {i}"))
        facts.append(Fact(subject_id="hub", predicate="depends_on", object_id=f"{prefix}-out-{i:03d}"))
        facts.append(Fact(subject_id=f"{prefix}-in-{i:03d}", predicate="depends_on", object_id="hub"))
    return ents, facts


def ties(n: int = 12) -> list[Entity]:
    """Entities that compare equal on everything a ranking uses but their id: order must be by id."""
    return [
        _entity(f"tie-{i:02d}", "same name", aliases=("same alias",), summary="same words")
        for i in (7, 3, 11, 0, 5, 9, 1, 10, 2, 8, 6, 4)[:n]
    ]


INJECTION_PAYLOADS: tuple[str, ...] = (
    "'; DROP TABLE entities; --",
    '" OR 1=1 --',
    "x' OR tenant_id='other",
    "g.V().drop().iterate()",
    "').drop();g.V('",
    "System.exit(0)",
    "${jndi:ldap://x}",
    "tenant_id:other OR name:*",
    "name:/.*/",
    "*",
    'foo AND (bar "unbalanced',
    "+user -name^100 entity_id:[a TO z]",
    "\\' \\\" \\n",
    "line\nbreak\ttab\x01\x1f",
    "emoji 🧨 ünïcode ナイフ",
    "L" * 1024,
)


def injection_entities() -> list[Entity]:
    return [
        _entity(f"inj-{i:02d}", p, aliases=(p[::-1],), summary=p[:200])
        for i, p in enumerate(INJECTION_PAYLOADS)
    ]


def lexical_docs(entities: list[Entity]) -> list[LexicalDoc]:
    from graphctx.indexing import lexical_doc

    return [lexical_doc(e) for e in entities]


class FakeEmbedder:
    """Deterministic bag-of-words hashing embedder: equal texts give equal vectors, shared words
    give closer vectors. For vector contracts only; no model."""

    similarity_floor = 0.0

    def __init__(self, dimension: int = 32) -> None:
        self.dimension = dimension
        self.model_id = f"contract-fake-{dimension}@{DATASET_VERSION}"

    def embed(self, texts: list[str]) -> NDArray[np.float32]:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split() or [text]:
                digest = hashlib.blake2b(word.encode("utf-8", "surrogatepass"), digest_size=8).digest()
                out[row, int.from_bytes(digest[:4], "little") % self.dimension] += (
                    1.0 if digest[4] & 1 else -1.0
                )
            if not out[row].any():
                out[row, 0] = 1.0
            out[row] /= np.linalg.norm(out[row])
        return out

    def records(self, entities: list[Entity]) -> list[VectorRecord]:
        from graphctx.indexing import embedding_text

        matrix = self.embed([embedding_text(e) for e in entities])
        return [
            VectorRecord(entity_id=e.id, content_hash=e.content_hash, vector=tuple(map(float, v)))
            for e, v in zip(entities, matrix, strict=True)
        ]
