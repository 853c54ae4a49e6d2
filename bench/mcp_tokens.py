"""What an agent pays for graphctx's MCP server: tokens of `tools/list` (split into descriptions, input
schemas and output schemas), of the server instructions, and of typical answers over the bundled
sample memory (`graphctx demo`'s), with an earlier revision's catalogue side by side.

Tokens are counted two ways: the envelope's estimate, ceil(bytes / 4), which the budget rule uses,
and a real BPE tokenizer (Llama-2's, the one wordllama ships; other models' tokenizers differ by
some tens of percent on JSON). A tool result carries the answer twice, as text content and as
structuredContent (the SDK's choice); clients usually hand one of them to the model, so both are
given, and the whole result as sent.

    python bench/mcp_tokens.py --baseline bdbe1fd --write
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
import types as pytypes
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
from _report import RESULTS, header, write_section
from mcp import Client

from graphctx.auth import Principal
from graphctx.demo import sample_path
from graphctx.envelope import dumps, tokens_for
from graphctx.scope import Scope
from graphctx.service import ContextService
from graphctx.settings import Settings
from graphctx.transports import mcp as current

SCOPE = Scope("demo", "default")
CALLER = Principal("bench", "demo", ("default",))
ANSWERS = [
    ("recall", {"query": "who owns checkout-api"}),
    ("recall", {"query": "payment latency incident", "depth": 2}),
    ("explain", {"name": "checkout-api"}),
    ("neighbourhood", {"name": "checkout-api"}),
]


def bpe_counter() -> Callable[[str], int] | None:
    """Llama-2's BPE tokenizer as shipped inside the wordllama wheel (no download), or None."""
    spec = importlib.util.find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = (
        Path(next(iter(spec.submodule_search_locations))) / "tokenizers" / "l2_supercat_tokenizer_config.json"
    )
    if not path.is_file():
        return None
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(path))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return lambda text: len(tokenizer.encode(text, add_special_tokens=False).ids)


def wire(model: Any) -> str:
    """A protocol object as the SDK sends it (camelCase, nothing unset)."""
    return dumps(model.model_dump(by_alias=True, exclude_none=True, mode="json"))


def baseline_module(rev: str) -> pytypes.ModuleType:
    """core/transports/mcp.py as it was at `rev`, loaded beside the current one."""
    source = subprocess.run(
        ["git", "show", f"{rev}:core/transports/mcp.py"],
        capture_output=True,
        text=True,
        check=True,
        cwd=RESULTS.parent,
    ).stdout
    module = pytypes.ModuleType("graphctx.transports._mcp_baseline")
    sys.modules[module.__name__] = module  # dataclasses look their module up
    exec(compile(source, f"{rev}:core/transports/mcp.py", "exec"), module.__dict__)
    return module


def catalogue(module: Any, count: Callable[[str], int] | None) -> dict[str, Any]:
    tools = module.tools()
    listed = wire(module.types.ListToolsResult(tools=tools))
    parts = {
        "descriptions": "".join(t.description or "" for t in tools),
        "input schemas": "".join(dumps(t.input_schema) for t in tools),
        "output schemas": "".join(dumps(t.output_schema) for t in tools if t.output_schema),
        "instructions": module.INSTRUCTIONS,
        "tools/list result": listed,
        # what a model's tool definitions usually hold: name, description, input schema
        "seen by the model": dumps(
            [{"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in tools]
        )
        + module.INSTRUCTIONS,
    }
    return {name: measure(text, count) for name, text in parts.items()}


def measure(text: str, count: Callable[[str], int] | None) -> dict[str, int | None]:
    n = len(text.encode("utf-8"))
    return {"bytes": n, "est": tokens_for(n), "bpe": count(text) if count else None}


async def answers(service: ContextService, count: Callable[[str], int] | None) -> list[dict[str, Any]]:
    server = current.build_mcp(service, current.fixed_authenticator(CALLER))
    rows = []
    async with Client(server) as client:
        for tool, args in ANSWERS:
            result = await client.call_tool(tool, args)
            assert not result.is_error, result
            text = result.content[0].text  # type: ignore[union-attr]
            rows.append(
                {
                    "call": f"{tool} {json.dumps(args, ensure_ascii=False)}",
                    "text": measure(text, count),
                    "structured": measure(dumps(result.structured_content), count),
                    "result": measure(wire(result), count),
                }
            )
    return rows


def fmt(m: dict[str, int | None]) -> str:
    bpe = "-" if m["bpe"] is None else f"{m['bpe']:,}"
    return f"{m['bytes']:,} | {m['est']:,} | {bpe}"


def report(
    now: dict[str, Any], before: dict[str, Any] | None, rev: str | None, rows: list[dict[str, Any]]
) -> str:
    lines = [
        "| part | bytes | tokens (bytes/4) | tokens (Llama-2 BPE) |"
        + (f" {rev}: bytes | {rev}: bytes/4 | {rev}: BPE |" if before else ""),
        "|---|---:|---:|---:|" + ("---:|---:|---:|" if before else ""),
    ]
    for name, m in now.items():
        tail = f" {fmt(before[name])} |" if before else ""
        lines.append(f"| {name} | {fmt(m)} |{tail}")
    lines += [
        "",
        "Typical answers over the sample memory (default budgets). `text` is the text content, "
        "`structured` the structuredContent (the same JSON object), `result` the whole tools/call "
        "result as sent (both, with the text JSON-escaped):",
        "",
        "| call | text: bytes | bytes/4 | BPE | structured: bytes | bytes/4 | BPE "
        "| result: bytes | bytes/4 | BPE |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    lines += [
        f"| `{r['call']}` | {fmt(r['text'])} | {fmt(r['structured'])} | {fmt(r['result'])} |" for r in rows
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--baseline", help="a git revision whose catalogue is measured beside this one")
    parser.add_argument("--write", action="store_true", help="write the section into docs/results.md")
    args = parser.parse_args()
    count = bpe_counter()
    now = catalogue(current, count)
    before = catalogue(baseline_module(args.baseline), count) if args.baseline else None
    with (
        tempfile.TemporaryDirectory(prefix="graphctx-mcp-bench-") as tmp,
        ContextService.open(Settings(data_dir=Path(tmp), tenant_id="demo")) as service,
    ):
        with sample_path().open(encoding="utf-8") as fh:
            service.remember_jsonl(SCOPE, fh)
        rows = anyio.run(answers, service, count)
    command = "python bench/mcp_tokens.py" + (f" --baseline {args.baseline}" if args.baseline else "")
    body = (
        "### MCP: what an agent pays for the tool catalogue and for an answer\n\n"
        + header(
            command, f"the bundled sample memory ({sum(1 for _ in sample_path().open())} records), 13 tools"
        )
        + "\n"
        + report(now, before, args.baseline, rows)
        + "\n\n`seen by the model` is name + description + input schema of every tool plus the server "
        "instructions: what clients usually put in a model's context (output schemas are for "
        "validating results, and most clients do not send them to the model). The output schemas are the "
        "larger part of `tools/list` now: a client that hands the whole listing to a model pays them too. "
        "The answer tokens are what one call adds to the context when the client passes the text content "
        "(or the structured content) on; the bytes/4 figure is the one `max_tokens` bounds.\n"
    )
    print(body)
    if args.write:
        write_section("mcp_tokens", body)


if __name__ == "__main__":
    sys.exit(main())
