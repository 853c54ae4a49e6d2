"""The tantivy lexical index through its public interface: analysis, ranking, isolation, writes."""

from __future__ import annotations

import contextlib
import random
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import tantivy

from graphctx.adapters.tantivy import (
    MAX_K,
    TantivyLexicalIndex,
    create_lexical_index,
    exact_terms,
    identifier_tokens,
)
from graphctx.adapters.tantivy.writer import WriterProcess
from graphctx.errors import BackendError, BackendUnavailable, InputError
from graphctx.kernel.ports import LexicalDoc, LexicalHit, LexicalIndex
from graphctx.scope import Scope
from graphctx.settings import Settings

T1 = Scope("t1")
T2 = Scope("t2")


def doc(entity_id: str, name: str, content_hash: str = "h", **fields: object) -> LexicalDoc:
    return LexicalDoc(entity_id=entity_id, name=name, content_hash=content_hash, **fields)


def ids(hits: list[LexicalHit]) -> list[str]:
    return [h.entity_id for h in hits]


@pytest.fixture
def index() -> Iterator[TantivyLexicalIndex]:
    ix = TantivyLexicalIndex(None)
    yield ix
    ix.close()


# analysis -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("getUserName", ["get", "user", "name", "getusername"]),
        ("HTTPServerError", ["http", "server", "error", "httpservererror"]),
        ("os.path.join", ["os", "path", "join", "os.path.join"]),
        ("get_user_name", ["get", "user", "name", "get_user_name"]),
        ("std::vec::Vec", ["std", "vec", "vec", "std::vec::vec"]),
        ("core/scope.py", ["core", "scope", "py", "core/scope.py"]),
        ("utf8Decode", ["utf", "8", "decode", "utf8decode"]),
        ("IOError", ["io", "error", "ioerror"]),
        ("naïveÉtat", ["naive", "etat", "naiveetat"]),
        ("user", ["user"]),
        ('"getUserName" (x)', ["get", "user", "name", "getusername", "x"]),
        ("* 😀 ...", []),
    ],
)
def test_identifier_tokens(text: str, tokens: list[str]) -> None:
    assert identifier_tokens(text) == tokens


def test_exact_terms_meet_across_naming_conventions() -> None:
    joined = {"getusername"}
    for name in ("getUserName", "get_user_name", "GetUserName", "get-user-name"):
        assert joined <= set(exact_terms(name)), name
    assert exact_terms("  Os.Path.JOIN ") == ["os.path.join", "ospathjoin"]


# protocol -----------------------------------------------------------------------------------------


def test_implements_the_port(index: TantivyLexicalIndex) -> None:
    assert isinstance(index, LexicalIndex)
    assert index.name == "tantivy"
    assert index.capabilities.durable is False
    assert index.capabilities.extra["identifier_analysis"] is True


# ranking ------------------------------------------------------------------------------------------


@pytest.fixture
def code_index(index: TantivyLexicalIndex) -> TantivyLexicalIndex:
    index.upsert(
        T1,
        [
            doc("e1", "getUserName", summary="Returns the name of the signed-in account.", type="method"),
            doc("e2", "setUserEmail", summary="Stores an email address."),
            doc("e3", "render", summary="Draws the user name badge on the page."),
            doc("e4", "join", qualified_name="os.path.join", path="Lib/posixpath.py"),
            doc("e5", "HTTPServerError", aliases=("http_5xx",), summary="Raised on 5xx responses."),
        ],
    )
    index.flush()
    return index


@pytest.mark.parametrize("query", ["getUserName", "get_user_name", "GETUSERNAME", "get-user-name"])
def test_identifier_is_found_first_by_every_spelling(code_index: TantivyLexicalIndex, query: str) -> None:
    assert ids(code_index.search(T1, query, 5))[0] == "e1"


@pytest.mark.parametrize("query", ["user name", "get user"])
def test_identifier_is_found_by_its_parts(code_index: TantivyLexicalIndex, query: str) -> None:
    # parts are words: with the measured weights a summary that uses them may rank beside the name
    assert "e1" in ids(code_index.search(T1, query, 5))[:2]


