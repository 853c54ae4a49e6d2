"""A request's scope comes from the principal; request values can only narrow it."""

from __future__ import annotations

import pytest

from graphctx.auth import Principal
from graphctx.errors import ScopeError
from graphctx.scope import Scope, shared_scope

P = Principal("agent", "tenant-a", ("default", "ops"), ("repo-1",))


def test_defaults_to_the_first_namespace_and_no_graph():
    assert P.scope() == Scope("tenant-a", "default", "")


def test_may_select_among_its_own_namespaces_and_graphs():
    assert P.scope(namespace="ops") == Scope("tenant-a", "ops")
    assert P.scope(graph_id="repo-1") == shared_scope("repo-1")
    assert P.scope(tenant_id="tenant-a") == Scope("tenant-a", "default")


@pytest.mark.parametrize(
    "selectors",
    [{"tenant_id": "tenant-b"}, {"namespace": "secret"}, {"graph_id": "repo-2"}, {"tenant_id": "tenant-a "},
     {"namespace": "default' OR 1=1"}],
)  # fmt: skip
def test_can_never_widen(selectors):
    with pytest.raises(ScopeError) as info:
        P.scope(**selectors)
    assert "not accessible with these credentials" in info.value.message
