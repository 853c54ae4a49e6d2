"""graphify (PyPI `graphifyy`) as the comparison system: a pinned version in its own virtualenv outside
the repository (created here when missing), an AST-only build with no network, and the same questions
asked through its `explain` command. Nothing of graphify is imported into this process."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from _code_data import Answer

VERSION = "0.9.96"
PACKAGE = f"graphifyy=={VERSION}"
CALL_RELATIONS = {"calls", "indirect_call"}
CONNECTION = re.compile(r"^  (-->|<--) (.*) \[([a-z_]+)\] \[([A-Z]+)\](?: (\S+):L(\d+))?$")


def ensure_venv(data_dir: Path) -> Path:
    """The graphify executable of a virtualenv under data_dir holding exactly graphifyy==VERSION."""
    venv = data_dir / "graphify-venv"
    exe = venv / "bin" / "graphify"
    pip = venv / "bin" / "pip"
    if exe.exists() and _installed(pip) == VERSION:
        return exe
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(pip), "install", "--quiet", PACKAGE], check=True)
    if _installed(pip) != VERSION:
        raise RuntimeError(f"graphify venv at {venv} does not hold {PACKAGE}")
    return exe


def _installed(pip: Path) -> str | None:
    if not pip.exists():
        return None
    out = subprocess.run([str(pip), "show", "graphifyy"], check=False, capture_output=True, text=True).stdout
    match = re.search(r"^Version: (\S+)", out, re.M)
    return match.group(1) if match else None


def offline_prefix() -> list[str]:
    """Run inside a network namespace with only loopback when the machine allows it (proves offline)."""
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "-n", "true"], check=False, capture_output=True).returncode == 0:
        return [unshare, "-n"]
    return []


@dataclass
class Build:
    seconds: float
    noop_seconds: float
    graph_bytes: int
    out_bytes: int
    nodes: int
    edges: int
    files: int
    offline: bool
    log_tail: str
    load_before: float = float("nan")


def dir_bytes(path: Path) -> int:
    """Bytes allocated on disk (as `du`): vector segments are sparse files far larger than their data."""
    files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file()]
    return sum(p.stat().st_blocks * 512 for p in files)


def build(exe: Path, tree: Path, out: Path, home: Path) -> Build:
    """`graphify extract TREE --code-only --no-cluster` (local AST, no API key), timed; a second run on
    the unchanged tree is the no-op rebuild. Cached in out/build.json."""
    record = out / "build.json"
    if record.exists():
        return Build(**json.loads(record.read_text()))
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    home.mkdir(parents=True, exist_ok=True)
    prefix = offline_prefix()
    load = os.getloadavg()[0]
    cmd = [*prefix, str(exe), "extract", str(tree), "--code-only", "--no-cluster", "--out", str(out)]
    env = {**os.environ, "HOME": str(home)}
    for key in [k for k in env if k.endswith("_API_KEY")]:
        env.pop(key)  # no key: proves the build needs no LLM
    started = time.perf_counter()
    run = subprocess.run(cmd, check=False, capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - started
    if run.returncode != 0:
        raise RuntimeError(f"graphify extract failed ({run.returncode}): {run.stderr[-2000:]}")
    graph_bytes = (out / "graphify-out" / "graph.json").stat().st_size
    out_bytes = dir_bytes(out / "graphify-out")
    started = time.perf_counter()
    subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
    noop = time.perf_counter() - started
    graph = json.loads((out / "graphify-out" / "graph.json").read_text())
    manifest = json.loads((out / "graphify-out" / "manifest.json").read_text())
    result = Build(
        seconds=seconds,
        noop_seconds=noop,
        graph_bytes=graph_bytes,
        out_bytes=out_bytes,
        nodes=len(graph["nodes"]),
        edges=len(graph.get("edges", graph.get("links", []))),
        files=sum(1 for name in manifest if name.endswith(".py")),
        offline=bool(prefix),
        log_tail="\n".join((run.stdout + run.stderr).splitlines()[-3:]),
        load_before=load,
    )
    record.write_text(json.dumps(result.__dict__, indent=1))
    return result


class Graph:
    """graph.json read once, to turn the nodes that `explain` prints into qualified names (by the
    neighbour's own file and definition line) for scoring."""

    def __init__(self, path: Path, defs: dict[str, dict], modules: dict[str, str] | None = None) -> None:
        raw = json.loads(path.read_text())
        self.path = path
        self.nodes = {n["id"]: n for n in raw["nodes"]}
        self.defs_lookup = defs
        self.module_of = modules or {}  # file -> module name when it is not the file's dotted path
        self.by_site = {(d["file"], d["start"]): q for q, d in defs.items()}
        self.modules = {d["file"]: q.rsplit(".", 1)[0] for q, d in defs.items()}
        self.out: dict[str, list[tuple[str, dict]]] = {}
        self.into: dict[str, list[tuple[str, dict]]] = {}
        for e in raw.get("edges", raw.get("links", [])):
            src = e.get("_src", e["source"])
            dst = e["target"] if src == e["source"] else e["source"]
            self.out.setdefault(src, []).append((dst, e))
            self.into.setdefault(dst, []).append((src, e))

    def qualname(self, node_id: str, tree: Path) -> str | None:
        node = self.nodes.get(node_id, {})
        file, loc = node.get("source_file") or "", node.get("source_location") or ""
        if not file or not loc.startswith("L"):
            return None
        if node.get("label", "").endswith(".py"):  # a file node: module-level code
            return self.module_of.get(file) or _module_name(file)
        return self.by_site.get((file, int(loc[1:])))

    def node_for(self, text: str) -> str | None:
        match = re.search(r"^  ID:\s+(\S+)$", text, re.M)
        return match.group(1) if match else None


def _module_name(rel: str) -> str:
    parts = list(Path(rel).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def module_file(tree: Path, qualified: str) -> tuple[str, str] | None:
    """(file, rest of the name) for the longest dotted prefix that is a module of the tree — what an
    agent finds by listing the tree, without knowing where the symbol is defined."""
    parts = qualified.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        base = "/".join(parts[:cut])
        for rel in (f"{base}.py", f"{base}/__init__.py"):
            if (tree / rel).is_file():
                return rel, ".".join(parts[cut:])
    return None


def attempts(
    tree: Path, qualified: str, locate: Callable[[str], tuple[str, str] | None] | None = None
) -> list[str]:
    """The names an agent would try, in order: the qualified name, then `file::Class.name`, then
    `file::name` (graphify's documented forms). `locate` finds the file when import names are not
    paths (a src layout)."""
    names = [qualified]
    located = module_file(tree, qualified) or (locate(qualified) if locate is not None else None)
    if located:
        rel, rest = located
        names += [f"{rel}::{rest}", f"{rel}::{rest.rsplit('.', 1)[-1]}"]
    return names


def ask(
    exe: Path,
    graph: Graph,
    tree: Path,
    qualified: str,
    budget: int,
    locate: Callable[[str], tuple[str, str] | None] | None = None,
) -> tuple[Answer, list[str]]:
    """Ask `graphify explain NAME --all` until one form resolves; every attempt's output counts as
    returned tokens (an agent reads each). The answer is cut at the budget like any answer would be.
    On an ambiguity refusal the candidate ids are tried (the agent picks the one in the right class)."""
    total_bytes = 0
    log: list[str] = []
    text = ""
    names = attempts(tree, qualified, locate)
    tried: set[str] = set()
    while names:
        name = names.pop(0)
        if name in tried:
            continue
        tried.add(name)
        run = subprocess.run(
            [str(exe), "explain", name, "--all", "--graph", str(graph.path)],
            check=False,
            capture_output=True,
            text=True,
            cwd=graph.path.parent,
        )
        out = run.stdout + run.stderr
        total_bytes += len(out.encode())
        log.append(f"explain {name!r} -> exit {run.returncode}")
        if run.returncode == 0:
            text = out
            break
        if run.returncode == 3:  # ambiguous: the refusal lists candidates; pick the right class's
            names = _pick_candidates(graph, out, qualified) + names
    answer = Answer(tokens=math.ceil(total_bytes / 4))
    if not text:
        answer.error = "; ".join(log)
        return answer, log
    cut = text.encode()[: budget * 4].decode(errors="ignore")
    node_id = graph.node_for(cut)
    node = graph.nodes.get(node_id or "", {})
    answer.file = node.get("source_file")
    loc = node.get("source_location") or ""
    answer.start = int(loc[1:]) if loc.startswith("L") else None
    answer.end = None  # graphify stores the first line only
    shown = {
        (m.group(1), m.group(2), m.group(3), m.group(5), m.group(6))
        for m in map(CONNECTION.match, cut.splitlines())
        if m
    }
    for direction, neighbours in (
        ("<--", graph.into.get(node_id or "", [])),
        ("-->", graph.out.get(node_id or "", [])),
    ):
        for other, edge in neighbours:
            if edge.get("relation") not in CALL_RELATIONS:
                continue
            loc = (edge.get("source_location") or "").removeprefix("L") or None
            key = (
                direction,
                graph.nodes.get(other, {}).get("label", other),
                edge["relation"],
                edge.get("source_file") or None,
                loc,
            )
            if key not in shown:
                continue
            q = graph.qualname(other, tree)
            if q is None:
                q = f"<unmapped {other}>"
            (answer.callers if direction == "<--" else answer.callees).add(q)
            where = f"{edge.get('source_file')}:{loc}" if loc else "no site"
            answer.sites.setdefault(q, []).append(f"{edge['relation']} [{edge.get('confidence')}] {where}")
    return answer, log


def _pick_candidates(graph: Graph, refusal: str, qualified: str) -> list[str]:
    """Candidate node ids named in a refusal whose qualified name (by file + line) is the asked one."""
    ids = re.findall(r"\b([a-z0-9_]+)\b", refusal)
    picked = [i for i in dict.fromkeys(ids) if i in graph.nodes and graph.qualname(i, Path()) == qualified]
    return picked