def test_exact_name_ranks_above_summary_mentions(code_index: TantivyLexicalIndex) -> None:
    hits = code_index.search(T1, "getUserName", 5)
    assert ids(hits)[0] == "e1"
    assert hits[0].score > hits[1].score


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("os.path.join", "e4"),
        ("path join", "e4"),
        ("posixpath", "e4"),
        ("server error", "e5"),
        ("http_5xx", "e5"),
        ("responses", "e5"),
        ("raise response", "e5"),  # stemmed: raised/raise, responses/response
        ("method", "e1"),
    ],
)
def test_fields_are_searchable(code_index: TantivyLexicalIndex, query: str, expected: str) -> None:
    assert ids(code_index.search(T1, query, 3))[0] == expected


def test_hits_carry_stored_scope_and_hash(code_index: TantivyLexicalIndex) -> None:
    (hit,) = code_index.search(T1, "setUserEmail", 1)
    assert (hit.entity_id, hit.tenant_id, hit.namespace, hit.graph_id) == ("e2", "t1", "default", "")
    assert hit.content_hash == "h"
    assert hit.score > 0


def test_no_tokens_means_no_hits(code_index: TantivyLexicalIndex) -> None:
    for query in ("", "   ", "*", "...", "😀😀", "()", "\t\n"):
        assert code_index.search(T1, query, 5) == []


def test_wrong_argument_types_are_input_errors(index: TantivyLexicalIndex) -> None:
    with pytest.raises(InputError):
        index.search(T1, None, 5)
    with pytest.raises(InputError):
        index.search(T1, "x", True)


# isolation ----------------------------------------------------------------------------------------

SCOPES = [
    Scope("t1"),
    Scope("t2"),
    Scope("t1", "other"),
    Scope("t1", "default", "g1"),
    Scope("t1", "default", "g2"),
]


@pytest.fixture
def twins(index: TantivyLexicalIndex) -> TantivyLexicalIndex:
    """Identical ids, names and text in every scope; only the content hash tells them apart."""
    for n, scope in enumerate(SCOPES):
        index.upsert(
            scope,
            [
                doc("same", "getUserName", f"h{n}", summary="shared words tenant_id t2"),
                doc("other", "renderPage", f"h{n}", summary="shared words"),
            ],
        )
    index.flush()
    return index


@pytest.mark.parametrize("scope", SCOPES)
def test_search_and_hashes_stay_in_scope(twins: TantivyLexicalIndex, scope: Scope) -> None:
    n = SCOPES.index(scope)
    hits = twins.search(scope, "shared words getUserName", 10)
    assert ids(hits) == ["same", "other"]
    for hit in hits:
        assert scope.contains(hit.tenant_id, hit.namespace, hit.graph_id)
        assert hit.content_hash == f"h{n}"
    assert twins.hashes(scope) == {"same": f"h{n}", "other": f"h{n}"}


def test_empty_graph_id_is_its_own_scope(twins: TantivyLexicalIndex) -> None:
    assert Scope("t1").graph_id == ""
    hits = twins.search(Scope("t1"), "renderPage", 10)
    assert [(h.graph_id, h.content_hash) for h in hits] == [("", "h0")]
    assert twins.hashes(Scope("t3")) == {}
    assert twins.search(Scope("t3"), "renderPage", 10) == []


def test_delete_and_upsert_never_cross_scopes(twins: TantivyLexicalIndex) -> None:
    twins.delete(T1, ["same"])
    twins.upsert(T2, [doc("other", "renamed", "new")])
    twins.flush()
    assert twins.hashes(T1) == {"other": "h0"}
    assert twins.hashes(T2) == {"same": "h1", "other": "new"}
    for n, scope in enumerate(SCOPES[2:], start=2):
        assert twins.hashes(scope) == {"same": f"h{n}", "other": f"h{n}"}
    assert ids(twins.search(T1, "getUserName", 10)) == []
    assert ids(twins.search(SCOPES[2], "getUserName", 10)) == ["same"]


INJECTIONS = [
    "name:foo OR tenant_id:t2",
    "tenant_id:t2",
    "*",
    'user "unbalanced',
    "foo AND (bar",
    "+user -name",
    "user^100",
    "entity_id:[a TO z]",
    "name:/.*/",
    "graph_id:g1 namespace:other",
    "' OR 1=1 --",
    "\\x1f t2 \x1f t2",
    "\x01\x02\x7f\u200b\ufeff",
    "😀🔥 getUserName 💥",
    "x\ud800y",
]


