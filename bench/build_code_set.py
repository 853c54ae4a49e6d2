"""Build a natural-language -> code question set from a real PyPI package (independent of graphctx).

Usage (from the repository root):

    python bench/build_code_set.py [PACKAGE==VERSION] [--out DIR] [--min-words 6]

Downloads the package's wheel from PyPI (`pip download --no-deps --only-binary :all:`), or its sdist when it
has no wheel, and writes into DIR:

- `tree/`: the package's Python files with every docstring removed (replaced by `...`, so the code
  stays valid and nothing of the description is left to match);
- `queries.jsonl`: one question per documented public function, method or class: the first paragraph of
  its docstring (the documentation's description of what it does), with the definition's qualified
  name as the answer;
- `corpus.jsonl`: the docstring-stripped source of every definition (what the BM25 / dense references
  search);
- `set.json`: package, version, file and question counts.

Only `ast` and the standard library are used: the builder shares nothing with graphctx's indexer.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from pathlib import Path

DEFAULT = "click==8.1.7"
_DOC_NODES = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def download(spec: str, into: Path) -> Path:
    for flags in (["--only-binary", ":all:"], ["--no-binary", ":all:"]):
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", *flags, "-d", str(into), spec],
            capture_output=True,
            text=True,
            check=False,
        )
        files = sorted(into.iterdir())
        if done.returncode == 0 and files:
            return files[0]
    raise SystemExit(f"pip could not download {spec}: {done.stderr[-500:]}")


def extract(archive: Path, into: Path) -> Path:
    if archive.suffix in {".whl", ".zip"}:
        with zipfile.ZipFile(archive) as z:
            z.extractall(into)
    else:
        with tarfile.open(archive) as t:
            t.extractall(into, filter="data")
    return into


def docstring_spans(tree: ast.Module) -> list[tuple[ast.AST, ast.Constant]]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, _DOC_NODES) and node.body:
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                out.append((node, first.value))
    return out


def strip_docstrings(source: str) -> str:
    """The source with each docstring literal replaced by `...` (line structure of the rest kept)."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line.encode("utf-8")))
    data = source.encode("utf-8")
    spans = []
    for _, const in docstring_spans(tree):
        start = offsets[const.lineno - 1] + const.col_offset
        end = offsets[(const.end_lineno or const.lineno) - 1] + (const.end_col_offset or 0)
        spans.append((start, end))
    for start, end in sorted(spans, reverse=True):
        data = data[:start] + b"..." + data[end:]
    return data.decode("utf-8")


def description(doc: str) -> str:
    """The first paragraph, whitespace collapsed, without reST roles' markup."""
    para = re.split(r"\n\s*\n", doc.strip(), maxsplit=1)[0]
    para = re.sub(r":\w+:`~?([^`]+)`", r"\1", para)
    return " ".join(para.replace("``", "").split())


def module_name(rel: str) -> str:
    parts = rel[: -len(".py")].split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def definitions(tree: ast.Module, module: str):
    """(qualified name, kind, node) of every class, function and method, nested ones included."""

    def walk(body, prefix, in_class):
        for node in body:
            if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                qual = f"{prefix}.{node.name}"
                kind = "class" if isinstance(node, ast.ClassDef) else ("method" if in_class else "function")
                yield qual, kind, node
                yield from walk(node.body, qual, isinstance(node, ast.ClassDef))

    yield from walk(tree.body, module, False)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("package", nargs="?", default=DEFAULT)
    parser.add_argument("--out", type=Path, default=Path.home() / ".cache" / "graphctx-bench" / "code-set")
    parser.add_argument("--min-words", type=int, default=6)
    args = parser.parse_args()
    name, _, version = args.package.partition("==")
    with tempfile.TemporaryDirectory() as tmp:
        archive = download(args.package, Path(tmp) / "dl")
        root = extract(archive, Path(tmp) / "src")
        files = sorted(
            p
            for p in root.rglob("*.py")
            if ".dist-info" not in str(p) and "tests" not in p.relative_to(root).parts[:-1]
        )
        top = min((p.relative_to(root) for p in files), key=lambda r: len(r.parts)).parts[0]
        base = root if (root / top / "__init__.py").exists() or (root / f"{top}").is_file() else root / top
        if args.out.exists():
            shutil.rmtree(args.out)
        tree_dir = args.out / "tree"
        queries, corpus = [], []
        for path in files:
            rel = path.relative_to(base).as_posix()
            if rel.startswith(("tests/", "test/", "docs/")) or rel.startswith(".."):
                continue
            source = path.read_text(encoding="utf-8", errors="replace")
            try:
                tree = ast.parse(source)
                stripped = strip_docstrings(source)
                stripped_tree = ast.parse(stripped)
            except SyntaxError:
                continue
            target = tree_dir / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(stripped, encoding="utf-8")
            module = module_name(rel)
            stripped_nodes = {q: n for q, _, n in definitions(stripped_tree, module)}
            for qual, kind, node in definitions(tree, module):
                segment = ast.get_source_segment(stripped, stripped_nodes[qual]) or ""
                corpus.append({"qualified_name": qual, "text": segment})
                doc = ast.get_docstring(node)
                short = node.name.startswith("_")
                if not doc or short:
                    continue
                text = description(doc)
                if len(text.split()) >= args.min_words:
                    queries.append({"id": qual, "query": text[:1000], "qualified_name": qual, "kind": kind})
        (args.out / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
        (args.out / "corpus.jsonl").write_text("".join(json.dumps(c) + "\n" for c in corpus))
        meta = {
            "package": name,
            "version": version or archive.name,
            "archive": archive.name,
            "files": len(list(tree_dir.rglob("*.py"))),
            "definitions": len(corpus),
            "questions": len(queries),
        }
        (args.out / "set.json").write_text(json.dumps(meta, indent=1))
    print(json.dumps(meta))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
