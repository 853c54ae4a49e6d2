"""The `LexicalIndex` contract: what every BM25 adapter promises, checked only through the port.

What the contract promises (contract 1.0.0; ordered / unordered is stated per promise):

- **Writes.** `upsert(scope, docs)` inserts or replaces the document of each `(scope, entity_id)`
  -- the whole document: aliases the new version lacks stop matching, and a new content hash alone is
  stored (since 1.5.0); `delete(scope, ids)` removes them. Both are idempotent; deleting an id the
  scope does not hold is a no-op. A batch naming an id several times stores one document, its last
  version (since 1.5.0). A write in one scope never touches the same id in another scope
  (tenant, namespace and graph id are all part of the key).
- **Write visibility.** Every write is visible to `search` and `hashes` after the next `flush()`.
  Nothing is promised before `flush()`: the suite calls it before every read and never asserts that
  a write is invisible.
- **search(scope, text, k)** returns hits of exactly `scope`, each carrying the tenant, namespace,
  graph id and content hash stored with it, each id once (since 1.5.0). At most `clamp(k, 1, 100)`
  hits, and exactly that many when at least that many documents match (deleted ones do not count,
  since 1.5.0). *Ordered*: score descending, then `entity_id`
  ascending for equal scores, also across the k-th position (a tie is never cut arbitrarily).
  Scores are finite; their scale is not part of the contract, but they are BM25's: a rarer term
  weighs more than a common one (since 1.5.0). The same search on the same data returns the same
  hits in the same order.
- **Text is analysed, never parsed.** Query syntax (`tenant_id:other OR name:*`, `*`, quotes,
  boosts, ranges) is literal text: it cannot widen the scope or match every document. Text with no
  searchable term (empty, blank) returns `[]`, not an error. Any string is a valid query, and every
  word of a query up to the service's bound (4 KiB) counts (since 1.5.0).
- **What is searchable.** Name, aliases, qualified name and summary words, and the words of the
  indexed-only text `LexicalDoc.text` (since 1.5.0), in any letter case (since 1.5.0), of any
  script (since 1.5.0: a word is a run of Unicode letters and digits), a name or alias made only of
  stop words included (since 1.5.0) (unordered: the entity is among the first 10 hits). Optional,
  behind capability flags in `Capabilities.extra`: `identifier_analysis` (identifier parts:
  `parseHttpRequest`, `add_item`, `shop.pricing` match their parts), `exact_identifier_field` (a
  whole name or alias ranks its entity first), `stemming` (English word forms meet).
- **hashes(scope)** is exactly `{entity_id: content_hash}` of the documents in `scope`.
- **Durability** (capability `durable`): after `close()`, the index opened again holds exactly what
  it held and takes writes as before (since 1.5.0; needs the `reopen_lexical_index` hook).

Usage (copy into your adapter's tests)::

    import pytest
    from graphctx.contracts.lexical import LexicalIndexContract

    class TestMyLexicalIndex(LexicalIndexContract):
        @pytest.fixture
        def lexical_index(self, tmp_path):
            index = MyLexicalIndex(tmp_path / "lexical")
            yield index
            index.close()

Adapters offering plain BM25 with no identifier analysis may subclass `LexicalIndexCoreContract`;
the identifier tests in `LexicalIndexContract` skip by flag name when the capability is absent.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Iterable, Sequence

import pytest

from graphctx.bounds import QUERY_BYTES
from graphctx.contracts import datasets
from graphctx.contracts._base import ContractBase, adversarial_scopes, check_hits, joined_twins
from graphctx.contracts._markers import contract_skip, requires
from graphctx.kernel.ports import Capabilities, LexicalDoc, LexicalHit, LexicalIndex
from graphctx.scope import Scope

MAX_K = 100
"""`k` is clamped to [1, MAX_K]."""
LARGE_SCOPE = 2_100
"""Documents in the large scope: more than any page (1,000) a backend may read hashes in."""
TIES = 150
"""Equal-scoring documents: more than MAX_K plus any over-fetch an adapter may add."""
FOUND_WITHIN = 10
""""Found" means among the first FOUND_WITHIN hits (BM25 is relevance, not an exact-match promise)."""

_WORD = re.compile(r"[^\W_]{2,}")


def ids(hits: Iterable[LexicalHit]) -> list[str]:
    return [h.entity_id for h in hits]


def rank_key(hit: LexicalHit) -> tuple[float, str]:
    return (-hit.score, hit.entity_id)


def with_hash(docs: Sequence[LexicalDoc], tag: str) -> list[LexicalDoc]:
    """The same documents with a content hash that names `tag`: identical text, distinguishable copies."""
    return [d.model_copy(update={"content_hash": f"{tag}:{d.content_hash}"}) for d in docs]


def doc(entity_id: str, name: str, content_hash: str = "h1", **fields: object) -> LexicalDoc:
    return LexicalDoc(entity_id=entity_id, name=name, content_hash=content_hash, **fields)  # type: ignore[arg-type]


def numbered_docs(n: int, word: str = "widget") -> list[LexicalDoc]:
    """n documents that all contain `word` once, in otherwise distinct text."""
    return [
        doc(f"n-{i:03d}", f"{word} number{i}", f"h-{i}", summary=f"item {i} of the {word} set")
        for i in range(n)
    ]


class LexicalIndexHarness(ContractBase):
    """Fixtures and hooks every lexical mixin shares. Adapter authors override `lexical_index`, and may
    override the hook `assert_same_hits`; every other member is part of the contract (the guard checks).

    Troubleshooting: every test starts from `lexical_index`; if many tests fail at once, check that
    the fixture returns a *fresh* index (data of an earlier test leaks otherwise) and that `flush()`
    makes writes visible.
    """

    contract_hooks = frozenset({"lexical_index", "assert_same_hits", "reopen_lexical_index"})

    @pytest.fixture
    def lexical_index(self) -> LexicalIndex:
        """Return (or yield, closing it afterwards) a fresh `LexicalIndex` holding nothing in the
        suite's scopes (`scope`, `other_scope`, `sibling_scope`, `graph_scope`). Override this."""
        raise NotImplementedError("override the `lexical_index` fixture in your contract test class")

    def subject_capabilities(self, request: pytest.FixtureRequest) -> Capabilities:
        index: LexicalIndex = request.getfixturevalue("lexical_index")
        return index.capabilities

    @pytest.fixture
    def reopen_lexical_index(self) -> Callable[[LexicalIndex], LexicalIndex]:
        """Optional hook for durable indexes: return a function that takes the (closed)
        `lexical_index` and opens the same index again (same directory, same server), e.g.::

            @pytest.fixture
            def reopen_lexical_index(self, tmp_path):
                return lambda index: MyLexicalIndex(tmp_path / "lexical")

        The test closes what it opens. Without it the durability test skips, naming the hook
        (`graphctx certify` always provides it). Since 1.5.0."""
        raise NotImplementedError("no `reopen_lexical_index` hook")

    # helpers and hooks (only the names in `contract_hooks` may be overridden) ---------------

    def write(self, index: LexicalIndex, scope: Scope, docs: Sequence[LexicalDoc]) -> None:
        """Upsert then flush: how every test writes before it reads. Part of the contract, not a hook."""
        index.upsert(scope, docs)
        index.flush()

    def checked_search(
        self, index: LexicalIndex, scope: Scope, text: str, k: int = FOUND_WITHIN
    ) -> list[LexicalHit]:
        """Search, then check what every answer promises: scope, k, finite scores and order.
        Part of the contract, not a hook: do not override."""
        hits = index.search(scope, text, k)
        check_hits(hits, LexicalHit, scope, k, MAX_K)
        assert len(set(ids(hits))) == len(hits), f"an id appears twice: {ids(hits)}"
        return hits

    def assert_same_hits(self, first: Sequence[LexicalHit], second: Sequence[LexicalHit]) -> None:
        """Two answers to the same search on the same data: same ids, same order, same scores (relative
        tolerance 1e-6). Override only to loosen the score tolerance for a distributed engine."""
        assert ids(first) == ids(second)
        for a, b in zip(first, second, strict=True):
            assert math.isclose(a.score, b.score, rel_tol=1e-6), (a, b)
            assert (a.tenant_id, a.namespace, a.graph_id, a.content_hash) == (
                b.tenant_id,
                b.namespace,
                b.graph_id,
                b.content_hash,
            )

    # shared data ----------------------------------------------------------------------------

    @pytest.fixture
    def memory_docs(self) -> list[LexicalDoc]:
        """datasets.memory_entities() as lexical documents: services, teams, an incident, a decision."""
        return datasets.lexical_docs(datasets.memory_entities())

    @pytest.fixture
    def loaded(
        self, lexical_index: LexicalIndex, scope: Scope, memory_docs: list[LexicalDoc]
    ) -> LexicalIndex:
        """`lexical_index` holding memory_docs in `scope`, flushed."""
        self.write(lexical_index, scope, memory_docs)
        return lexical_index