@pytest.mark.parametrize("payload", INJECTIONS)
def test_injection_payloads_are_literal_and_never_widen(twins: TantivyLexicalIndex, payload: str) -> None:
    for scope in SCOPES:
        for hit in twins.search(scope, payload, 100):
            assert scope.contains(hit.tenant_id, hit.namespace, hit.graph_id)
    assert len(twins.search(T1, payload, 100)) <= 2


def test_injected_field_syntax_matches_literal_words(twins: TantivyLexicalIndex) -> None:
    # "tenant_id t2" appears as text in the 'same' document, so it matches as words, in t1 only
    hits = twins.search(T1, "tenant_id:t2", 10)
    assert [(h.entity_id, h.tenant_id) for h in hits] == [("same", "t1")]


def test_long_and_odd_queries_do_not_crash(twins: TantivyLexicalIndex) -> None:
    rng = random.Random(7)
    alphabet = "abcXYZ_.:/ ()\"'*-+^~!?\t\n😀é東\x01\x1f"
    for _ in range(20):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 1000)))
        twins.search(T1, text, 10)
    big = ("getUserName shared words " * 200)[:4096]
    assert ids(twins.search(T1, big, 10)) == ["same", "other"]


def test_odd_document_text_is_indexed(index: TantivyLexicalIndex) -> None:
    odd = 'quote" back\\slash \x01ctl 😀 emoji x\ud800y naïve'
    index.upsert(T1, [doc("odd", odd, summary=odd, aliases=(odd, "*"), path=odd, qualified_name=odd)])
    index.flush()
    assert ids(index.search(T1, "emoji", 5)) == ["odd"]
    assert ids(index.search(T1, "naive backslash", 5)) == ["odd"]


# writes -------------------------------------------------------------------------------------------


def test_upsert_replaces(index: TantivyLexicalIndex) -> None:
    index.upsert(T1, [doc("e1", "oldName", "h1", summary="apples")])
    index.upsert(T1, [doc("e1", "newName", "h2", summary="oranges")])
    index.flush()
    assert index.hashes(T1) == {"e1": "h2"}
    assert index.search(T1, "apples", 10) == []  # the old text is gone
    assert [(h.entity_id, h.content_hash) for h in index.search(T1, "oranges", 10)] == [("e1", "h2")]


def test_last_duplicate_in_a_batch_wins(index: TantivyLexicalIndex) -> None:
    index.upsert(T1, [doc("e1", "first", "h1"), doc("e1", "second", "h2")])
    index.flush()
    assert index.hashes(T1) == {"e1": "h2"}
    assert ids(index.search(T1, "first second", 10)) == ["e1"]


def test_delete(index: TantivyLexicalIndex) -> None:
    index.upsert(T1, [doc(f"e{i}", f"item{i}", summary="common") for i in range(5)])
    index.delete(T1, ["e1", "e3", "missing"])
    index.delete(T1, [])
    index.flush()
    assert sorted(index.hashes(T1)) == ["e0", "e2", "e4"]
    assert ids(index.search(T1, "common", 10)) == ["e0", "e2", "e4"]


def test_hashes_cover_a_large_scope(index: TantivyLexicalIndex) -> None:
    index.upsert(T1, [doc(f"e{i:05d}", f"n{i}", f"h{i}") for i in range(5000)])
    index.upsert(T2, [doc("e00001", "n", "foreign")])
    index.flush()
    hashes = index.hashes(T1)
    assert len(hashes) == 5000
    assert hashes["e00001"] == "h1"


# ordering and clamps ------------------------------------------------------------------------------


def _tied(order: list[int], batches: int) -> TantivyLexicalIndex:
    ix = TantivyLexicalIndex(None)
    docs = [doc(f"e{i:02d}", "twin", summary="identical text") for i in order]
    for b in range(batches):  # several commits -> several segments
        ix.upsert(T1, docs[b::batches])
    ix.flush()
    return ix


