"""API keys: stored hashed, verified in constant time, revocable; one message for every failure."""

from __future__ import annotations

import sqlite3

import pytest

from graphctx.adapters.sqlite import SqliteKeyStore
from graphctx.auth import AuthError, Principal


@pytest.fixture
def keys(tmp_path):
    store = SqliteKeyStore(tmp_path / "keys.sqlite")
    yield store
    store.close()


def test_created_key_verifies_to_its_principal(keys):
    principal = Principal("agent-a", "tenant-a", ("default", "ops"), ("repo-1",))
    issued = keys.create(principal)
    found = keys.verify(issued.token)
    assert (found.name, found.tenant_id, found.namespaces, found.graph_ids) == (
        "agent-a", "tenant-a", ("default", "ops"), ("repo-1",),
    )  # fmt: skip
    assert found.key_id == issued.key_id


def test_secrets_are_stored_hashed(keys, tmp_path):
    issued = keys.create(Principal("a", "t"))
    secret = issued.token.rsplit("_", 1)[1]
    raw = sqlite3.connect(tmp_path / "keys.sqlite").execute("SELECT * FROM api_keys").fetchall()
    assert secret not in repr(raw) and issued.token not in repr(raw)


MANGLES = [
    lambda t: t[:-1] + ("A" if t[-1] != "A" else "B"),  # wrong secret
    lambda t: "",
    lambda t: "gctx_" + "0" * 12 + "_" + "x" * 43,  # unknown key id
    lambda t: t + "x",
    lambda t: "Bearer " + t,
    lambda t: "' OR 1=1 --",
]


@pytest.mark.parametrize("mangle", MANGLES)
def test_wrong_keys_fail_with_one_message(keys, mangle):
    issued = keys.create(Principal("a", "t"))
    with pytest.raises(AuthError) as info:
        keys.verify(mangle(issued.token))
    assert info.value.message == "missing or invalid API key"


def test_revoked_key_no_longer_verifies(keys):
    issued = keys.create(Principal("a", "t"))
    assert keys.revoke(issued.key_id) is True
    assert keys.revoke(issued.key_id) is False
    with pytest.raises(AuthError, match="missing or invalid API key"):
        keys.verify(issued.token)
    assert keys.list() == []