# ---- per-operation mixins ---------------------------------------------------------------------


class LexicalPortTests(LexicalIndexHarness):
    """The adapter implements the port and starts empty.

    Troubleshooting: a failure here usually means the fixture returns a shared or pre-filled index,
    or the class misses a port method. Since 1.0.0.
    """

    def test_port_is_implemented(self, lexical_index: LexicalIndex) -> None:
        """The subject is a runtime `LexicalIndex` with a name and declared capabilities."""
        assert isinstance(lexical_index, LexicalIndex)
        assert isinstance(lexical_index.name, str) and lexical_index.name
        assert isinstance(lexical_index.capabilities, Capabilities)

    def test_hashes_new_index_is_empty(
        self, lexical_index: LexicalIndex, request: pytest.FixtureRequest
    ) -> None:
        """A fresh index holds nothing in any of the suite's scopes."""
        lexical_index.flush()
        for scope in [request.getfixturevalue("scope"), *adversarial_scopes(request)]:
            assert lexical_index.hashes(scope) == {}
            assert self.checked_search(lexical_index, scope, "checkout payment team") == []


class LexicalUpsertTests(LexicalIndexHarness):
    """upsert: documents become searchable by their approved text, replace by id, and are idempotent.

    Troubleshooting: check that name, aliases, qualified name and summary are all indexed and that
    upsert replaces by (scope, entity_id) instead of appending. Since 1.0.0.
    """

    @pytest.mark.parametrize(
        ("query", "expected"), [("redis-sessions", "db-redis"), ("inventory-svc", "svc-inv")]
    )
    def test_upsert_then_search_finds_by_name(
        self, loaded: LexicalIndex, scope: Scope, query: str, expected: str
    ) -> None:
        """A document is found by its name."""
        assert expected in ids(self.checked_search(loaded, scope, query))

    @pytest.mark.parametrize(("query", "expected"), [("pgw", "svc-pay"), ("commerce", "team-com")])
    def test_upsert_then_search_finds_by_alias(
        self, loaded: LexicalIndex, scope: Scope, query: str, expected: str
    ) -> None:
        """A document is found by one of its aliases alone."""
        assert expected in ids(self.checked_search(loaded, scope, query))

    @pytest.mark.parametrize(("query", "expected"), [("idempotency", "svc-pay"), ("reservations", "svc-inv")])
    def test_upsert_then_search_finds_by_summary_words(
        self, loaded: LexicalIndex, scope: Scope, query: str, expected: str
    ) -> None:
        """A document is found by a word of its summary."""
        assert expected in ids(self.checked_search(loaded, scope, query))

    def test_upsert_then_search_finds_by_qualified_name(
        self, lexical_index: LexicalIndex, scope: Scope
    ) -> None:
        """A code symbol is found by its qualified name."""
        self.write(lexical_index, scope, datasets.lexical_docs(datasets.code_entities()))
        assert "f-price" in ids(self.checked_search(lexical_index, scope, "shop.pricing.price_of"))

    def test_upsert_then_search_hits_carry_content_hash(
        self, loaded: LexicalIndex, scope: Scope, memory_docs: list[LexicalDoc]
    ) -> None:
        """Every hit carries the content hash stored with its document."""
        stored = {d.entity_id: d.content_hash for d in memory_docs}
        hits = self.checked_search(loaded, scope, "checkout payment redis team")
        assert hits
        assert {h.entity_id: h.content_hash for h in hits} == {h.entity_id: stored[h.entity_id] for h in hits}

    def test_upsert_replaces_by_id(self, lexical_index: LexicalIndex, scope: Scope) -> None:
        """Upserting an id again replaces its text and hash: old words stop matching, new ones match."""
        self.write(lexical_index, scope, [doc("e1", "marmalade", "h-old", summary="orange preserve")])
        self.write(lexical_index, scope, [doc("e1", "chutney", "h-new", summary="mango relish")])
        assert "e1" not in ids(self.checked_search(lexical_index, scope, "marmalade orange"))
        hits = self.checked_search(lexical_index, scope, "chutney mango")
        assert [(h.entity_id, h.content_hash) for h in hits] == [("e1", "h-new")]
        assert lexical_index.hashes(scope) == {"e1": "h-new"}

    def test_upsert_is_idempotent(
        self, lexical_index: LexicalIndex, scope: Scope, memory_docs: list[LexicalDoc]
    ) -> None:
        """Writing the same documents twice leaves one document per id and identical answers."""
        self.write(lexical_index, scope, memory_docs)
        first = self.checked_search(lexical_index, scope, "checkout payment gateway")
        self.write(lexical_index, scope, memory_docs)
        again = self.checked_search(lexical_index, scope, "checkout payment gateway")
        assert len(ids(again)) == len(set(ids(again)))
        self.assert_same_hits(first, again)
        assert lexical_index.hashes(scope) == {d.entity_id: d.content_hash for d in memory_docs}

    def test_upsert_then_search_finds_by_indexed_only_text(
        self, lexical_index: LexicalIndex, scope: Scope
    ) -> None:
        """A document is found by words of its indexed-only text (`LexicalDoc.text`: a symbol's
        docstring, signature and referenced names) that none of its other fields holds. Since 1.5.0."""
        self.write(
            lexical_index,
            scope,
            [
                *datasets.lexical_docs(datasets.code_entities()),
                doc("plain", "walrus", "h-plain", summary="tusks"),
                doc("hidden", "narwhal", "h-hidden", text="spiral tusks of the arctic whale"),
            ],
        )
        assert "m-add" in ids(self.checked_search(lexical_index, scope, "units"))
        assert ids(self.checked_search(lexical_index, scope, "arctic whale")) == ["hidden"]
        assert set(ids(self.checked_search(lexical_index, scope, "tusks"))) == {"plain", "hidden"}

    def test_upsert_then_search_ignores_letter_case(self, loaded: LexicalIndex, scope: Scope) -> None:
        """Words match whatever their letter case in the query or the document: `REDIS Sessions`
        finds `redis-sessions`, `Payments TEAM` finds `Payments Team`. Since 1.5.0."""
        for query, expected in (
            ("REDIS Sessions", "db-redis"),
            ("Payments TEAM", "team-pay"),
            ("PGW", "svc-pay"),
            ("Idempotency KEYS", "svc-pay"),
        ):
            assert expected in ids(self.checked_search(loaded, scope, query)), query

    def test_upsert_replaces_aliases(self, lexical_index: LexicalIndex, scope: Scope) -> None:
        """Upserting an id with other aliases replaces them: an alias the new version lacks stops
        matching, a new one matches, one kept still matches. Since 1.5.0."""
        self.write(lexical_index, scope, [doc("x", "quarry", "h1", aliases=("obsidian", "basalt"))])
        self.write(lexical_index, scope, [doc("x", "quarry", "h2", aliases=("basalt", "zircon"))])
        assert self.checked_search(lexical_index, scope, "obsidian") == []
        for word in ("basalt", "zircon", "quarry"):
            assert [
                (h.entity_id, h.content_hash) for h in self.checked_search(lexical_index, scope, word)
            ] == [("x", "h2")], word

    def test_upsert_of_a_new_hash_alone_is_stored(
        self, loaded: LexicalIndex, scope: Scope, memory_docs: list[LexicalDoc]
    ) -> None:
        """Upserting documents whose text is unchanged but whose content hash is new stores the new
        hash: hashes() and every hit carry it (reconcile would otherwise re-index them forever).
        Since 1.5.0."""
        renewed = with_hash(memory_docs, "renewed")
        self.write(loaded, scope, renewed)
        assert loaded.hashes(scope) == {d.entity_id: d.content_hash for d in renewed}
        hits = self.checked_search(loaded, scope, "checkout payment redis team", k=MAX_K)
        assert hits and all(h.content_hash.startswith("renewed:") for h in hits)

    def test_upsert_batch_repeating_an_id_keeps_the_last(
        self, lexical_index: LexicalIndex, scope: Scope
    ) -> None:
        """A batch naming an id three times stores one document: its last version, as the batch's
        writes applied in order would leave it -- the earlier versions' words find nothing, and the id
        is never returned twice (a bulk "delete every key, then add every document" keeps them all).
        Since 1.5.0."""
        batch = [
            doc("x", "marmalade", "h-first", summary="orange preserve"),
            doc("y", "toast", "h-y", summary="bread"),
            doc("x", "jam", "h-middle", summary="berry preserve"),
            doc("x", "chutney", "h-last", summary="mango relish"),
        ]
        self.write(lexical_index, scope, batch)
        assert lexical_index.hashes(scope) == {"x": "h-last", "y": "h-y"}
        for word in ("marmalade", "orange", "jam", "berry", "preserve"):
            found = self.checked_search(lexical_index, scope, word)
            assert found == [], f"an earlier version matches {word!r}"
        hits = self.checked_search(lexical_index, scope, "chutney mango toast", k=MAX_K)
        assert sorted((h.entity_id, h.content_hash) for h in hits) == [("x", "h-last"), ("y", "h-y")]

    @pytest.mark.parametrize(
        ("query", "expected"),
        [("IT", "team-it"), ("it", "team-it"), ("The Who", "band"), ("the who", "band")],
        ids=["it-upper", "it-lower", "the-who", "the-who-lower"],
    )
    def test_upsert_then_search_finds_names_made_of_stop_words(
        self, lexical_index: LexicalIndex, scope: Scope, query: str, expected: str
    ) -> None:
        """A name (or alias) made only of words an English stop list drops -- the team `IT`, the band
        `The Who` -- is found by its name: names are identifiers, not prose, and a prose analyser on
        them leaves no term to find. Since 1.5.0."""
        self.write(
            lexical_index,
            scope,
            [
                doc("team-it", "IT", "h-it", summary="Laptops, badges and accounts."),
                doc("band", "The Who", "h-band", summary="A rock band from London."),
                doc("plain", "ordinary", "h-plain", summary="Nothing of the kind is in it."),
            ],
        )
        assert expected in ids(self.checked_search(lexical_index, scope, query)), query

    @pytest.mark.parametrize(
        ("query", "expected"),
        [
            ("Москва", "ru"),
            ("МОСКВА", "ru"),
            ("склад", "ru"),
            ("Αθήνα", "el"),
            ("ΑΘΉΝΑ", "el"),
            ("γραφείο", "el"),
            ("東京", "ja"),
            ("Zürich", "de"),
            ("ZÜRICH", "de"),
            ("503", "inc"),
        ],
        ids=[
            "cyrillic-name",
            "cyrillic-name-upper",
            "cyrillic-summary",
            "greek-name",
            "greek-name-upper",
            "greek-summary",
            "cjk-name",
            "accented-name",
            "accented-name-upper",
            "number",
        ],
    )
    def test_upsert_then_search_finds_words_of_any_script(
        self, lexical_index: LexicalIndex, scope: Scope, query: str, expected: str
    ) -> None:
        """A word is a run of Unicode letters and digits, not of ASCII ones: Cyrillic, Greek, CJK and
        accented names and summaries are found by their words, in any letter case (an `[A-Za-z0-9]+`
        tokenizer leaves a Cyrillic name no term at all), and a number is a word. Since 1.5.0."""
        self.write(
            lexical_index,
            scope,
            [
                doc("ru", "Москва", "h-ru", summary="главный склад"),
                doc("el", "Αθήνα", "h-el", summary="γραφείο πωλήσεων"),
                doc("ja", "東京", "h-ja", summary="office"),
                doc("de", "Zürich", "h-de", summary="Büro"),
                doc("inc", "upstream incident", "h-inc", summary="the gateway returned 503"),
                doc("en", "ordinary", "h-en", summary="plain words only"),
            ],
        )
        assert expected in ids(self.checked_search(lexical_index, scope, query)), query