def test_ties_are_ordered_by_entity_id() -> None:
    forward, backward = list(range(40)), list(reversed(range(40)))
    shuffled = forward[:]
    random.Random(3).shuffle(shuffled)
    results = []
    for order, batches in ((forward, 1), (backward, 4), (shuffled, 7)):
        ix = _tied(order, batches)
        results.append([(h.entity_id, h.score) for h in ix.search(T1, "twin identical", 10)])
        ix.close()
    assert results[0] == results[1] == results[2]
    assert [e for e, _ in results[0]] == [f"e{i:02d}" for i in range(10)]


def test_higher_scores_come_first_then_ids(index: TantivyLexicalIndex) -> None:
    index.upsert(T1, [doc("b", "alpha"), doc("a", "alpha"), doc("c", "alpha beta gamma delta")])
    index.flush()
    hits = index.search(T1, "alpha", 10)
    assert ids(hits) == ["a", "b", "c"]
    assert hits[0].score == hits[1].score > hits[2].score


def test_k_is_clamped(index: TantivyLexicalIndex) -> None:
    index.upsert(T1, [doc(f"e{i:03d}", "same", summary="thing") for i in range(150)])
    index.flush()
    assert len(index.search(T1, "thing", 0)) == 1
    assert len(index.search(T1, "thing", -5)) == 1
    assert len(index.search(T1, "thing", 7)) == 7
    assert len(index.search(T1, "thing", 10_000)) == MAX_K == 100


# durability and lifecycle -------------------------------------------------------------------------


def test_reopen_keeps_documents(tmp_path: Path) -> None:
    path = tmp_path / "lex"
    ix = TantivyLexicalIndex(path)
    assert ix.capabilities.durable is True
    ix.upsert(T1, [doc("e1", "getUserName", "h1", summary="persisted words")])
    ix.upsert(T2, [doc("e1", "getUserName", "h2")])
    before = ix.search(T1, "user name", 5)
    ix.close()

    reopened = TantivyLexicalIndex(path)
    try:
        assert reopened.search(T1, "user name", 5) == before
        assert reopened.hashes(T1) == {"e1": "h1"}
        assert reopened.hashes(T2) == {"e1": "h2"}
        reopened.upsert(T1, [doc("e2", "another", "h3", summary="persisted")])  # analysers re-registered
        reopened.flush()
        assert sorted(ids(reopened.search(T1, "persisted", 5))) == ["e1", "e2"]
    finally:
        reopened.close()


def test_one_writer_per_directory(tmp_path: Path) -> None:
    first = TantivyLexicalIndex(tmp_path)
    with pytest.raises(BackendUnavailable):
        TantivyLexicalIndex(tmp_path)
    first.close()
    first.close()  # idempotent
    with TantivyLexicalIndex(tmp_path) as second:  # the lock was released
        second.flush()


def test_foreign_index_directory_is_a_backend_error(tmp_path: Path) -> None:
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("something_else", stored=True)
    tantivy.Index(builder.build(), path=str(tmp_path))
    with pytest.raises(BackendError, match="schema"):
        TantivyLexicalIndex(tmp_path)


def test_closed_index_refuses_work(index: TantivyLexicalIndex) -> None:
    index.close()
    for call in (
        lambda: index.search(T1, "x", 1),
        lambda: index.hashes(T1),
        lambda: index.upsert(T1, [doc("e", "x")]),
        lambda: index.delete(T1, ["e"]),
        index.flush,
    ):
        with pytest.raises(BackendUnavailable):
            call()


def test_factory_uses_data_dir(tmp_path: Path) -> None:
    ix = create_lexical_index(Settings(data_dir=tmp_path / "data"))
    try:
        assert isinstance(ix, TantivyLexicalIndex)
        ix.upsert(T1, [doc("e1", "x")])
        assert (tmp_path / "data" / "lexical" / "meta.json").exists()
    finally:
        ix.close()


