"""Exact lookup, stated precisely: `id` and `qualified_name` compare code point for code point;
`name` and `alias` compare after Python's `str.casefold()` -- and nothing else. No Unicode
normalisation (neither NFC/NFD nor the compatibility forms NFKC/NFKD: fullwidth, superscripts,
circled letters), no accent folding, no trimming or trailing-space padding, no collation.

What casefold does and `lower()` does not: `ß` equals `ss`, `ﬁ` equals `fi`, final `ς` equals `σ`,
the Kelvin sign equals `k`. A store with a case-insensitive collation (SQL `COLLATE NOCASE`,
`utf8mb4_general_ci`), an `ILIKE`, a normalising analyser or a `CHAR` column padded with spaces fails
here. Since 1.2.0.
"""

from __future__ import annotations

import unicodedata

from graphctx.contracts._markers import requires
from graphctx.contracts.graph._common import FIND, UPSERT, _GraphSubject, ent, find_exact, upsert_entities
from graphctx.kernel.ports import GraphStore
from graphctx.scope import Scope

CAFE = "caf\u00e9"  # composed (NFC)
CAFE_NFD = unicodedata.normalize("NFD", CAFE)


def _found(store: GraphStore, scope: Scope, probe: str, field: str) -> list[str]:
    return [m.entity.id for m in find_exact(store, scope, [probe], fields=(field,), limit=100)]  # type: ignore[arg-type]


class ExactLookupTests(_GraphSubject):
    """What equality means for each identifier field (module docstring). Since 1.2.0."""

    @requires(UPSERT, FIND)
    def test_find_exact_names_fold_by_casefold_exactly(self, graph_store: GraphStore, scope: Scope) -> None:
        """Names and aliases match every spelling with the same casefold, and only those."""
        upsert_entities(
            graph_store,
            scope,
            [
                ent("m-strasse", "Straße"),
                ent("m-file", "file", aliases=("ΣΑΣ",)),
                ent("m-kelvin", "500k"),
                ent("m-upper", "IDEMPOTENT"),
            ],
        )
        same = {
            "m-strasse": ("STRASSE", "strasse", "straße", "STRAẞE"),
            "m-file": ("ﬁle", "FILE", "File"),
            "m-kelvin": ("500\u212a", "500K"),
            "m-upper": ("idempotent", "IdemPotent"),
        }
        for entity_id, probes in same.items():
            for probe in probes:
                assert _found(graph_store, scope, probe, "name") == [entity_id], (probe, "name")
        for probe in ("σας", "ΣΑΣ", "σασ", "Σας"):
            assert _found(graph_store, scope, probe, "alias") == ["m-file"], (probe, "alias")

    @requires(UPSERT, FIND)
    def test_find_exact_applies_no_unicode_normalisation(self, graph_store: GraphStore, scope: Scope) -> None:
        """Composed and decomposed accents, fullwidth and superscript forms, and accent-free spellings
        are different values for every field."""
        upsert_entities(
            graph_store,
            scope,
            [
                ent(CAFE, CAFE, aliases=("x2",), qualified_name=f"pkg.{CAFE}"),
                ent("plain", "checkout", aliases=("v1",)),
            ],
        )
        for field, stored, others in (
            ("id", CAFE, (CAFE_NFD, "cafe", "CAF\u00c9")),
            ("qualified_name", f"pkg.{CAFE}", (f"pkg.{CAFE_NFD}", "pkg.cafe")),
            ("name", CAFE, (CAFE_NFD, "cafe", "caf\u00e8")),
            ("alias", "x2", ("x\u00b2", "x\u2082", "\uff58\uff12")),
        ):
            assert _found(graph_store, scope, stored, field) == [CAFE], field
            for probe in others:
                assert _found(graph_store, scope, probe, field) == [], (
                    f"{field}: {probe!r} matched {stored!r}"
                )
        for probe in ("\uff43\uff48\uff45\uff43\uff4b\uff4f\uff55\uff54", "ⓒheckout", "v\u2081", "V\u00b9"):
            assert find_exact(graph_store, scope, [probe]) == [], probe

    @requires(UPSERT, FIND)
    def test_find_exact_never_trims_or_pads(self, graph_store: GraphStore, scope: Scope) -> None:
        """Leading, trailing and inner spaces are part of the value: no trimming, no CHAR padding."""
        upsert_entities(graph_store, scope, [ent("a", "pad "), ent("b", " lead"), ent("c", "two  spaces")])
        assert _found(graph_store, scope, "pad ", "name") == ["a"]
        assert _found(graph_store, scope, " lead", "name") == ["b"]
        assert _found(graph_store, scope, "two  spaces", "name") == ["c"]
        for probe in ("pad", "pad  ", "lead", "lead ", "two spaces", "two  spaces "):
            assert _found(graph_store, scope, probe, "name") == [], probe
        for probe in ("a ", " a", "A"):
            assert _found(graph_store, scope, probe, "id") == [], probe

    @requires(UPSERT, FIND)
    def test_find_exact_exact_fields_keep_probes_that_fold_alike(
        self, graph_store: GraphStore, scope: Scope
    ) -> None:
        """Probes that differ only in case (`Foo`, `foo`) are two probes of an exact field: each finds
        its own entity, reported with its own value (probes deduplicated by casefold find one).
        Since 1.6.0."""
        upsert_entities(
            graph_store, scope,
            [ent("Foo", "n1", qualified_name="m.A"), ent("foo", "n2", qualified_name="m.a")],
        )  # fmt: skip
        for field, values in (("id", ("Foo", "foo")), ("qualified_name", ("m.A", "m.a"))):
            got = find_exact(graph_store, scope, list(values), fields=(field,))
            assert sorted((m.entity.id, m.value) for m in got) == [("Foo", values[0]), ("foo", values[1])], (
                field
            )

    @requires(UPSERT, FIND)
    def test_find_exact_rank_ignores_the_order_fields_are_given(
        self, graph_store: GraphStore, scope: Scope
    ) -> None:
        """Each entity comes once under its best field by the fixed rank (id, qualified_name, name,
        alias), whatever order `fields` lists them in. Since 1.6.0."""
        upsert_entities(
            graph_store, scope, [ent("foo", "foo", aliases=("foo",)), ent("x", "x", aliases=("foo",))]
        )
        want = [(m.entity.id, m.field) for m in find_exact(graph_store, scope, ["foo"])]
        assert want == [("foo", "id"), ("x", "alias")]
        for fields in (("alias", "name", "qualified_name", "id"), ("name", "alias", "id", "qualified_name")):
            got = find_exact(graph_store, scope, ["foo"], fields=fields)
            assert [(m.entity.id, m.field) for m in got] == want, fields

    @requires(UPSERT, FIND)
    def test_find_exact_ids_and_qualified_names_are_never_folded(
        self, graph_store: GraphStore, scope: Scope
    ) -> None:
        """Ids and qualified names compare exactly: casefold-equal spellings do not match."""
        upsert_entities(graph_store, scope, [ent("Straße", "zzz", qualified_name="mod.Straße.ΣΑΣ")])
        for probe in ("strasse", "STRASSE", "straße", "Strasse"):
            assert _found(graph_store, scope, probe, "id") == [], probe
        for probe in ("mod.strasse.σας", "MOD.STRASSE.ΣΑΣ", "mod.Strasse.ΣΑΣ"):
            assert _found(graph_store, scope, probe, "qualified_name") == [], probe
        assert _found(graph_store, scope, "Straße", "id") == ["Straße"]
        assert _found(graph_store, scope, "mod.Straße.ΣΑΣ", "qualified_name") == ["Straße"]