class LexicalDeleteTests(LexicalIndexHarness):
    """delete: named ids leave search and hashes; nothing else changes.

    Troubleshooting: check that delete uses the same (scope, entity_id) key as upsert. Since 1.0.0.
    """

    def test_delete_removes_from_search_and_hashes(
        self, loaded: LexicalIndex, scope: Scope, memory_docs: list[LexicalDoc]
    ) -> None:
        """A deleted id is neither found nor listed; the other documents stay."""
        loaded.delete(scope, ["svc-pay"])
        loaded.flush()
        assert "svc-pay" not in ids(
            self.checked_search(loaded, scope, "payment-gateway pgw idempotency", k=MAX_K)
        )
        expected = {d.entity_id: d.content_hash for d in memory_docs if d.entity_id != "svc-pay"}
        assert loaded.hashes(scope) == expected

    def test_delete_unknown_id_is_a_no_op(
        self, loaded: LexicalIndex, scope: Scope, memory_docs: list[LexicalDoc]
    ) -> None:
        """Deleting ids the scope does not hold (and an empty list) changes nothing."""
        loaded.delete(scope, ["no-such-id", "svc-pay-", "SVC-PAY"])
        loaded.delete(scope, [])
        loaded.flush()
        assert loaded.hashes(scope) == {d.entity_id: d.content_hash for d in memory_docs}

    def test_delete_is_idempotent(self, loaded: LexicalIndex, scope: Scope) -> None:
        """Deleting the same id twice is the same as deleting it once."""
        loaded.delete(scope, ["svc-inv"])
        loaded.delete(scope, ["svc-inv", "svc-inv"])
        loaded.flush()
        assert "svc-inv" not in loaded.hashes(scope)
        assert len(loaded.hashes(scope)) == len(datasets.memory_entities()) - 1

    def test_search_after_deletes_still_returns_k(self, lexical_index: LexicalIndex, scope: Scope) -> None:
        """150 documents match a word, then the 60 that match it best are deleted: a search for it
        returns k of the 90 left (10, 60, and all 90 for k = 100) -- deleted documents are not dropped
        from an answer already cut at k (a tombstone filtered after the engine's top k). Since 1.5.0."""
        strong = [doc(f"s-{i:03d}", "widget widget", f"hs-{i}", summary="widget") for i in range(60)]
        self.write(lexical_index, scope, [*strong, *numbered_docs(90)])
        lexical_index.delete(scope, [d.entity_id for d in strong])
        lexical_index.flush()
        for k in (10, 60, MAX_K):
            hits = self.checked_search(lexical_index, scope, "widget", k=k)
            assert len(hits) == min(k, 90), f"{len(hits)} hits for k={k}, 90 documents left match"
            assert all(h.entity_id.startswith("n-") for h in hits), "a deleted document is found"

    def test_delete_of_more_ids_than_any_batch(self, lexical_index: LexicalIndex, scope: Scope) -> None:
        """One delete of 2,000 of 2,100 documents removes all 2,000 (an adapter that sends a delete in
        batches must send every batch): exactly the 100 others stay, in hashes and in search.
        Since 1.6.0."""
        docs = numbered_docs(LARGE_SCOPE)
        self.write(lexical_index, scope, docs)
        lexical_index.delete(scope, [d.entity_id for d in docs[:2000]])
        lexical_index.flush()
        assert lexical_index.hashes(scope) == {d.entity_id: d.content_hash for d in docs[2000:]}
        hits = self.checked_search(lexical_index, scope, "widget", k=MAX_K)
        assert sorted(ids(hits)) == sorted(d.entity_id for d in docs[2000:])


