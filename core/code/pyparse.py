"""One Python file → its definitions, name bindings per scope, class bases and raw call sites.

Nothing here resolves across files; `resolve.py` does that over all parsed modules. Source bodies
are never kept: a definition keeps its one-line signature, first docstring line and a digest.
"""

from __future__ import annotations

import ast
import hashlib
import re
import warnings
from dataclasses import dataclass, field

from graphctx.redact import redact

SIGNATURE_CHARS = 240
SUMMARY_CHARS = 300
SUPER = "<super>"  # head of the chain of a `super().name(...)` call

Chain = tuple[str, ...]


@dataclass(slots=True, eq=False)
class Block:
    """A lexical scope: the module, a class body or a function body."""

    qualname: str  # within the module; "" for the module itself
    kind: str  # "module" | "class" | "function"
    parent: Block | None
    defs: dict[str, str] = field(default_factory=dict)  # child def name -> qualname
    imports: dict[str, set[str]] = field(default_factory=dict)  # bound name -> absolute dotted paths
    locals: set[str] = field(default_factory=set)  # bound otherwise (params, assignments)
    globals_: set[str] = field(default_factory=set)
    first_param: str | None = None  # a method's self/cls
    static: bool = False
    classmethod: bool = False
    # parameters that alias a global through their default (`def f(x, _len=len)`), read in the
    # enclosing scope: the idiom binds the name at definition time
    aliases: dict[str, tuple[Chain, Block]] = field(default_factory=dict)


@dataclass(slots=True)
class Def:
    qualname: str
    name: str
    kind: str  # "class" | "function" | "method"
    start: int
    end: int
    signature: str
    summary: str
    digest: str
    parent: str  # qualname of the enclosing def, "" for the module
    docstring: str = ""  # the whole docstring (indexed-only search text, never stored as a card)
    decorators: tuple[str, ...] = ()
    bases: tuple[str, ...] = ()


@dataclass(slots=True)
class ClassInfo:
    qualname: str
    bases: list[Chain | None]  # None: a base that is not a name chain (a call, ...)
    scope: Block  # where the bases are evaluated
    members: Block  # the class body


@dataclass(slots=True)
class Call:
    caller: str  # qualname of the def the call belongs to ("" = module level)
    block: Block  # where its names are looked up
    chain: Chain | None  # dotted name being called; None when it is not a name chain
    line: int


@dataclass(slots=True)
class Import:
    line: int
    targets: tuple[str, ...]  # absolute dotted candidates, most specific first


@dataclass
class Module:
    name: str  # dotted
    relpath: str
    is_package: bool
    lines: int
    summary: str = ""
    defs: dict[str, Def] = field(default_factory=dict)
    classes: dict[str, ClassInfo] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    imports: list[Import] = field(default_factory=list)
    stars: list[str] = field(default_factory=list)  # `from X import *` sources, absolute
    all_names: frozenset[str] | None = None  # a literal __all__
    top: Block = field(default_factory=lambda: Block("", "module", None))
    error: str | None = None
    docstring: str = ""
    refs: dict[str, set[str]] = field(default_factory=dict)  # def qualname ("" = module) -> names used


def module_name(relpath: str) -> tuple[str, bool]:
    """Dotted module name of a file (build_gt.py's rule) and whether it is a package `__init__`."""
    parts = relpath[: -len(".py")].split("/")
    is_package = parts[-1] == "__init__"
    if is_package:
        parts = parts[:-1]
    return ".".join(parts), is_package


def first_line(text: str | None) -> str:
    if not text:
        return ""
    for raw in text.strip().splitlines():
        line = raw.strip()
        if line:
            return redact(line[:SUMMARY_CHARS])
    return ""


_COMMENT = re.compile(r"\s+#[^'\"]*$")
_SPACES = re.compile(r"\s+")


