"""`graphctx search | symbol | callers | callees | impact` as a user drives them."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from graphctx.cli import app
from graphctx.envelope import dumps
from graphctx.scope import Scope
from graphctx.service import ContextService
from graphctx.settings import Settings
from tests.code.ops_graph import load_code

runner = CliRunner()
MINE = Scope("cli-tenant")
DIFF = "--- a/shop/cart.py\n+++ b/shop/cart.py\n@@ -30 +30 @@\n-x\n+y\n"


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("GRAPHCTX_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("GRAPHCTX_EMBEDDER", "hashing")
    monkeypatch.setenv("GRAPHCTX_TENANT_ID", "cli-tenant")
    with ContextService.open(Settings()) as service:
        load_code(service, MINE)
    return tmp_path


def comparable(envelope):
    return {k: v for k, v in envelope.items() if k not in ("timings_ms", "as_of")}


def run_json(*args: str, stdin: str | None = None):
    result = runner.invoke(app, [*args, "--json"], input=stdin)
    return result.exit_code, json.loads(result.stdout)


def test_json_is_the_python_api_envelope(env, tmp_path):
    diff_file = tmp_path / "change.diff"
    diff_file.write_text(DIFF, encoding="utf-8")
    with ContextService.open(Settings()) as service:
        expected = {
            "symbol": service.symbol(MINE, "shop.cart.Cart.total", limit=5),
            "callers": service.callers(MINE, "shop.tax.rate", depth=2, max_tokens=600),
            "callees": service.callees(MINE, "shop.cart.Cart.add", depth=2),
            "search": service.search(MINE, "Cart.total"),
            "impact": service.impact(MINE, ["shop/tax.py"], DIFF),
        }
    argv = {
        "symbol": ["symbol", "shop.cart.Cart.total", "--limit", "5"],
        "callers": ["callers", "shop.tax.rate", "--depth", "2", "--max-tokens", "600"],
        "callees": ["callees", "shop.cart.Cart.add", "--depth", "2"],
        "search": ["search", "Cart.total"],
        "impact": ["impact", "shop/tax.py", "--diff", str(diff_file)],
    }
    for op, args in argv.items():
        code, got = run_json(*args)
        assert code == 0, got
        assert comparable(got) == comparable(json.loads(dumps(expected[op]))), op


def test_impact_reads_a_diff_from_stdin(env):
    code, got = run_json("impact", "--diff", "-", stdin=DIFF)
    assert code == 0
    assert [a["name"] for a in got["affected"]] == ["shop.cart.Cart.total"]


def test_ambiguity_exits_4_with_file_identities(env):
    for command in ("symbol", "callers", "callees"):
        result = runner.invoke(app, [command, "helper"])
        assert result.exit_code == 4
        assert "shop.cart.helper" in result.output and "shop/tax.py" in result.output
        code, error = run_json(command, "helper")
        assert code == 4
        assert {c["identity"] for c in error["error"]["details"]["candidates"]} == {
            "shop.cart.helper",
            "shop.tax.helper",
        }
    assert runner.invoke(app, ["symbol", "shop/tax.py::helper"]).exit_code == 0


def test_human_output_shows_file_and_line(env):
    result = runner.invoke(app, ["symbol", "shop.cart.Cart.total"])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "shop/cart.py:20-35" in out and "def total(self)" in out
    assert "callers (2 of 2)" in out and "shop/cart.py:44" in out
    assert "callees (2 of 2)" in out and "shop/cart.py:22, shop/cart.py:30" in out
    assert "budget:" in out
    cut = runner.invoke(app, ["callers", "shop.tax.rate", "--limit", "3"]).stdout
    assert "callers (3 of 31)" in cut and "omitted:" in cut
    impact = runner.invoke(app, ["impact", "shop/tax.py", "nowhere.py"]).stdout
    assert "not in the graph: nowhere.py" in impact and "affected (3 of 3)" in impact


def test_bad_input_is_a_typed_error_with_its_exit_status(env, tmp_path):
    code, error = run_json("impact")
    assert (code, error["error"]["code"]) == (64, "invalid_input")
    big = tmp_path / "big.diff"
    big.write_bytes(b" " * (4 * 1024 * 1024 + 1))
    code, error = run_json("impact", "--diff", str(big))
    assert (code, error["error"]["code"], error["error"]["details"]["bound"]) == (
        64,
        "bound_exceeded",
        "diff",
    )
    code, error = run_json("impact", "--diff", str(tmp_path / "missing.diff"))
    assert code == 1 and "missing.diff" in error["error"]["message"]
    code, error = run_json("callers", "shop.tax.rate", "--max-tokens", "256", "--limit", "50")
    assert code == 0 and error["truncated"] is True


def _next_command(result) -> list[str]:
    import shlex

    assert result.exit_code == 0, result.output
    [line] = [x for x in result.stdout.splitlines() if x.startswith("next: ")]
    return shlex.split(line.split(": ", 2)[2])


@pytest.mark.parametrize(
    ("argv", "op"),
    [
        (["callers", "shop.tax.rate", "--depth", "2", "--max-tokens", "300"], "callers"),
        (["symbol", "shop.tax.rate", "--max-tokens", "300"], "symbol"),
        (["search", "cart total tax", "--max-tokens", "300"], "search"),
    ],
)
def test_a_cut_code_answer_prints_the_command_that_gets_more_and_it_runs(env, argv, op):
    """The follow-up of a code operation is a command line: the same question with twice the budget,
    which then runs (and shows more than the cut answer did)."""
    _, cut = run_json(*argv)
    assert cut["omissions"], "the budget must cut something for this test to mean anything"
    command = _next_command(runner.invoke(app, argv))
    assert command[:2] == ["graphctx", op] and command[-2:] == ["--max-tokens", "600"]
    code, more = run_json(*command[1:])
    assert code == 0, more
    assert more["budget"]["max_tokens"] == 600
    shown = {key: len(more.get(key, [])) for key in ("items", "callers", "callees", "tests")}
    assert sum(shown.values()) > sum(len(cut.get(key, [])) for key in shown), (cut, more)


def test_at_the_largest_budget_a_cut_symbol_points_at_one_direction_alone(env, monkeypatch):
    from graphctx import bounds

    monkeypatch.setattr(bounds, "MAX_TOKENS", 300)  # the largest budget, small enough to cut this graph
    argv = ["symbol", "shop.tax.rate", "--max-tokens", "300"]
    _, cut = run_json(*argv)
    cut_directions = [om["what"] for om in cut["omissions"] if om["what"] in ("callers", "callees")]
    assert cut_directions, "the budget must cut a call direction for this test to mean anything"
    command = _next_command(runner.invoke(app, argv))
    assert command[1:] == [cut_directions[0], "shop.tax.rate"]
    code, alone = run_json(*command[1:])
    assert code == 0 and alone["subject"] == cut["subject"]
    assert len(alone[cut_directions[0]]) > len(cut.get(cut_directions[0], []))
