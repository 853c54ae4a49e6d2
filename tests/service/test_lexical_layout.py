"""A lexical index written with an older layout (fields, analysers) is rebuilt from the graph."""

from __future__ import annotations

import json

import tantivy

from graphctx.adapters.tantivy.index import LAYOUT_FILE, REBUILD_FILE
from graphctx.model import Entity
from graphctx.scope import Scope
from graphctx.service import ContextService
from tests.conftest import fixed_clock

A, B = Scope("layout-a", "n"), Scope("layout-b", "n", "g1")
OLD_FIELDS = ("tenant_id", "namespace", "graph_id", "key", "entity_id", "content_hash")


def _old_layout_index(path, scopes):
    """What graphctx before layout 2 wrote: the stored fields, a few text fields, no layout marker."""
    builder = tantivy.SchemaBuilder()
    for name in OLD_FIELDS:
        builder.add_text_field(name, stored=True, tokenizer_name="raw")
    builder.add_text_field("name")
    index = tantivy.Index(builder.build(), path=str(path))
    writer = index.writer(heap_size=15_000_000, num_threads=1)
    for scope in scopes:
        values = dict(zip(OLD_FIELDS[:3], (scope.tenant_id, scope.namespace, scope.graph_id), strict=True))
        writer.add_document(tantivy.Document(**values, key="k", entity_id="old", content_hash="h", name="x"))
    writer.commit()
    writer.wait_merging_threads()


def test_an_old_layout_index_is_refilled_from_the_graph_on_open(settings):
    with ContextService.open(settings, clock=fixed_clock) as svc:
        for scope in (A, B):
            svc.remember(scope, [Entity(id="e1", name="quasar-ledger", summary="Keeps the quasar books.")])
    lexical = settings.data_dir / "lexical"
    for child in lexical.iterdir():  # replace the index by one of the old layout holding both scopes
        child.unlink()
    _old_layout_index(lexical, [A, B])

    with ContextService.open(settings, clock=fixed_clock) as svc:
        for scope in (A, B):
            hits = svc.stores.lexical.search(scope, "quasar books", 10)
            assert [h.entity_id for h in hits] == ["e1"]
            assert svc.stores.lexical.hashes(scope).keys() == {"e1"}  # the old layout's docs are gone
            assert svc.recall(scope, "quasar books")["items"][0]["name"] == "quasar-ledger"
    assert json.loads((lexical / LAYOUT_FILE).read_text())["layout"] >= 2
    assert not (lexical / REBUILD_FILE).exists()


def test_an_interrupted_refill_is_redone_on_the_next_open(settings):
    with ContextService.open(settings, clock=fixed_clock) as svc:
        svc.remember(A, [Entity(id="e1", name="quasar-ledger")])
    lexical = settings.data_dir / "lexical"
    for child in lexical.iterdir():
        child.unlink()
    _old_layout_index(lexical, [A])
    (lexical / REBUILD_FILE).write_text(json.dumps([A.as_dict()]))  # as left by a crash mid-rebuild

    with ContextService.open(settings, clock=fixed_clock) as svc:
        assert svc.stores.lexical.hashes(A).keys() == {"e1"}
    assert not (lexical / REBUILD_FILE).exists()
