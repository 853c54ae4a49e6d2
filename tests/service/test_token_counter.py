"""The optional pinned-tokenizer count (graphctx.tokens): reported beside bytes/4, never over budget."""

from __future__ import annotations

import math

import pytest

from graphctx.envelope import dumps
from graphctx.errors import ConfigError
from graphctx.service import ContextService
from tests.code.ops_graph import load_code
from tests.conftest import TENANT_A, fixed_clock, make_settings

ENTITIES = [
    {"id": f"e{i}", "name": f"entity {i}", "summary": "checkout and payments, " * 12 + str(i)}
    for i in range(20)
]


@pytest.fixture
def counted(tmp_path):
    with ContextService.open(make_settings(tmp_path / "d", token_counter="llama2"), clock=fixed_clock) as svc:
        svc.remember(TENANT_A, ENTITIES)
        load_code(svc, TENANT_A)
        yield svc


@pytest.mark.parametrize("max_tokens", [256, 400, 1500, 20_000])
def test_every_answer_reports_both_counts_and_stays_in_budget(counted, max_tokens):
    for env in (
        counted.recall(TENANT_A, "checkout payments", max_tokens=max_tokens),
        counted.search(TENANT_A, "Cart total", max_tokens=max_tokens),
        counted.explain(TENANT_A, "shop.cart.Cart.total", max_tokens=max_tokens),
    ):
        size = len(dumps(env).encode("utf-8"))
        assert math.ceil(size / 4) <= env["budget"]["used_tokens"] <= max_tokens
        counted_record = env["budget"]["counted"]
        assert counted_record["tokenizer"].startswith("llama-2@wordllama-")
        # a real BPE count of the very JSON returned: more than zero, and JSON punctuation costs more
        # tokens than bytes/4 assumes
        assert env["budget"]["used_tokens"] < counted_record["used_tokens"] < size


def test_without_the_option_only_bytes_over_four(service):
    service.remember(TENANT_A, ENTITIES)
    load_code(service, TENANT_A)
    assert "counted" not in service.recall(TENANT_A, "checkout")["budget"]
    for max_tokens in (256, 300, 1500):  # used_tokens bounds the real size (every timing measured)
        env = service.search(TENANT_A, "Cart total", max_tokens=max_tokens)
        assert math.ceil(len(dumps(env).encode("utf-8")) / 4) <= env["budget"]["used_tokens"] <= max_tokens


def test_an_unknown_counter_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="no token_counter backend named 'gpt-9'"):
        ContextService.open(make_settings(tmp_path / "d", token_counter="gpt-9"))