def _signature(lines: list[bytes], node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> str:
    """The def/class header on one line, decorators and comments left out, shortened with …"""
    start = node.lineno - 1
    body = node.body[0]
    stop = body.lineno - 1
    parts = [ln.decode("utf-8", "replace") for ln in lines[start:stop]] if stop > start else []
    if stop >= start:
        parts.append(lines[stop][: body.col_offset].decode("utf-8", "replace") if stop < len(lines) else "")
    kept = [p for p in parts if not p.strip().startswith("#")]
    text = " ".join(_COMMENT.sub("", p.rstrip()) for p in kept)
    text = _SPACES.sub(" ", text).strip()
    if text.endswith(":"):
        text = text[:-1].rstrip()
    text = text.replace("( ", "(").replace(" )", ")").replace(", )", ")")
    if len(text) > SIGNATURE_CHARS:
        text = text[: SIGNATURE_CHARS - 1] + "…"
    return redact(text)


def _dotted(node: ast.expr) -> str:
    """A decorator or base as a dotted name (`functools.lru_cache(...)` -> functools.lru_cache)."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Subscript):
        node = node.value
    chain = _chain(node)
    return ".".join(chain) if chain and chain[0] != SUPER else ""


def _chain(node: ast.expr) -> Chain | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return tuple(reversed(parts))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super" and parts:
        parts.append(SUPER)
        return tuple(reversed(parts))
    return None


_DEFS = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})
_NAMED = frozenset({ast.ExceptHandler, ast.MatchAs, ast.MatchStar})  # nodes that bind `.name`
# nodes with nothing to record below them
_LEAVES = frozenset(
    {ast.Constant, ast.Load, ast.Store, ast.Del, ast.Pass, ast.Break, ast.Continue}
    | {
        c
        for c in vars(ast).values()
        if isinstance(c, type) and issubclass(c, ast.operator | ast.unaryop | ast.cmpop | ast.boolop)
    }
)


def _has_decorator(node: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
    return any(isinstance(d, ast.Name) and d.id == name for d in node.decorator_list)


class _Parser:
    def __init__(self, module: Module, data: bytes) -> None:
        self.m = module
        self.lines = data.splitlines(keepends=True)
        self.package = module.name if module.is_package else module.name.rpartition(".")[0]

    # -- imports -------------------------------------------------------------------------------

    def _from_base(self, node: ast.ImportFrom) -> str | None:
        if not node.level:
            return node.module or ""
        parts = self.package.split(".") if self.package else []
        if node.level > 1:
            if node.level - 1 > len(parts):
                return None  # beyond the top-level package
            parts = parts[: len(parts) - (node.level - 1)]
        if node.module:
            parts.append(node.module)
        return ".".join(p for p in parts if p)

    def _import(self, node: ast.Import | ast.ImportFrom, block: Block) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    block.imports.setdefault(alias.asname, set()).add(alias.name)
                else:
                    head = alias.name.split(".")[0]
                    block.imports.setdefault(head, set()).add(head)
                self.m.imports.append(Import(node.lineno, (alias.name,)))
            return
        base = self._from_base(node)
        if base is None:
            return
        for alias in node.names:
            if alias.name == "*":
                if block.kind == "module" and base:
                    self.m.stars.append(base)
                self.m.imports.append(Import(node.lineno, (base,)))
                continue
            full = f"{base}.{alias.name}" if base else alias.name
            block.imports.setdefault(alias.asname or alias.name, set()).add(full)
            self.m.imports.append(Import(node.lineno, (full, base) if base else (full,)))

    # -- definitions ---------------------------------------------------------------------------

    def _def(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef, block: Block, owner: str
    ) -> Block:
        qual = f"{block.qualname}.{node.name}" if block.qualname else node.name
        block.defs[node.name] = qual
        is_class = isinstance(node, ast.ClassDef)
        kind = "class" if is_class else ("method" if block.kind == "class" else "function")
        end = node.end_lineno or node.lineno
        digest = hashlib.sha256(b"".join(self.lines[node.lineno - 1 : end])).hexdigest()
        docstring = ast.get_docstring(node) or ""
        summary = first_line(docstring)
        previous = self.m.defs.get(qual)
        if previous is not None and not summary:
            summary = previous.summary  # a redefinition (property setter, ...) keeps the first docstring
        self.m.defs[qual] = Def(
            qual,
            node.name,
            kind,
            node.lineno,
            end,
            _signature(self.lines, node),
            summary,
            "sha256:" + digest,
            block.qualname,
            docstring or (previous.docstring if previous is not None else ""),
            tuple(d for d in (_dotted(deco) for deco in node.decorator_list) if d),
            tuple(b for b in map(_dotted, node.bases) if b) if isinstance(node, ast.ClassDef) else (),
        )
        inner = Block(qual, "class" if is_class else "function", block)
        # decorators, defaults, annotations and bases belong to the def statement (build_gt.py's rule)
        # but are evaluated in the enclosing scope
        for deco in node.decorator_list:
            self._visit(deco, block, qual)
        if is_class:
            assert isinstance(node, ast.ClassDef)
            for base in node.bases:
                self._visit(base, block, qual)
            for kw in node.keywords:
                self._visit(kw, block, qual)
            bases: list[Chain | None] = []
            for base in node.bases:
                expr = base.value if isinstance(base, ast.Subscript) else base
                bases.append(_chain(expr))
            self.m.classes[qual] = ClassInfo(qual, bases, block, inner)
        else:
            assert not isinstance(node, ast.ClassDef)
            args = node.args
            for default in [*args.defaults, *(d for d in args.kw_defaults if d is not None)]:
                self._visit(default, block, qual)
            every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
            for a in [*every, args.vararg, args.kwarg]:
                if a is None:
                    continue
                inner.locals.add(a.arg)
                if a.annotation is not None:
                    self._visit(a.annotation, block, qual)
            if node.returns is not None:
                self._visit(node.returns, block, qual)
            positional = [*args.posonlyargs, *args.args]
            if block.kind == "class" and positional:
                inner.first_param = positional[0].arg
                inner.static = _has_decorator(node, "staticmethod")
                inner.classmethod = _has_decorator(node, "classmethod")
            defaulted = [
                *zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True),
                *((a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None),
            ]
            for arg, default in defaulted:
                chain = _chain(default)
                if (
                    chain is not None
                    and chain[0] != SUPER
                    and (arg.arg.startswith("_") or arg.arg == chain[-1])
                ):
                    inner.aliases[arg.arg] = (chain, block)
        for stmt in node.body:
            self._visit(stmt, inner, qual)
        return inner

    # -- the walk ------------------------------------------------------------------------------

    def _visit(self, node: ast.AST, block: Block, owner: str) -> None:
        kind = type(node)
        # the commonest nodes first, by exact type (the hot path of indexing)
        if kind is ast.Name:
            if type(node.ctx) is not ast.Load:  # type: ignore[attr-defined]
                block.locals.add(node.id)  # type: ignore[attr-defined]
            else:
                self._ref(owner, node.id)  # type: ignore[attr-defined]
            return
        if kind in _LEAVES:
            return
        if kind is ast.Attribute:
            self._ref(owner, node.attr)  # type: ignore[attr-defined]
            self._visit(node.value, block, owner)  # type: ignore[attr-defined]
            return
        if kind is ast.Call:
            assert isinstance(node, ast.Call)
            self.m.calls.append(Call(owner, block, _chain(node.func), node.lineno))
            self._visit(node.func, block, owner)
            for value in node.args:
                self._visit(value, block, owner)
            for kw in node.keywords:
                self._visit(kw.value, block, owner)
            return
        if kind in _DEFS:
            self._def(node, block, owner)  # type: ignore[arg-type]
            return
        if kind is ast.Import or kind is ast.ImportFrom:
            self._import(node, block)  # type: ignore[arg-type]
            return
        if kind is ast.Global or kind is ast.Nonlocal:
            block.globals_.update(node.names)  # type: ignore[attr-defined]
            return
        if kind is ast.Lambda:
            assert isinstance(node, ast.Lambda)
            inner = Block(block.qualname, "function", block)  # its parameters shadow outer names
            a = node.args
            for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]:
                if arg is not None:
                    inner.locals.add(arg.arg)
            for default in [*a.defaults, *(d for d in a.kw_defaults if d is not None)]:
                self._visit(default, block, owner)
            self._visit(node.body, inner, owner)
            return
        if kind in _NAMED and node.name:  # type: ignore[attr-defined]
            block.locals.add(node.name)  # type: ignore[attr-defined]
        for child in ast.iter_child_nodes(node):
            self._visit(child, block, owner)

    def _ref(self, owner: str, name: str) -> None:
        refs = self.m.refs.get(owner)
        if refs is None:
            refs = self.m.refs[owner] = set()
        refs.add(name)

    def run(self, tree: ast.Module) -> None:
        self.m.docstring = ast.get_docstring(tree) or ""
        self.m.summary = first_line(self.m.docstring)
        for stmt in tree.body:
            self._visit(stmt, self.m.top, "")
            if (
                isinstance(stmt, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "__all__" for t in stmt.targets)
                and isinstance(stmt.value, ast.List | ast.Tuple)
            ):
                names = [e.value for e in stmt.value.elts if isinstance(e, ast.Constant)]
                self.m.all_names = frozenset(n for n in names if isinstance(n, str))


def parse_module(relpath: str, data: bytes) -> Module:
    name, is_package = module_name(relpath)
    module = Module(name, relpath, is_package, max(1, data.count(b"\n") + (0 if data.endswith(b"\n") else 1)))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences etc. in the indexed code
            tree = ast.parse(data, filename=relpath)
    except (SyntaxError, ValueError, MemoryError, RecursionError) as exc:
        module.error = f"{type(exc).__name__}: {exc}"[:200]
        return module
    try:
        _Parser(module, data).run(tree)
    except RecursionError:
        module.error = "RecursionError: nesting too deep"
    return module
