"""Every miss of a system on the question set, with the call site from the source and a category: why
the answer and the ground truth differ (omitted for the budget, call not resolved, resolved to another
target, a call the ground truth's rules do not resolve, ...)."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from functools import cache
from pathlib import Path
from typing import Any

from _code_data import Answer, Score

from graphctx.errors import AmbiguousName, GraphctxError, NotFound
from graphctx.scope import Scope

CALLS = {"calls", "indirect_call"}
SELF_CALL = re.compile(r"\b(self|cls)\.\w+\s*\(")


def gt_edges(gt_dir: Path) -> dict[tuple[str, str], list[tuple[str, int]]]:
    """(caller, callee) -> call sites, as build_gt.py wrote them (self-edges dropped like make_questions)."""
    sites: dict[tuple[str, str], list[tuple[str, int]]] = defaultdict(list)
    with open(gt_dir / "edges.jsonl") as f:
        for e in map(json.loads, f):
            if e["caller"] != e["callee"]:
                sites[(e["caller"], e["callee"])].append((e["file"], e["line"]))
    return sites


def gt_by_site(gt_dir: Path) -> dict[tuple[str, int], list[str]]:
    out: dict[tuple[str, int], list[str]] = defaultdict(list)
    with open(gt_dir / "edges.jsonl") as f:
        for e in map(json.loads, f):
            out[(e["file"], e["line"])].append(e["callee"])
    return out


def source_line(tree: Path, rel: str, line: int) -> str:
    lines = _read(tree / rel)
    text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
    return text[:90].replace("|", "\\|").replace("`", "'")


@cache
def _read(path: Path) -> list[str]:
    try:
        return path.read_text(errors="replace").splitlines()
    except OSError:
        return []


def _site(tree: Path, rel: str, line: int) -> str:
    return f"{rel}:{line} `{source_line(tree, rel, line)}`"


def _star_import(tree: Path, rel: str, text: str, callee: str) -> str | None:
    """`from M import *` in the calling file that brings in the callee's module (by its name)."""
    short = callee.rsplit(".", 1)[-1]
    if not re.search(rf"(?<![.\w]){re.escape(short)}\s*\(", text):
        return None
    module = callee.rsplit(".", 1)[0]
    for line in _read(tree / rel):
        match = re.match(r"\s*from\s+([\w.]+)\s+import\s+\*", line)
        if match and match.group(1).lstrip(".") in (module, module.rsplit(".", 1)[-1]):
            return match.group(0).strip()
    return None


def _local_alias(tree: Path, caller: dict | None, text: str) -> str | None:
    """`name = self.attr` inside the caller, when the call site calls `name(...)`."""
    match = re.search(r"(?<![.\w])(\w+)\s*\(", text)
    if not caller or not match:
        return None
    lines = _read(tree / caller["file"])[caller["start"] - 1 : caller["end"]]
    pattern = re.compile(rf"^\s*{re.escape(match.group(1))}\s*=\s*(self|cls)\.\w+\s*$")
    return next((ln.strip() for ln in lines if pattern.match(ln)), None)


def _bare_call_to_method(text: str, target: str, defs: dict[str, dict]) -> bool:
    """A bare-name call (`min(...)`) that the ground truth resolved to a method: its scope walk passes
    through the class scope, which Python never does for a bare name inside a method."""
    d = defs.get(target)
    short = re.escape(target.rsplit(".", 1)[-1])
    return bool(d and d["kind"] == "method" and re.search(rf"(?<![.\w]){short}\s*\(", text))


CLASS_SCOPE = (
    "the ground truth resolves the bare name through the class scope, which Python does not do: "
    "the call is to the module-level / imported / builtin name"
)


def _not_resolved(tree: Path, caller: dict | None, text: str, target: str, defs: dict[str, dict]) -> str:
    alias = _local_alias(tree, caller, text)
    if alias:
        return (
            f"local alias of a bound method (`{alias}`): the indexer does not track local variables; "
            "the ground truth reaches the method by looking the bare name up in the class scope "
            "(which Python itself does not do)"
        )
    if _bare_call_to_method(text, target, defs):
        return f"not a call of this method: {CLASS_SCOPE}"
    return "call not resolved by graphctx's indexer"


def _beyond_gt(tree: Path, rel: str, text: str, callee: str, other: list[str], defs: dict[str, dict]) -> str:
    """Why the ground truth has no edge for a call a system resolved. `other`: what the ground truth
    resolves at the same call site (only targets with the same last name are the same call)."""
    short = callee.rsplit(".", 1)[-1]
    same = [o for o in other if o.rsplit(".", 1)[-1] == short]
    if same and all(_bare_call_to_method(text, o, defs) for o in same):
        return f"ground truth says {', '.join(same)}: {CLASS_SCOPE}"
    if same:
        return f"ground truth resolves this call to {', '.join(same)}"
    star = _star_import(tree, rel, text, callee)
    if star:
        return f"call through `{star}`: the ground truth skips star imports"
    if SELF_CALL.search(text):
        return (
            "self/cls call the ground truth does not follow (it checks the own class and "
            "same-module bases only)"
        )
    return "call the ground truth leaves unresolved (it never guesses receivers or aliases)"