class LexicalHashesTests(LexicalIndexHarness):
    """hashes: exactly {entity_id: content_hash} of one scope, what reconcile compares with the graph.

    Troubleshooting: hashes must read every document of the scope (no k limit) and nothing else.
    Since 1.0.0.
    """

    def test_hashes_exact_per_scope(self, lexical_index: LexicalIndex, scope: Scope) -> None:
        """hashes(scope) lists every document of the scope, more than a page of them, with its hash."""
        docs = numbered_docs(250)
        self.write(lexical_index, scope, docs)
        assert lexical_index.hashes(scope) == {d.entity_id: d.content_hash for d in docs}


class LexicalIsolationTests(LexicalIndexHarness):
    """Isolation: identical documents (same ids, names, aliases, text) in `scope`, another tenant, a
    sibling namespace and a shared code graph never cross. The copies differ only in content hash, so
    a hit relabelled with the caller's scope is caught too.

    Troubleshooting: the scope must be inside the backend query and in the upsert/delete key — all
    three of tenant_id, namespace and graph_id, with graph_id "" a real value. Since 1.0.0.
    """

    @pytest.fixture
    def four_copies(
        self, lexical_index: LexicalIndex, request: pytest.FixtureRequest, memory_docs: list[LexicalDoc]
    ) -> dict[Scope, list[LexicalDoc]]:
        scopes = [request.getfixturevalue("scope"), *adversarial_scopes(request)]
        copies = {s: with_hash(memory_docs, f"copy{i}") for i, s in enumerate(scopes)}
        for s, docs in copies.items():
            lexical_index.upsert(s, docs)
        lexical_index.flush()
        return copies

    @pytest.mark.parametrize(
        "query", ["checkout-api", "payments team owns card processing", "redis", "svc-pay"]
    )
    def test_search_never_crosses_scopes(
        self, lexical_index: LexicalIndex, four_copies: dict[Scope, list[LexicalDoc]], query: str
    ) -> None:
        """Each scope's search returns only its own copies, with the scope and hash stored with them."""
        for s, docs in four_copies.items():
            hits = self.checked_search(lexical_index, s, query, k=MAX_K)
            assert hits, f"no hit for {query!r} in {s}"
            own = {d.entity_id: d.content_hash for d in docs}
            assert all(own.get(h.entity_id) == h.content_hash for h in hits), (s, hits)
            assert len(ids(hits)) == len(set(ids(hits)))

    def test_hashes_never_cross_scopes(
        self, lexical_index: LexicalIndex, four_copies: dict[Scope, list[LexicalDoc]]
    ) -> None:
        """hashes(scope) is exactly that scope's copies."""
        for s, docs in four_copies.items():
            assert lexical_index.hashes(s) == {d.entity_id: d.content_hash for d in docs}

    def test_delete_never_crosses_scopes(
        self, lexical_index: LexicalIndex, four_copies: dict[Scope, list[LexicalDoc]], scope: Scope
    ) -> None:
        """Deleting ids in one scope leaves the same ids in every other scope."""
        lexical_index.delete(scope, [d.entity_id for d in four_copies[scope]])
        lexical_index.flush()
        assert lexical_index.hashes(scope) == {}
        assert self.checked_search(lexical_index, scope, "checkout-api") == []
        for s, docs in four_copies.items():
            if s != scope:
                assert lexical_index.hashes(s) == {d.entity_id: d.content_hash for d in docs}
                assert "svc-checkout" in ids(self.checked_search(lexical_index, s, "checkout-api"))

    def test_upsert_never_crosses_scopes(
        self, lexical_index: LexicalIndex, four_copies: dict[Scope, list[LexicalDoc]], scope: Scope
    ) -> None:
        """Replacing a document in one scope leaves the same id's copies elsewhere unchanged."""
        self.write(lexical_index, scope, [doc("svc-pay", "quartz-ledger", "h-replaced")])
        assert lexical_index.hashes(scope)["svc-pay"] == "h-replaced"
        for s, docs in four_copies.items():
            if s != scope:
                assert lexical_index.hashes(s) == {d.entity_id: d.content_hash for d in docs}
                assert "svc-pay" not in ids(self.checked_search(lexical_index, s, "quartz-ledger"))

    def test_scopes_whose_joined_names_agree_never_share_a_document(
        self, lexical_index: LexicalIndex, scope: Scope
    ) -> None:
        """Scopes that differ only in where a separator stands (`t:x`/`y` and `t`/`x:y`, ...: see
        `joined_twins`) each keep their own copy of an id through upserts and a delete: the key is the
        three parts, not a string joined from them. Since 1.6.0."""
        pairs = joined_twins(scope)
        for n, (a, b) in enumerate(pairs):
            lexical_index.upsert(a, [doc("twin", f"quartz twin{n}", f"a{n}")])
            lexical_index.upsert(b, [doc("twin", f"quartz twin{n}", f"b{n}")])
        lexical_index.flush()
        for n, (a, b) in enumerate(pairs):
            assert lexical_index.hashes(a) == {"twin": f"a{n}"}, (a, b)
            assert lexical_index.hashes(b) == {"twin": f"b{n}"}, (a, b)
            assert [h.content_hash for h in self.checked_search(lexical_index, b, "quartz")] == [f"b{n}"]
        for a, _ in pairs:
            lexical_index.delete(a, ["twin"])
        lexical_index.flush()
        for n, (a, b) in enumerate(pairs):
            assert lexical_index.hashes(a) == {}, (a, b)
            assert lexical_index.hashes(b) == {"twin": f"b{n}"}, (a, b)

    def test_search_other_scope_only_text_is_not_found(
        self, lexical_index: LexicalIndex, request: pytest.FixtureRequest, scope: Scope
    ) -> None:
        """Text that only another scope holds finds nothing in `scope`."""
        self.write(lexical_index, scope, [doc("mine", "ordinary thing", "h-mine")])
        for s in adversarial_scopes(request):
            self.write(
                lexical_index, s, [doc("theirs", "zanzibar secret", "h-theirs", aliases=("zanzibar",))]
            )
        assert self.checked_search(lexical_index, scope, "zanzibar secret") == []