def test_concurrent_writers_and_readers_share_one_index(index: TantivyLexicalIndex) -> None:
    errors: list[BaseException] = []

    def work(tenant: str) -> None:
        scope = Scope(tenant)
        try:
            for i in range(20):
                index.upsert(scope, [doc(f"e{i}", f"thread{tenant}", f"h{i}")])
                for hit in index.search(scope, f"thread{tenant}", 5):
                    assert hit.tenant_id == tenant
        except BaseException as exc:  # collected and re-raised in the main thread
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(f"t{n}",)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    for n in range(4):
        assert len(index.hashes(Scope(f"t{n}"))) == 20


# deferred durability (an overlay searched beside the disk index until flush) ---------------------


def test_deferred_writes_are_searchable_at_once_and_durable_after_flush(tmp_path: Path) -> None:
    path = tmp_path / "lex"
    with TantivyLexicalIndex(path) as ix:
        ix.upsert(T1, [doc(f"e{i}", f"thing {i}", "old", summary="durable words") for i in range(15)])
        assert ix.defer_durability() is True
        ix.upsert(T1, [doc(f"e{i}", f"thing {i}", "new", summary="fresh words") for i in range(3)])
        ix.delete(T1, ["e14"])
        ix.upsert(T2, [doc("e0", "thing 0", "other tenant", summary="fresh words")])
        # pending keys hide their disk documents: no duplicates, no deleted entity, no old text
        found = ix.search(T1, "thing", 100)
        assert sorted(ids(found)) == sorted(f"e{i}" for i in range(14))
        assert sorted(ids(ix.search(T1, "fresh", 10))) == ["e0", "e1", "e2"]
        assert sorted(ids(ix.search(T1, "durable", 100))) == sorted(f"e{i}" for i in range(3, 14))
        assert len(ix.search(T1, "thing", 5)) == 5
        expected = {f"e{i}": ("new" if i < 3 else "old") for i in range(14)}
        assert ix.hashes(T1) == expected
        assert ix.hashes(T2) == {"e0": "other tenant"}
        with TantivyLexicalIndex(path, read_only=True) as reader:  # another process: disk only
            assert len(reader.hashes(T1)) == 15 and reader.hashes(T2) == {}
        assert ix.pending() == 5
        ix.flush()
        assert ix.pending() == 0
        with TantivyLexicalIndex(path, read_only=True) as reader:
            assert reader.hashes(T1) == expected and reader.hashes(T2) == {"e0": "other tenant"}
        assert ix.hashes(T1) == expected
        ix.upsert(T1, [doc("e20", "late", "h")])  # pending again: close flushes it
    with TantivyLexicalIndex(path, read_only=True) as reader:
        assert "e20" in reader.hashes(T1)


def test_a_key_written_again_during_a_flush_stays_pending(tmp_path: Path) -> None:
    with TantivyLexicalIndex(tmp_path / "lex") as ix:
        ix.defer_durability()
        ix.upsert(T1, [doc("e1", "first", "h1")])
        original = ix._commit
        calls: list[int] = []

        def commit_then_rewrite(*args: object, **kwargs: object) -> None:
            original(*args, **kwargs)  # type: ignore[arg-type]
            if not calls:  # the disk commit of the flush is done: a new version arrives
                calls.append(1)
                ix.upsert(T1, [doc("e1", "second", "h2")])

        ix._commit = commit_then_rewrite  # type: ignore[method-assign]
        ix.flush()
        ix._commit = original  # type: ignore[method-assign]
        assert ix.hashes(T1) == {"e1": "h2"} and ids(ix.search(T1, "second", 5)) == ["e1"]
        assert ix.search(T1, "first", 5) == [] and ix.pending() == 1


def test_an_index_in_ram_does_not_defer() -> None:
    with TantivyLexicalIndex(None) as ix:
        assert ix.defer_durability() is False


def test_a_read_only_index_sees_each_commit_of_another_writer_and_stays_put_between_them(
    tmp_path: Path,
) -> None:
    path = tmp_path / "lex"
    with TantivyLexicalIndex(path) as writer:
        writer.upsert(T1, [doc("e0", "first", "h0")])
        with TantivyLexicalIndex(path, read_only=True) as reader:
            assert reader.hashes(T1) == {"e0": "h0"}
            for i in range(1, 6):
                writer.upsert(T1, [doc(f"e{i}", f"item {i}", f"h{i}")])
                assert ids(reader.search(T1, f"item {i}", 1)) == [f"e{i}"]
                assert len(reader.hashes(T1)) == i + 1
                # no commit between two reads: the same answer again
                assert ids(reader.search(T1, f"item {i}", 1)) == [f"e{i}"]
            writer.upsert(T1, [doc("e3", "item 3", "changed")])
            writer.delete(T1, ["e1"])
            assert reader.hashes(T1) == {"e0": "h0", "e2": "h2", "e3": "changed", "e4": "h4", "e5": "h5"}
            assert "e1" not in ids(reader.search(T1, "item 1", 10))


