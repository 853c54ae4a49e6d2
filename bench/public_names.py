"""A package's public names as its users write them (`httpx.get`, `flask.Flask`, `click.Command`):
does `symbol PKG.NAME` answer with the definition that name is at run time?

Ground truth, shared with nothing in graphctx: the interpreter. Each package is installed from PyPI
with its dependencies into a throwaway venv and imported; every public function and class of its
top-level namespace (`__all__`, else the names without a leading underscore) is located with
`inspect` (its source file within the package and its first line). Objects another distribution
defines (`flask.escape` is markupsafe's) are counted apart, not asked.

graphctx indexes the same version's sdist and answers `symbol PKG.NAME`, scored exact when the file
matches and the runtime's first line lies in the card's line range. Side by side in the same run and
store: the same questions with the resolution rule for package exports switched off (what graphctx
answered before it recorded `exports` edges).

    python bench/public_names.py --write
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import venv
from collections import Counter
from pathlib import Path
from typing import Any

from _report import header, write_section
from code_repos import pypi

from graphctx import names
from graphctx.errors import AmbiguousName, GraphctxError, NotFound
from graphctx.scope import Scope
from graphctx.service import ContextService
from graphctx.settings import Settings

SCOPE = Scope("bench")
PACKAGES = {  # import name: PyPI requirement
    "httpx": "httpx==0.27.0",
    "requests": "requests==2.32.3",
    "flask": "flask==3.0.3",
    "click": "click==8.1.7",
    "pyparsing": "pyparsing==3.1.2",  # re-exports through star imports
}
LOCATE = r"""
import ast, importlib, inspect, json, os, re, sys


def class_file(cls, package_dir):
    # a class's file by its own functions' code (inspect goes by __module__, which httpx rewrites),
    # else the one file of the package with a top-level class of that name
    for value in vars(cls).values():
        code = getattr(inspect.unwrap(value) if callable(value) else value, "__code__", None)
        if code is not None:
            return code.co_filename
    files = []
    for folder, _, names in os.walk(package_dir):
        for file in (os.path.join(folder, n) for n in names if n.endswith(".py")):
            body = ast.parse(open(file, encoding="utf-8").read()).body
            if any(isinstance(n, ast.ClassDef) and n.name == cls.__name__ for n in body):
                files.append(file)
    if len(files) == 1:
        return files[0]
    raise OSError(cls.__qualname__)


def class_line(path, qualname):
    tree = ast.parse(open(path, encoding="utf-8").read())
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == qualname.rpartition(".")[2]:
            return min([node.lineno, *(d.lineno for d in node.decorator_list)])
    raise OSError(qualname)


out = {}
for name in sys.argv[1:]:
    pkg = importlib.import_module(name)
    root = os.path.dirname(os.path.dirname(os.path.abspath(pkg.__file__)))
    public = getattr(pkg, "__all__", None) or [n for n in dir(pkg) if not n.startswith("_")]
    rows = {}
    for attr in public:
        obj = getattr(pkg, attr, None)
        if not (inspect.isfunction(obj) or inspect.isclass(obj)):
            continue
        try:
            if inspect.isclass(obj):
                path = class_file(obj, os.path.dirname(os.path.abspath(pkg.__file__)))
                line = class_line(path, obj.__qualname__)
            else:
                obj = inspect.unwrap(obj)
                if not inspect.isfunction(obj):
                    raise OSError("a wrapper of a class")
                path, (source, line) = obj.__code__.co_filename, inspect.getsourcelines(obj)
                statement = next(s for s in source if not s.lstrip().startswith("@"))
                if not re.match(rf"\s*(async\s+)?def\s+{re.escape(obj.__name__)}\b", statement):
                    raise OSError("made at run time")  # a wrapper a call returned
        except (TypeError, OSError, StopIteration):
            rows[attr] = None  # built in, no source, or no statement that defines it by its name
            continue
        rows[attr] = [os.path.relpath(path, root).replace(os.sep, "/"), line]
    out[name] = rows