class LexicalInjectionTests(LexicalIndexHarness):
    """Query text is analysed, never parsed: injection payloads are words, as queries and as data.

    Troubleshooting: never hand user text to a query parser (tantivy's lets `tenant_id:x` through);
    build term queries from the analyser's tokens and add the scope as a required clause. Since 1.0.0.
    """

    @pytest.fixture
    def injected(
        self, lexical_index: LexicalIndex, request: pytest.FixtureRequest, scope: Scope
    ) -> LexicalIndex:
        """`scope` holds the injection documents; every adversarial scope holds them too, plus the
        memory documents, under other hashes."""
        inj = datasets.lexical_docs(datasets.injection_entities())
        self.write(lexical_index, scope, inj)
        memory = datasets.lexical_docs(datasets.memory_entities())
        for s in adversarial_scopes(request):
            self.write(lexical_index, s, with_hash([*inj, *memory], "foreign"))
        return lexical_index

    def _targeted(self, request: pytest.FixtureRequest) -> list[str]:
        other, sibling, graph = adversarial_scopes(request)
        return [
            *datasets.INJECTION_PAYLOADS,
            f"tenant_id:{other.tenant_id}",
            f"tenant_id:{other.tenant_id} OR name:*",
            f"x' OR tenant_id='{other.tenant_id}",
            f"namespace:{sibling.namespace} OR namespace:*",
            f"graph_id:{graph.graph_id}",
            "tenant_id:* OR entity_id:* OR content_hash:*",
        ]

    def test_search_injection_never_widens_scope(
        self, injected: LexicalIndex, request: pytest.FixtureRequest, scope: Scope
    ) -> None:
        """Payloads (including ones naming the other tenant's real id) return only `scope`'s documents."""
        own = injected.hashes(scope)
        for payload in self._targeted(request):
            hits = self.checked_search(injected, scope, payload, k=MAX_K)
            assert all(own.get(h.entity_id) == h.content_hash for h in hits), (payload, hits)

    def test_search_injection_payload_is_found_literally(self, injected: LexicalIndex, scope: Scope) -> None:
        """A stored payload (up to 256 characters, with a word in it) is found by its own text."""
        for i, payload in enumerate(datasets.INJECTION_PAYLOADS):
            if _WORD.search(payload) and len(payload) <= 256:
                assert f"inj-{i:02d}" in ids(self.checked_search(injected, scope, payload)), payload

    def test_search_wildcard_is_literal(self, injected: LexicalIndex, scope: Scope) -> None:
        """`*`, `name:*` and `?*` match only documents holding their words or the literal symbols."""
        text = {f"inj-{i:02d}": p for i, p in enumerate(datasets.INJECTION_PAYLOADS)}
        for query in ("*", "?*", "name:*"):
            words = [w.lower() for w in _WORD.findall(query)]
            allowed = {i for i, p in text.items() if query in p or any(w in p.lower() for w in words)}
            found = set(ids(self.checked_search(injected, scope, query, k=MAX_K)))
            assert found <= allowed, (query, found - allowed)
            assert len(found) < len(text), f"{query!r} matched every document"

    def test_upsert_injection_ids_are_stored_literally(
        self, lexical_index: LexicalIndex, scope: Scope
    ) -> None:
        """Payloads used as entity ids round-trip exactly through hashes, search and delete."""
        payloads = [p for p in datasets.INJECTION_PAYLOADS if len(p.encode()) <= 512]
        docs = [doc(p, f"payload holder {i}", f"h-{i}", summary="quokka") for i, p in enumerate(payloads)]
        self.write(lexical_index, scope, docs)
        assert lexical_index.hashes(scope) == {d.entity_id: d.content_hash for d in docs}
        assert set(ids(self.checked_search(lexical_index, scope, "quokka", k=MAX_K))) == set(payloads)
        lexical_index.delete(scope, [payloads[2]])
        lexical_index.flush()
        assert set(lexical_index.hashes(scope)) == set(payloads) - {payloads[2]}