# a writer process for a long run of writes ------------------------------------------------------


def _writes(ix: TantivyLexicalIndex) -> None:
    """A run with replaced and deleted documents over several commits, in two scopes."""
    for n in range(4):
        ix.upsert(
            T1, [doc(f"e{i}", f"parse item {i}", f"h{n}", summary=f"round {n} words") for i in range(30)]
        )
        ix.delete(T1, [f"e{n}"])
    ix.upsert(T2, [doc("e1", "parse other", "x", summary="other tenant")])


def test_writes_through_the_writer_process_give_the_index_written_here(tmp_path: Path) -> None:
    with TantivyLexicalIndex(tmp_path / "here") as ix:
        _writes(ix)
        expected = {q: ix.search(T1, q, 50) for q in ("parse", "round 3", "item 7")}
        expected_hashes = ix.hashes(T1), ix.hashes(T2)
    with TantivyLexicalIndex(tmp_path / "child") as ix:
        with ix.writer_process() as elsewhere:
            assert elsewhere is not None
            ix.upsert(T1, [doc("e99", "early", "h")])
            assert ids(ix.search(T1, "early", 5)) == ["e99"]  # searchable here once upsert returns
            with TantivyLexicalIndex(tmp_path / "child", read_only=True) as reader:
                assert reader.hashes(T1) == {"e99": "h"}  # and committed to disk
            ix.delete(T1, ["e99"])
            _writes(ix)
            during = {q: ix.search(T1, q, 50) for q in expected}
        after = {q: ix.search(T1, q, 50) for q in expected}
        ix.upsert(T1, [doc("e98", "late write", "h")])  # the writer is back in this process
        assert ids(ix.search(T1, "late", 5)) == ["e98"]
    # same hits, same scores (the deleted e99 counts in neither's statistics: scores compare below)
    for q, hits in expected.items():
        assert [h.entity_id for h in during[q]] == [h.entity_id for h in hits], q
        assert after[q] == during[q]
    with TantivyLexicalIndex(tmp_path / "child", read_only=True) as reader:
        got = reader.hashes(T1)
        assert got.pop("e98") == "h" and (got, reader.hashes(T2)) == expected_hashes


def test_the_writer_process_answers_with_the_scores_of_writing_here(tmp_path: Path) -> None:
    with TantivyLexicalIndex(tmp_path / "here") as here, TantivyLexicalIndex(tmp_path / "child") as child:
        _writes(here)
        with child.writer_process():
            _writes(child)
        for q in ("parse", "round 3", "item 7", "other"):
            for scope in (T1, T2):
                assert child.search(scope, q, 50) == here.search(scope, q, 50), (q, scope)


def test_the_writer_process_holds_the_lock_and_gives_it_back(tmp_path: Path) -> None:
    path = tmp_path / "lex"
    with TantivyLexicalIndex(path) as ix:
        with ix.writer_process() as queued:
            assert queued is not None
            queued.upsert(T1, [doc("e0", "through the child", "h")])
            queued.done()  # answered: the child started, holds the lock and committed
            with pytest.raises(BackendUnavailable, match="locked by another writer"):
                TantivyLexicalIndex(path)
        ix.upsert(T1, [doc("e1", "back here", "h")])
        assert ids(ix.search(T1, "back", 5)) == ["e1"]
    with TantivyLexicalIndex(path) as again:  # closed: the lock is free
        assert again.hashes(T1) == {"e0": "h", "e1": "h"}