def _path(card: dict[str, Any]) -> str:
    where = str(card.get("at", ""))
    head, sep, span = where.rpartition(":")
    return head if sep and "-" in span else where


def _sites(entry: dict[str, Any], in_file: str | None = None) -> list[tuple[str, int]]:
    """(file, line) of an entry's call sites: its `lines` are in `in_file` (a callee's: the subject's
    file) or else in its own file (a caller's)."""
    out = []
    for s in entry.get("call_sites", []):  # the card shape before compact cards
        rel, _, line = s.rpartition(":")
        if line.isdigit():
            out.append((rel, int(line)))
    where = in_file or _path(entry)
    out += [(where, int(line)) for line in entry.get("lines", [])]
    return out


def explain_graphctx(
    service: Any,
    scope: Scope,
    tree: Path,
    gt_dir: Path,
    questions: list[dict],
    rows: list[tuple[Answer, Score]],
    envs: list[dict[str, Any]],
    defs: dict[str, dict],
) -> list[dict]:
    edges, by_site = gt_edges(gt_dir), gt_by_site(gt_dir)
    misses: list[dict] = []

    def add(symbol: str, kind: str, item: str, category: str, detail: str) -> None:
        misses.append(dict(symbol=symbol, kind=kind, item=item, category=category, detail=detail))

    def callees_of(caller: str) -> tuple[str, list[dict], str]:
        try:
            env = service.callees(scope, caller, limit=50, max_tokens=20_000)
        except NotFound:
            return "caller not in graphctx's index", [], ""
        except AmbiguousName:
            return "caller name ambiguous in graphctx", [], ""
        except GraphctxError as exc:
            return f"error {exc.code}", [], ""
        return "", env.get("callees", []), _path(env.get("subject", {}))

    for q, (answer, s), env in zip(questions, rows, envs, strict=True):
        x = q["symbol"]
        d = defs[x]
        if answer.error:
            add(x, "definition", x, "no answer", answer.error)
            continue
        if not s.def_exact:
            add(
                x,
                "definition",
                x,
                "definition differs",
                f"{answer.file}:{answer.start}-{answer.end} vs {d['file']}:{d['start']}-{d['end']}",
            )
        for c in s.missed_callers:
            sites = edges.get((c, x), [])
            detail = "; ".join(_site(tree, f, ln) for f, ln in sites[:3])
            if answer.omitted_callers:
                add(x, "caller", c, "omitted by the limit/budget (named in omissions)", detail)
                continue
            problem, theirs, caller_file = callees_of(c)
            if problem:
                add(x, "caller", c, problem, detail)
                continue
            others = sorted(
                {
                    e.get("qualified_name") or e["name"]
                    for e in theirs
                    if set(_sites(e, caller_file)) & set(sites)
                }
            )
            if others:
                add(x, "caller", c, f"graphctx resolves the call to {', '.join(others)}", detail)
            else:
                text = source_line(tree, *sites[0]) if sites else ""
                add(x, "caller", c, _not_resolved(tree, defs.get(c), text, x, defs), detail)
        for k in s.missed_callees:
            sites = edges.get((x, k), [])
            detail = "; ".join(_site(tree, f, ln) for f, ln in sites[:3])
            if answer.omitted_callees:
                add(x, "callee", k, "omitted by the limit/budget (named in omissions)", detail)
                continue
            subject_file = _path(env.get("subject", {}))
            others = sorted(
                {
                    e.get("qualified_name") or e["name"]
                    for e in env.get("callees", [])
                    if set(_sites(e, subject_file)) & set(sites)
                }
            )
            if others:
                add(x, "callee", k, f"graphctx resolves the call to {', '.join(others)}", detail)
            else:
                text = source_line(tree, *sites[0]) if sites else ""
                add(x, "callee", k, _not_resolved(tree, d, text, k, defs), detail)
        for key, kind, extras in (
            ("callers", "extra caller", s.extra_callers),
            ("callees", "extra callee", s.extra_callees),
        ):
            entries = list(env.get(key, []))
            seen: set[str] = set()
            for e in entries:
                name = e.get("qualified_name") or e["name"]
                if name not in extras or name in seen:
                    continue
                seen.add(name)
                sites = _sites(e, _path(env.get("subject", {})) if key == "callees" else None)
                text = " ".join(source_line(tree, f, ln) for f, ln in sites[:1])
                other = sorted(
                    {o for site in sites for o in by_site.get(site, []) if o != x}
                    if key == "callers"
                    else {o for site in sites for o in by_site.get(site, []) if o != name}
                )
                nested = [c for c in q["gt_callers"] if c.startswith(name + ".")] if key == "callers" else []
                if nested:
                    why = (
                        "listed under `tests` by its outermost test function; the ground truth's caller is "
                        f"the def nested in it ({', '.join(nested)})"
                    )
                else:
                    callee = x if key == "callers" else name
                    why = _beyond_gt(tree, sites[0][0] if sites else "", text, callee, other, defs)
                add(x, kind, name, why, "; ".join(_site(tree, f, ln) for f, ln in sites[:3]))
    return misses