class LexicalOrderingTests(LexicalIndexHarness):
    """Ordering and determinism: score descending, then entity_id ascending; repeatable.

    Troubleshooting: engines break equal scores by internal doc order; fetch past k while the k-th
    score is tied and sort by (-score, entity_id). Since 1.0.0.
    """

    @pytest.fixture
    def tied(self, lexical_index: LexicalIndex, scope: Scope) -> LexicalIndex:
        """datasets.ties(): 12 documents equal in everything but their id, written in shuffled order."""
        self.write(lexical_index, scope, datasets.lexical_docs(datasets.ties()))
        return lexical_index

    def test_search_ties_ordered_by_entity_id(self, tied: LexicalIndex, scope: Scope) -> None:
        """Equal-scoring hits come in entity_id order with equal scores."""
        hits = self.checked_search(tied, scope, "same name", k=MAX_K)
        assert ids(hits) == sorted(e.id for e in datasets.ties())
        assert len({h.score for h in hits}) == 1

    @pytest.mark.parametrize("k", [1, 5, 11])
    def test_search_ties_cut_at_k_by_entity_id(self, tied: LexicalIndex, scope: Scope, k: int) -> None:
        """When a tie straddles the k-th position, the k smallest ids are returned."""
        assert (
            ids(self.checked_search(tied, scope, "same words", k=k))
            == sorted(e.id for e in datasets.ties())[:k]
        )

    @pytest.mark.parametrize("k", [1, 3, 9])
    def test_search_ties_ordered_by_code_point(
        self, lexical_index: LexicalIndex, scope: Scope, k: int
    ) -> None:
        """Tied ids in upper and lower case, digits, punctuation and accents come in code-point order
        (`B` before `a`, `É` before `é`), not case-folded or collated. Since 1.6.0."""
        tied = ["a", "B", "Z", "_x", "é", "É", "0", "a-1", "a_1"]
        self.write(lexical_index, scope, [doc(i, "tied quartz", f"h-{n}") for n, i in enumerate(tied)])
        hits = self.checked_search(lexical_index, scope, "tied quartz", k=k)
        assert ids(hits) == sorted(tied)[:k] and len({h.score for h in hits}) == 1

    def test_search_scores_descending(self, loaded: LexicalIndex, scope: Scope) -> None:
        """Hits of a mixed-relevance query come in non-increasing score order (the harness checks it)."""
        hits = self.checked_search(loaded, scope, "checkout payment redis sessions team owns", k=MAX_K)
        assert len(hits) >= 4
        assert all(a.score >= b.score for a, b in itertools.pairwise(hits))
        assert len({h.score for h in hits}) > 1, "a mixed query should give unequal scores"

    def test_search_rare_terms_weigh_more(self, lexical_index: LexicalIndex, scope: Scope) -> None:
        """BM25 weighs a term by its rarity (inverse document frequency): with one query word in 30
        documents and the other in one, the document holding the rare word ranks first, although the
        others hold the common word twice and sort before it by id. Since 1.5.0."""
        self.write(lexical_index, scope, [*numbered_docs(30, "widget"), doc("z-rare", "sprocket", "hz")])
        hits = self.checked_search(lexical_index, scope, "widget sprocket", k=MAX_K)
        assert ids(hits)[:1] == ["z-rare"]
        assert len(hits) == 31

    def test_search_repeated_is_identical(self, loaded: LexicalIndex, scope: Scope) -> None:
        """The same search on the same data gives the same hits, scores and order every time."""
        for query in ("checkout", "payments team card", "sessions redis postgres"):
            first = self.checked_search(loaded, scope, query)
            assert first
            for _ in range(3):
                self.assert_same_hits(first, self.checked_search(loaded, scope, query))


class LexicalLimitTests(LexicalIndexHarness):
    """k: clamped to [1, 100]; never more hits than that; exactly that many when enough match.

    Troubleshooting: clamp k before the engine sees it (0 and negatives mean 1). Since 1.0.0.
    """

    @pytest.fixture
    def many(self, lexical_index: LexicalIndex, scope: Scope) -> LexicalIndex:
        """150 documents that all match `widget`."""
        self.write(lexical_index, scope, numbered_docs(150))
        return lexical_index

    @pytest.mark.parametrize(
        ("k", "expected"), [(-5, 1), (0, 1), (1, 1), (7, 7), (100, 100), (101, 100), (10_000, 100)]
    )
    def test_search_k_is_clamped(self, many: LexicalIndex, scope: Scope, k: int, expected: int) -> None:
        """search returns exactly clamp(k, 1, 100) hits when more documents than that match."""
        assert len(self.checked_search(many, scope, "widget", k=k)) == expected

    def test_search_fewer_matches_than_k(self, loaded: LexicalIndex, scope: Scope) -> None:
        """With fewer matches than k, every match is returned once and nothing else."""
        hits = self.checked_search(loaded, scope, "pgw", k=MAX_K)
        assert ids(hits) == ["svc-pay"]


class LexicalEmptyQueryTests(LexicalIndexHarness):
    """Queries with no searchable term return [] (never an error, never everything).

    Troubleshooting: return [] when the analyser yields no token instead of building an empty
    boolean query (which some engines treat as match-all). Since 1.0.0.
    """

    @pytest.mark.parametrize("text", ["", " ", "\t\n  ", "\u3000"])
    def test_search_no_term_query_returns_empty(self, loaded: LexicalIndex, scope: Scope, text: str) -> None:
        """Empty and blank text returns an empty list."""
        assert self.checked_search(loaded, scope, text) == []

    def test_search_unmatched_query_returns_empty(self, loaded: LexicalIndex, scope: Scope) -> None:
        """Words no document holds return an empty list."""
        assert self.checked_search(loaded, scope, "xylophone quasar zeppelin") == []

    def test_search_empty_scope_returns_empty(self, loaded: LexicalIndex, scope: Scope) -> None:
        """A scope that holds nothing returns an empty list even when others match."""
        assert (
            self.checked_search(loaded, Scope(scope.tenant_id + "-empty", scope.namespace), "checkout") == []
        )


class LexicalVisibilityTests(LexicalIndexHarness):
    """flush(): every write before it is visible after it; the suite promises nothing before it.

    Troubleshooting: if a second write is not visible, the adapter keeps a stale reader; flush must
    reload it. Since 1.0.0.
    """

    def test_flush_makes_each_write_visible(self, lexical_index: LexicalIndex, scope: Scope) -> None:
        """Interleaved writes, flushes and reads: each read sees every write flushed before it."""
        self.write(lexical_index, scope, [doc("a", "aardvark", "ha")])
        assert ids(self.checked_search(lexical_index, scope, "aardvark")) == ["a"]
        self.write(lexical_index, scope, [doc("b", "aardvark badger", "hb")])
        assert set(ids(self.checked_search(lexical_index, scope, "aardvark"))) == {"a", "b"}
        lexical_index.delete(scope, ["a"])
        lexical_index.flush()
        assert ids(self.checked_search(lexical_index, scope, "aardvark")) == ["b"]
        assert lexical_index.hashes(scope) == {"b": "hb"}

    def test_flush_without_writes_changes_nothing(self, loaded: LexicalIndex, scope: Scope) -> None:
        """Repeated flushes leave answers and hashes unchanged."""
        before = (self.checked_search(loaded, scope, "checkout"), loaded.hashes(scope))
        loaded.flush()
        loaded.flush()
        self.assert_same_hits(before[0], self.checked_search(loaded, scope, "checkout"))
        assert loaded.hashes(scope) == before[1]