def test_a_writer_process_that_cannot_start_fails_typed_at_its_first_answer(tmp_path: Path) -> None:
    """Its start is not waited for; a child that cannot open the index says why at the first answer
    read, and nothing waits forever."""
    not_an_index = tmp_path / "file"
    not_an_index.write_text("not a tantivy directory")
    child = WriterProcess(not_an_index)
    try:
        with contextlib.suppress(BackendUnavailable):  # the child may be gone before the call is sent
            child.send("upsert", T1, [doc("e1", "never written", "h")])
        with pytest.raises(BackendError, match="tantivy start failed: cannot open the writer"):
            child.receive("upsert")
    finally:
        child.close()


class _Unreadable:
    """Pickles fine here; unpickling it raises (int("not a number")) in the child."""

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (int, ("not a number",))


def test_a_call_the_child_cannot_read_is_answered_as_failed_not_left_hanging(tmp_path: Path) -> None:
    with TantivyLexicalIndex(tmp_path / "lex") as ix:
        with ix.writer_process() as queued:
            assert queued is not None
            queued.upsert(T1, [doc("e1", "before", "h")])
            queued.delete(T1, [_Unreadable()])  # type: ignore[list-item]
            queued.upsert(T1, [doc("e2", "after", "h")])
            queued.done()
            with pytest.raises(BackendError, match="tantivy delete failed: ValueError"):
                queued.done()
            with pytest.raises(BackendError, match="not written after an earlier failure"):
                queued.done()
        assert ix.hashes(T1) == {"e1": "h"}


def test_a_writer_process_that_dies_fails_typed_and_the_index_writes_here_again(tmp_path: Path) -> None:
    with TantivyLexicalIndex(tmp_path / "lex") as ix:
        with ix.writer_process():
            ix.upsert(T1, [doc("e1", "kept", "h")])
            child = ix._child
            assert child is not None
            child._proc.kill()
            child._proc.wait()
            with pytest.raises(BackendUnavailable, match="writer process ended"):
                ix.upsert(T1, [doc("e2", "lost", "h")])
        assert ix.hashes(T1) == {"e1": "h"}  # what the child committed stays; nothing half-written
        ix.upsert(T1, [doc("e2", "written here", "h")])
        assert ix.hashes(T1) == {"e1": "h", "e2": "h"}


def test_an_index_in_ram_read_only_or_deferring_writes_here(tmp_path: Path) -> None:
    with TantivyLexicalIndex(None) as ram, ram.writer_process() as elsewhere:
        assert elsewhere is None
        ram.upsert(T1, [doc("e1", "in ram", "h")])
        assert ids(ram.search(T1, "ram", 5)) == ["e1"]
    path = tmp_path / "lex"
    with TantivyLexicalIndex(path) as ix:
        ix.defer_durability()
        with ix.writer_process() as elsewhere:
            assert elsewhere is None
        with TantivyLexicalIndex(path, read_only=True) as reader, reader.writer_process() as elsewhere:
            assert elsewhere is None


def test_writes_sent_ahead_take_effect_in_order_and_stop_at_a_failure(tmp_path: Path) -> None:
    with TantivyLexicalIndex(tmp_path / "lex") as ix:
        with ix.writer_process() as queued:
            assert queued is not None
            queued.upsert(T1, [doc("e1", "first", "h1"), doc("e2", "second", "h2")])
            queued.delete(T1, ["e2"])
            queued.upsert(T1, [doc("e2", "second again", "h3")])
            assert queued.pending() == 3
            for _ in range(3):
                queued.done()
            assert ix.hashes(T1) == {"e1": "h1", "e2": "h3"} and ids(ix.search(T1, "again", 5)) == ["e2"]

            queued.upsert(T1, ["not a document"])  # type: ignore[list-item]
            queued.upsert(T1, [doc("e3", "after the failure", "h")])
            with pytest.raises(BackendError, match="tantivy upsert failed"):
                queued.done()
            with pytest.raises(BackendError, match="not written after an earlier failure"):
                queued.done()
            assert queued.pending() == 0
            queued.upsert(T1, [doc("e4", "left unanswered", "h")])  # answered when the run ends
        assert "e3" not in ix.hashes(T1) and "e4" not in ix.hashes(T1)
        ix.upsert(T1, [doc("e5", "written here again", "h")])
        assert set(ix.hashes(T1)) == {"e1", "e2", "e5"}