def _no_edge(text: str, callee: str, from_module: bool) -> str:
    """Why graphify has no edge for a call the ground truth resolves, by the shape of the call."""
    short = re.escape(callee.rsplit(".", 1)[-1])
    if from_module:
        return "no call edge in graphify's graph from module-level code"
    if re.search(rf"\b\w+\.{short}\s*\(", text):
        return "no call edge in graphify's graph for a call through a module attribute (`mod.func()`)"
    return "no call edge in graphify's graph"


def explain_graphify(
    graph: Any, tree: Path, gt_dir: Path, questions: list[dict], rows: list[tuple[Answer, Score]]
) -> list[dict]:
    edges, by_site = gt_edges(gt_dir), gt_by_site(gt_dir)
    misses: list[dict] = []
    node_at: dict[tuple[str, int], str] = {}
    for nid, n in graph.nodes.items():
        loc = n.get("source_location") or ""
        if n.get("source_file") and loc.startswith("L") and not n.get("label", "").endswith(".py"):
            node_at.setdefault((n["source_file"], int(loc[1:])), nid)
        elif n.get("label", "").endswith(".py"):
            node_at.setdefault((n.get("source_file"), 0), nid)

    def node_of(q: str) -> str | None:
        d = graph.defs_lookup.get(q)
        if d is not None:
            return node_at.get((d["file"], d["start"]))
        base = q.replace(".", "/")  # module-level code: the file's node
        return node_at.get((f"{base}.py", 0)) or node_at.get((f"{base}/__init__.py", 0))

    def linked_at(src: str | None, sites: list[tuple[str, int]]) -> list[str]:
        if not src:
            return []
        found = []
        for other, e in graph.out.get(src, []):
            loc = (e.get("source_location") or "").removeprefix("L")
            if loc.isdigit() and (e.get("source_file"), int(loc)) in sites:
                found.append(f"{graph.nodes.get(other, {}).get('label', other)} [{e.get('relation')}]")
        return found

    def add(symbol: str, kind: str, item: str, category: str, detail: str) -> None:
        misses.append(dict(symbol=symbol, kind=kind, item=item, category=category, detail=detail))

    for q, (answer, s) in zip(questions, rows, strict=True):
        x = q["symbol"]
        if answer.error:
            add(x, "definition", x, "no answer", answer.error)
            continue
        if not s.def_exact:
            cat = "first line only (graphify stores no end line)" if s.start_exact else "definition differs"
            add(x, "definition", x, cat, f"{answer.file}:{answer.start}")
        for kind, missed in (("caller", s.missed_callers), ("callee", s.missed_callees)):
            for other in missed:
                caller = other if kind == "caller" else x
                sites = edges.get((caller, x) if kind == "caller" else (x, other), [])
                detail = "; ".join(_site(tree, f, ln) for f, ln in sites[:3])
                src = node_of(caller)
                linked = linked_at(src, sites)
                target = node_of(x if kind == "caller" else other)
                if src is None:
                    add(x, kind, other, "caller has no node in graphify's graph", detail)
                elif any(o == target for o, e in graph.out.get(src, []) if e.get("relation") in CALLS):
                    add(
                        x,
                        kind,
                        other,
                        "call edge is in graph.json but `explain` shows another relation between the same "
                        "two nodes (graphify collapses same-endpoint edges)",
                        detail,
                    )
                elif linked:
                    add(x, kind, other, f"graphify links the call to {', '.join(linked)}", detail)
                else:
                    text = source_line(tree, *sites[0]) if sites else ""
                    callee = x if kind == "caller" else other
                    add(x, kind, other, _no_edge(text, callee, caller not in graph.defs_lookup), detail)
        for kind, extras in (("extra caller", s.extra_callers), ("extra callee", s.extra_callees)):
            for other in extras:
                shown = answer.sites.get(other, [])
                sites = [
                    (m.group(1), int(m.group(2))) for m in (re.search(r"(\S+):(\d+)$", t) for t in shown) if m
                ]
                text = " ".join(source_line(tree, f, ln) for f, ln in sites[:1])
                gt_other = sorted({o for site in sites for o in by_site.get(site, [])} - {x, other})
                if other.startswith("<unmapped"):
                    category = "neighbour is no definition of the tree (external or synthetic node)"
                elif any(t.startswith("indirect_call") for t in shown):
                    category = (
                        "a function passed as a value, not called here (graphify's inferred `indirect_call`)"
                    )
                elif any("[INFERRED]" in t for t in shown):
                    category = "target guessed by name (graphify: INFERRED); the ground truth never guesses"
                else:
                    callee = x if kind == "extra caller" else other
                    category = _beyond_gt(
                        tree, sites[0][0] if sites else "", text, callee, gt_other, graph.defs_lookup
                    )
                relation = ", ".join(sorted({t.split(" ", 2)[0] + " " + t.split(" ", 2)[1] for t in shown}))
                detail = f"{relation}; " + "; ".join(_site(tree, f, ln) for f, ln in sites[:3])
                add(x, kind, other, category, detail)
    return misses