class LexicalIdentifierTests(LexicalIndexHarness):
    """Optional analysis: identifier parts, whole-identifier ranking and English word forms, each
    behind its `Capabilities.extra` flag (skipped with the flag's name when absent).

    Troubleshooting: identifier parts come from splitting camelCase, snake_case, kebab-case and
    dotted names and indexing the parts next to the whole. Since 1.0.0.
    """

    @pytest.fixture
    def code(self, lexical_index: LexicalIndex, scope: Scope) -> LexicalIndex:
        docs = [
            *datasets.lexical_docs(datasets.code_entities()),
            *datasets.lexical_docs(datasets.memory_entities()),
            doc(
                "camel", "parseHttpRequest", "hc", qualified_name="net.http.parseHttpRequest", type="function"
            ),
        ]
        self.write(lexical_index, scope, docs)
        return lexical_index

    @requires("identifier_analysis")
    @pytest.mark.parametrize(
        ("query", "expected"),
        [
            ("http request", "camel"),
            ("parse", "camel"),
            ("item", "m-add"),
            ("price", "f-price"),
            ("pricing", "f-price"),
        ],
    )
    def test_search_finds_by_identifier_parts(
        self, code: LexicalIndex, scope: Scope, query: str, expected: str
    ) -> None:
        """A part of a camelCase, snake_case or dotted identifier finds the entity."""
        assert expected in ids(self.checked_search(code, scope, query))

    @requires("exact_identifier_field")
    @pytest.mark.parametrize(
        ("query", "expected"),
        [
            ("PAY-502-UPSTREAM", "svc-pay"),
            ("shop.cart.Cart.add_item", "m-add"),
            ("parseHttpRequest", "camel"),
        ],
    )
    def test_search_exact_identifier_ranks_first(
        self, code: LexicalIndex, scope: Scope, query: str, expected: str
    ) -> None:
        """A whole name, alias or qualified name ranks its entity first."""
        assert ids(self.checked_search(code, scope, query))[:1] == [expected]

    @requires("exact_identifier_field")
    @pytest.mark.parametrize("query", ["ledger", "Ledger", "gl", "GL"])
    def test_search_whole_name_outranks_documents_full_of_the_word(
        self, lexical_index: LexicalIndex, scope: Scope, query: str
    ) -> None:
        """A one-word name (or alias) that is the whole query ranks its entity first even where other
        documents repeat the word in every field BM25 weighs: the whole-name promise is not a boost
        that term frequency can outweigh. Since 1.5.0."""
        word = query.lower()
        crowd = [
            doc(
                f"crowd-{i}", f"{word.title()}Service{i}", f"h{i}", aliases=(f"{word}-{i}",),
                qualified_name=f"billing.{word}.{word}_{i}", path=f"billing/{word}/{word}_{i}.py",
                summary=" ".join([word] * 40), text=" ".join([word] * 200),
            )
            for i in range(6)
        ]  # fmt: skip
        named = doc("the-one", "ledger", "h-one", aliases=("gl",), summary="Accounts and balances.")
        self.write(lexical_index, scope, [*crowd, named])
        assert ids(self.checked_search(lexical_index, scope, query))[:1] == ["the-one"]

    @requires("stemming")
    def test_search_matches_english_word_forms(self, loaded: LexicalIndex, scope: Scope) -> None:
        """Inflected forms meet: `charging card` finds the summary `charges cards`."""
        assert "svc-checkout" in ids(self.checked_search(loaded, scope, "charging card"))


# ---- aggregates ---------------------------------------------------------------------------------