print(json.dumps(out))
"""


def runtime_truth(data: Path) -> dict[str, dict[str, Any]]:
    env_dir = data / "runtime-venv"
    python = env_dir / "bin" / "python"
    if not python.exists():
        venv.EnvBuilder(with_pip=True, clear=True).create(env_dir)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", *PACKAGES.values()], check=True)
    found = subprocess.run(
        [str(python), "-c", LOCATE, *PACKAGES], check=True, capture_output=True, text=True, cwd=data
    )
    return json.loads(found.stdout)


def ask(service: ContextService, package: str, truth: dict[str, Any]) -> Counter[str]:
    outcome: Counter[str] = Counter()
    for attr, where in sorted(truth.items()):
        if where is None:
            outcome["no definition statement (not asked)"] += 1
            continue
        if not where[0].startswith(f"{package}/"):
            outcome["defined by another distribution (not asked)"] += 1
            continue
        try:
            subject = service.symbol(SCOPE, f"{package}.{attr}", max_tokens=512)["subject"]
        except AmbiguousName:
            outcome["ambiguous"] += 1
            continue
        except NotFound:
            outcome["not found"] += 1
            continue
        except GraphctxError as exc:
            outcome[f"error {exc.code}"] += 1
            continue
        path, _, lines = subject["at"].rpartition(":")
        start, _, end = lines.partition("-")
        same_file = path == where[0] or path.endswith("/" + where[0])
        if same_file and int(start) <= where[1] <= int(end or start):
            outcome["exact"] += 1
        else:
            outcome["another definition"] += 1
    return outcome


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=Path.home() / ".cache" / "graphctx-bench-names")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    data = args.data_dir.resolve()
    data.mkdir(parents=True, exist_ok=True)
    truth = runtime_truth(data)
    rows = []
    for package, requirement in PACKAGES.items():
        tree = pypi(requirement)(data / "sdists")
        store = data / f"store-{package}"
        shutil.rmtree(store, ignore_errors=True)  # a fresh index of this tree, never an older one
        with ContextService.open(Settings(data_dir=store)) as service:
            service.index_repository(SCOPE, tree, repo=package)
            ours = ask(service, package, truth[package])
            rule = names._through_exports
            names._through_exports = lambda *a, **k: []  # the rule off: the answers before it
            try:
                before = ask(service, package, truth[package])
            finally:
                names._through_exports = rule
        rows.append((package, requirement, ours, before))
        print(package, dict(ours), "without the rule:", dict(before), flush=True)
    body = report(rows, " ".join(["python", "bench/public_names.py", *sys.argv[1:]]))
    print(body)
    if args.write:
        write_section("public_names", body)


NOT_ASKED = ("defined by another distribution (not asked)", "no definition statement (not asked)")


def report(rows: list[tuple[str, str, Counter[str], Counter[str]]], command: str) -> str:
    kinds = ["exact", "another definition", "ambiguous", "not found"]
    asked = sum(sum(v for k, v in ours.items() if k not in NOT_ASKED) for _, _, ours, _ in rows)
    lines = [
        "### Public names of packages: `symbol PKG.NAME` against the interpreter",
        "",
        header(command, f"{', '.join(r for _, r, _, _ in rows)} (sdists from PyPI); {asked} public "
               "functions and classes asked, located at run time in a venv of these versions"),
        "",
        "| package | asked | " + " | ".join(kinds) + " | errors | the rule off: exact | "
        "not asked: another distribution's / no definition statement |",
        "|---|---:|" + "---:|" * len(kinds) + "---:|---:|---|",
    ]  # fmt: skip
    for _package, requirement, ours, before in rows:
        other, unlocated = (ours.get(k, 0) for k in NOT_ASKED)
        errors = sum(v for k, v in ours.items() if k.startswith("error"))
        total = sum(ours.values()) - other - unlocated
        cells = " | ".join(str(ours.get(k, 0)) for k in kinds)
        off = before.get("exact", 0)
        lines.append(f"| {requirement} | {total} | {cells} | {errors} | {off} | {other} / {unlocated} |")
    lines += [
        "",
        "`exact`: the card's file is the object's source file and its line range holds the "
        "object's first line (a function's by inspect; a class's file by its own functions' code "
        "objects, since inspect goes by `__module__`, which httpx sets to `httpx` for every public "
        "name, or, for a class without functions of its own, the one file of the package with a "
        "top-level class of that name; its line by the `class` statement or first decorator in "
        "that file). `the rule off`: the same store asked with graphctx.names' rule for package "
        "exports disabled: how graphctx resolved these names before it recorded `exports` edges "
        "(only names defined in the package's `__init__` itself).",
        f"Load average at the end: {os.getloadavg()[0]:.1f}.",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
