"""The code graph's edges: built without the model's second validation, equal to what it gives and
refused by the same typed errors."""

from __future__ import annotations

import pytest

from graphctx import bounds
from graphctx.code.build import SOURCE, VALUE_BYTES, edge
from graphctx.errors import BoundExceeded, InputError
from graphctx.model import EdgeKind, Fact, code_edge_id


@pytest.mark.parametrize("kind", list(EdgeKind))
@pytest.mark.parametrize("lines", [(), (7,), (40, 3, 3, 12), tuple(range(1, 20_000, 3))])
def test_an_edge_is_the_fact_validation_gives(kind: EdgeKind, lines: tuple[int, ...]):
    subject, obj = "py:repo:pkg/mod.py::Klass.méthode", "py:repo:pkg/other.py::helper"
    got = edge(subject, kind, obj, lines)
    validated = Fact.model_validate(got.model_dump())
    assert got == validated
    assert got.id == code_edge_id(subject, kind.value, obj) and got.source == SOURCE
    assert (got.value or "") == ",".join(map(str, sorted(set(lines))))[: len(got.value or "")]
    assert len((got.value or "").encode()) <= VALUE_BYTES


@pytest.mark.parametrize(
    ("bad", "error"),
    [
        ("x" * (bounds.ID_BYTES + 1), BoundExceeded),
        ("py:a\x00b", InputError),
        ("", InputError),
        (" ", InputError),
    ],
)
def test_an_edge_with_an_id_the_model_refuses_is_refused_the_same_way(bad: str, error: type[Exception]):
    for subject, obj in ((bad, "py:repo:ok"), ("py:repo:ok", bad)):
        with pytest.raises(error):
            Fact(subject_id=subject, predicate="calls", object_id=obj)
        with pytest.raises(error):
            edge(subject, EdgeKind.CALLS, obj)