class LexicalBoundaryTests(LexicalIndexHarness):
    """The edges of the promise: a scope larger than any page, ties larger than k plus any
    over-fetch, a scope filter applied before the cut, delete then re-create, and texts at their
    bounds with control characters.

    Troubleshooting: `hashes` must page through the whole scope (no fixed 1,000); ties must be ordered
    by entity id across however many documents share the k-th score (fetch until the tie ends, then
    sort); the scope must be a clause of the backend query, never a filter applied to a global top-k;
    a delete must remove every term of the document. Since 1.2.0.
    """

    def test_hashes_of_a_scope_larger_than_any_page(
        self, lexical_index: LexicalIndex, scope: Scope, other_scope: Scope
    ) -> None:
        """2,100 documents (and another tenant's 700 interleaved): hashes lists every one."""
        docs = numbered_docs(LARGE_SCOPE)
        theirs = with_hash(docs[::3], "theirs")
        for start in range(0, LARGE_SCOPE, 700):
            lexical_index.upsert(other_scope, theirs[start // 3 : (start + 700) // 3])
            lexical_index.upsert(scope, docs[start : start + 700])
        lexical_index.flush()
        assert lexical_index.hashes(scope) == {d.entity_id: d.content_hash for d in docs}
        assert lexical_index.hashes(other_scope) == {d.entity_id: d.content_hash for d in theirs}

    @pytest.mark.parametrize("k", [1, 10, 37, 100])
    def test_search_ties_larger_than_k_and_any_overfetch(
        self, lexical_index: LexicalIndex, scope: Scope, k: int
    ) -> None:
        """150 documents with the same text, written in a shuffled order: the k smallest ids."""
        order = [(i * 37) % TIES for i in range(TIES)]
        self.write(lexical_index, scope, [doc(f"t{i:03d}", "tied quartz", f"h{i}") for i in order])
        self.write(lexical_index, scope, [doc("weaker", "tied quartz and many other words besides", "h")])
        hits = self.checked_search(lexical_index, scope, "tied quartz", k=k)
        assert ids(hits) == [f"t{i:03d}" for i in range(TIES)][:k]
        assert len({h.score for h in hits}) == 1

    def test_search_filters_by_scope_before_the_cut(
        self, lexical_index: LexicalIndex, request: pytest.FixtureRequest
    ) -> None:
        """Other scopes hold 40 documents each that match better than the scope's own two: the scope's
        search still returns its own two, whatever k."""
        scope = request.getfixturevalue("scope")
        adversaries = [*adversarial_scopes(request), Scope(scope.tenant_id[:-1] + "-0", scope.namespace)]
        for a in adversaries:
            lexical_index.upsert(a, [doc(f"f{i:02d}", "needle needle", f"foreign{i}") for i in range(40)])
        own = [
            doc("own-1", "a needle in a long haystack of unrelated words and more words", "o1"),
            doc("own-2", "another needle lost among very many other ordinary words here", "o2"),
        ]
        self.write(lexical_index, scope, own)
        for k in (1, 2, 10, MAX_K):
            hits = self.checked_search(lexical_index, scope, "needle", k=k)
            assert len(hits) == min(k, 2) and set(ids(hits)) <= {"own-1", "own-2"}, (k, ids(hits))

    def test_delete_then_recreate_finds_only_the_new_text(
        self, lexical_index: LexicalIndex, scope: Scope
    ) -> None:
        """An id deleted and written again is found by its new text only, with its new hash."""
        self.write(
            lexical_index, scope, [doc("x", "quartz", "h-old", aliases=("obsidian",), summary="garnet")]
        )
        lexical_index.delete(scope, ["x"])
        self.write(lexical_index, scope, [doc("x", "zircon", "h-new")])
        for word in ("quartz", "obsidian", "garnet"):
            assert self.checked_search(lexical_index, scope, word) == [], word
        assert [
            (h.entity_id, h.content_hash) for h in self.checked_search(lexical_index, scope, "zircon")
        ] == [("x", "h-new")]
        assert lexical_index.hashes(scope) == {"x": "h-new"}

    def test_texts_at_their_bounds_with_control_characters(
        self, lexical_index: LexicalIndex, scope: Scope
    ) -> None:
        """A 4 KiB summary, a 1 KiB name and alias and control characters everywhere: stored, found by a
        word, and listed with the hash given."""
        control = "".join(chr(c) for c in (*range(1, 32), 0x7F)) + "\u2028\ufeff"
        filler = "lorem " * 700
        big = doc(
            f"id{control}",
            ("basalt " + "x" * 1100)[:1020] + "end",
            f"hash{control}",
            aliases=(("pumice " + "y" * 1100)[:1024],),
            summary=(f"tuff {control} " + filler)[:4090] + " tail",
            qualified_name=f"pkg.mod{control}",
        )
        self.write(lexical_index, scope, [big])
        for word in ("basalt", "pumice", "tuff"):
            assert [h.entity_id for h in self.checked_search(lexical_index, scope, word)] == [
                big.entity_id
            ], word
        assert lexical_index.hashes(scope) == {big.entity_id: big.content_hash}

    def test_search_query_at_its_bound_counts_every_word(
        self, lexical_index: LexicalIndex, scope: Scope
    ) -> None:
        """A query of up to 4 KiB (the service's bound on query text; here about 700 words, most of
        which match nothing): a document holding only its first word and one holding only its last
        are both found -- the query is not cut to its first words, nor refused for its number of
        clauses (Lucene's default allows 1,024). Since 1.5.0."""
        filler = [f"qx{a}{b}{c}" for a, b, c in itertools.product("bcdfghjkm", repeat=3)]
        words = ["sprocket"]
        for word in filler:
            if len(" ".join([*words, word, "gimbal"]).encode()) > QUERY_BYTES:
                break
            words.append(word)
        query = " ".join([*words, "gimbal"])
        assert len(words) > 500 and len(query.encode()) <= QUERY_BYTES
        self.write(
            lexical_index,
            scope,
            [doc("first", "sprocket", "h-first"), doc("last", "gimbal", "h-last"), *numbered_docs(20)],
        )
        assert sorted(ids(self.checked_search(lexical_index, scope, query))) == ["first", "last"]


class LexicalDurabilityTests(LexicalIndexHarness):
    """close() then open again: the index holds exactly what it held, and takes writes as before.
    Needs `durable` and the `reopen_lexical_index` hook. Since 1.5.0.

    Troubleshooting: commit every write before close; register on every open what the engine does
    not persist (tantivy keeps no custom analyser: an index that registers its analysers only when it
    creates the directory cannot write once opened again).
    """

    @requires("durable")
    def test_close_then_reopen_keeps_every_write(
        self, lexical_index: LexicalIndex, scope: Scope, request: pytest.FixtureRequest
    ) -> None:
        """Documents with ids of any characters, one replaced, two deleted, then close and open again:
        the same hashes, the replaced one found by its new words only, the deleted ones by nothing;
        and the index opened again takes a new document, a replace and a delete like the first."""
        try:
            reopen = request.getfixturevalue("reopen_lexical_index")
        except NotImplementedError:
            contract_skip(
                request.node, "no `reopen_lexical_index` hook", flags=("reopen_lexical_index",), hook=True
            )
        payloads = [p for p in datasets.INJECTION_PAYLOADS if len(p.encode()) <= 512]
        docs = [
            doc("plain", "walrus", "h-plain", summary="tusks and flippers"),
            doc("keeper", "narwhal", "h-keeper", aliases=("unicorn",), summary="charges through ice"),
            *(doc(p, f"holder {i}", f"h-{i}", summary="quokka") for i, p in enumerate(payloads)),
        ]
        self.write(lexical_index, scope, docs)
        self.write(lexical_index, scope, [doc("keeper", "beluga", "h-replaced", summary="white whale")])
        deleted = ["plain", payloads[0]]
        lexical_index.delete(scope, deleted)
        lexical_index.flush()
        expected = {d.entity_id: d.content_hash for d in docs if d.entity_id not in deleted}
        expected["keeper"] = "h-replaced"
        assert lexical_index.hashes(scope) == expected
        lexical_index.close()
        again = reopen(lexical_index)
        try:
            assert again.hashes(scope) == expected, "the index opened again does not hold what it held"
            assert self.checked_search(again, scope, "walrus tusks") == [], "a deleted document is back"
            assert self.checked_search(again, scope, "narwhal unicorn") == [], "a replaced version is back"
            hits = self.checked_search(again, scope, "beluga whale")
            assert [(h.entity_id, h.content_hash) for h in hits] == [("keeper", "h-replaced")]
            quokkas = set(ids(self.checked_search(again, scope, "quokka", k=MAX_K)))
            assert quokkas == set(payloads) - set(deleted)
            self.write(again, scope, [doc("late", "ocelot", "h-late", summary="spotted cat charging")])
            self.write(again, scope, [doc("keeper", "orca", "h-orca", summary="black and white")])
            again.delete(scope, [payloads[1]])
            again.flush()
            assert ids(self.checked_search(again, scope, "ocelot spotted")) == ["late"]
            assert ids(self.checked_search(again, scope, "orca")) == ["keeper"]
            assert self.checked_search(again, scope, "beluga") == []
            assert payloads[1] not in again.hashes(scope)
        finally:
            again.close()


class LexicalIndexCoreContract(
    LexicalPortTests,
    LexicalUpsertTests,
    LexicalDeleteTests,
    LexicalHashesTests,
    LexicalIsolationTests,
    LexicalInjectionTests,
    LexicalOrderingTests,
    LexicalLimitTests,
    LexicalEmptyQueryTests,
    LexicalVisibilityTests,
    LexicalBoundaryTests,
    LexicalDurabilityTests,
):
    """Everything every lexical adapter must pass. Subclass it and override `lexical_index`."""


class LexicalIndexContract(LexicalIndexCoreContract, LexicalIdentifierTests):
    """The full lexical contract: the core plus the capability-gated identifier analysis tests.

    Usage::

        class TestMyLexicalIndex(LexicalIndexContract):
            @pytest.fixture
            def lexical_index(self, tmp_path):
                index = MyLexicalIndex(tmp_path / "lexical")
                yield index
                index.close()
    """
