"""One Python file → its definitions, name bindings per scope, class bases and raw call sites.

Nothing here resolves across files; `resolve.py` does that over all parsed modules. Source bodies
are never kept: a definition keeps its one-line signature, a docstring summary and a digest. What
a local name holds is recorded only when the scope binds it exactly once, from a parameter or an
annotation, an instantiation or call (`x = Foo()`), or another name (`save = self.save`); the
resolver decides what that is, or leaves it unknown.
"""

from __future__ import annotations

import ast
import codecs
import hashlib
import io
import re
import tokenize
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

from graphctx.code.layout import ModuleName, dotted_path
from graphctx.code.summary import first_line
from graphctx.redact import redact

SIGNATURE_CHARS = 240
SUPER = "<super>"  # head of the chain of a `super().name(...)` call
CALL = "()"  # a call inside a chain: `Foo().bar` is ("Foo", "()", "bar")

Chain = tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Binding:
    """What a name bound once holds: an instance of the class an annotation names ("instance"), or
    the value of an expression ("value": `Foo()`, `make()`, `self.save`), evaluated in `scope`."""

    kind: str
    chain: Chain
    scope: Block


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
    bound: dict[str, int] = field(default_factory=dict)  # name -> how many times this scope binds it
    typed: dict[str, Binding] = field(default_factory=dict)  # what the first binding holds

    def bind(self, name: str) -> None:
        self.locals.add(name)
        self.bound[name] = self.bound.get(name, 0) + 1

    def single(self, name: str) -> Binding | None:
        """What the name holds when this scope binds it exactly once and that binding is known."""
        return self.typed.get(name) if self.bound.get(name) == 1 else None


@dataclass(slots=True)
class Def:
    qualname: str
    name: str
    kind: str  # "class" | "function" | "method"
    start: int  # the first decorator's line when decorated: the range covers the decorators
    end: int
    signature: str
    summary: str
    digest: str
    parent: str  # qualname of the enclosing def, "" for the module
    docstring: str = ""  # the whole docstring (indexed-only search text, never stored as a card)
    decorators: tuple[str, ...] = ()
    bases: tuple[str, ...] = ()
    def_line: int = 0  # the `def` / `class` line
    params: tuple[str, ...] = ()  # parameter names (pytest fixtures are requested by them)
    returns: Chain | None = None  # the class a return annotation names
    scope: Block | None = None  # where the def statement is evaluated (its annotations)
    fixture: str | None = None  # the fixture name, for a pytest fixture
    param_refs: tuple[tuple[Chain, int], ...] = ()  # callables a parametrize decorator passes in


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
    name: str  # dotted import name
    relpath: str
    is_package: bool
    lines: int
    repo: str = ""
    rooted: bool = True  # under an import root (see graphctx.code.layout)
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


_COMMENT = re.compile(r"\s+#[^'\"]*$")
_SPACES = re.compile(r"\s+")


def _signature(
    lines: list[bytes],
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef,
    decorators: tuple[str, ...] = (),
) -> str:
    """The def/class header on one line after its decorators' names (`@property def name(self)`),
    their arguments and comments left out, shortened with …"""
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
    if decorators:
        text = " ".join(f"@{d}" for d in decorators) + " " + text
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


def _chain(node: ast.expr, calls: bool = True) -> Chain | None:
    """A dotted name (`a.b.c`), with `super()` as its head and, when `calls`, calls inside it
    (`Foo().bar` is ("Foo", "()", "bar")); None for anything else (subscripts, literals, ...)."""
    parts: list[str] = []
    while True:
        if isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super":
            if not parts:
                return None
            parts.append(SUPER)
            return tuple(reversed(parts))
        elif calls and isinstance(node, ast.Call) and parts:
            parts.append(CALL)
            node = node.func
        elif isinstance(node, ast.Name):
            parts.append(node.id)
            return tuple(reversed(parts))
        else:
            return None


def annotation_chain(node: ast.expr | None) -> Chain | None:
    """The one class an annotation names: `Foo`, `"Foo"`, `mod.Foo`, `Foo[int]`, `Optional[Foo]`,
    `Foo | None`, `Annotated[Foo, ...]`; None when it names none or several."""
    for _ in range(8):
        if node is None:
            return None
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                node = ast.parse(node.value.strip(), mode="eval").body
            except (SyntaxError, ValueError, RecursionError):
                return None
            continue
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            sides = [n for n in (node.left, node.right) if not _is_none(n)]
            if len(sides) != 1:
                return None
            node = sides[0]
            continue
        if isinstance(node, ast.Subscript):
            head = _chain(node.value, calls=False)
            wrapper = head[-1] if head else ""
            inner = node.slice
            items = list(inner.elts) if isinstance(inner, ast.Tuple) else [inner]
            if wrapper == "Optional":
                node = items[0]
                continue
            if wrapper == "Annotated":
                node = items[0]
                continue
            if wrapper == "Union":
                rest = [n for n in items if not _is_none(n)]
                if len(rest) != 1:
                    return None
                node = rest[0]
                continue
            node = node.value  # a generic class: Foo[int] is a Foo
            continue
        chain = _chain(node, calls=False)
        return chain if chain and chain[0] != SUPER else None
    return None


def _is_none(node: ast.expr) -> bool:
    return (isinstance(node, ast.Constant) and node.value is None) or (
        isinstance(node, ast.Constant) and node.value == "None"
    )


def _fixture_name(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """The name a pytest fixture is requested by (`@pytest.fixture(name="x")` renames it)."""
    for deco in node.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        chain = _chain(target, calls=False)
        if not chain or chain[-1] not in ("fixture", "yield_fixture"):
            continue
        if isinstance(deco, ast.Call):
            for kw in deco.keywords:
                if (
                    kw.arg == "name"
                    and isinstance(kw.value, ast.Constant)
                    and isinstance(kw.value.value, str)
                ):
                    return kw.value.value
        return node.name
    return None


def _parametrized(
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef,
) -> tuple[tuple[Chain, int], ...]:
    """Callables passed to a test through `@pytest.mark.parametrize(...)` argument values."""
    found: list[tuple[Chain, int]] = []
    for deco in node.decorator_list:
        if not isinstance(deco, ast.Call):
            continue
        chain = _chain(deco.func, calls=False)
        if not chain or chain[-1] != "parametrize":
            continue
        for arg in [*deco.args[1:], *(kw.value for kw in deco.keywords if kw.arg == "argvalues")]:
            for sub in ast.walk(arg):
                if isinstance(sub, ast.Name | ast.Attribute) and isinstance(
                    getattr(sub, "ctx", None), ast.Load
                ):
                    ref = _chain(sub, calls=False)
                    if ref and ref[0] != SUPER:
                        found.append((ref, sub.lineno))
    return tuple(found)


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


def _as_utf8(data: bytes) -> bytes:
    """The source in UTF-8, the encoding the parser's column offsets count in (signatures are cut
    from the source lines by them): a file that declares another (PEP 263, `# -*- coding: latin-1
    -*-`) is transcoded, a UTF-8 byte order mark dropped."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        if encoding == "utf-8-sig":
            return data.removeprefix(codecs.BOM_UTF8)
        return data if encoding == "utf-8" else data.decode(encoding, "replace").encode("utf-8")
    except (SyntaxError, LookupError, UnicodeError):
        return data


class _Parser:
    def __init__(self, module: Module, data: bytes, absolute: Callable[[str], str]) -> None:
        self.m = module
        self.lines = _as_utf8(data).splitlines(keepends=True)
        self.package = module.name if module.is_package else module.name.rpartition(".")[0]
        self.absolute = absolute  # an absolute import as Python finds it from this file

    # -- imports -------------------------------------------------------------------------------

    def _from_base(self, node: ast.ImportFrom) -> str | None:
        if not node.level:
            return self.absolute(node.module or "")
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
                full = self.absolute(alias.name)
                if alias.asname:
                    block.imports.setdefault(alias.asname, set()).add(full)
                else:
                    # `import a.b` binds `a`; looked up beside the file it may be `tests.a`
                    head = alias.name.split(".")[0]
                    extra = full.count(".") - alias.name.count(".")
                    block.imports.setdefault(head, set()).add(".".join(full.split(".")[: extra + 1]))
                self.m.imports.append(Import(node.lineno, (full,)))
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
        start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        end = node.end_lineno or node.lineno
        digest = hashlib.sha256(b"".join(self.lines[start - 1 : end])).hexdigest()
        docstring = ast.get_docstring(node) or ""
        summary = first_line(docstring)
        previous = self.m.defs.get(qual)
        if previous is not None and not summary:
            summary = previous.summary  # a redefinition (property setter, ...) keeps the first docstring
        decorators = tuple(d for d in (_dotted(deco) for deco in node.decorator_list) if d)
        inner = Block(qual, "class" if is_class else "function", block)
        definition = Def(
            qual,
            node.name,
            kind,
            start,
            end,
            _signature(self.lines, node, decorators),
            summary,
            "sha256:" + digest,
            block.qualname,
            docstring or (previous.docstring if previous is not None else ""),
            decorators,
            tuple(b for b in map(_dotted, node.bases) if b) if isinstance(node, ast.ClassDef) else (),
            def_line=node.lineno,
            scope=block,
            param_refs=_parametrized(node),
        )
        self.m.defs[qual] = definition
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
                bases.append(_chain(expr, calls=False))
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
                inner.bind(a.arg)
                if a.annotation is not None:
                    self._visit(a.annotation, block, qual)
                    typed = annotation_chain(a.annotation) if a in every else None
                    if typed is not None:
                        inner.typed[a.arg] = Binding("instance", typed, block)
            if node.returns is not None:
                self._visit(node.returns, block, qual)
            definition.params = tuple(a.arg for a in every)
            definition.returns = annotation_chain(node.returns)
            definition.fixture = _fixture_name(node)
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
                chain = _chain(default, calls=False)
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
                block.bind(node.id)  # type: ignore[attr-defined]
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
        if kind is ast.Assign or kind is ast.AnnAssign:
            self._typed(node, block)  # type: ignore[arg-type]
        if kind is ast.Global or kind is ast.Nonlocal:
            block.globals_.update(node.names)  # type: ignore[attr-defined]
            return
        if kind is ast.Lambda:
            assert isinstance(node, ast.Lambda)
            inner = Block(block.qualname, "function", block)  # its parameters shadow outer names
            a = node.args
            for arg in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg]:
                if arg is not None:
                    inner.bind(arg.arg)
            for default in [*a.defaults, *(d for d in a.kw_defaults if d is not None)]:
                self._visit(default, block, owner)
            self._visit(node.body, inner, owner)
            return
        if kind in _NAMED and node.name:  # type: ignore[attr-defined]
            block.bind(node.name)  # type: ignore[attr-defined]
        for child in ast.iter_child_nodes(node):
            self._visit(child, block, owner)

    @staticmethod
    def _typed(node: ast.Assign | ast.AnnAssign, block: Block) -> None:
        """Record what a plain `name = value` / `name: T = value` binds (counted as it is walked);
        every name of a chained `a = b = value` binds the same value (attrs' `s = attributes = attrs`)."""
        targets: list[ast.expr]
        if isinstance(node, ast.AnnAssign):
            targets, value = [node.target], node.value
            target = node.target
            if isinstance(target, ast.Name) and target.id not in block.typed:
                annotated = annotation_chain(node.annotation)
                if annotated is not None:
                    block.typed[target.id] = Binding("instance", annotated, block)
                    return
        else:
            targets, value = node.targets, node.value
        names = [t.id for t in targets if isinstance(t, ast.Name) and t.id not in block.typed]
        if not names or value is None:
            return
        chain = _chain(value.func) if isinstance(value, ast.Call) else _chain(value)
        if chain is None or (isinstance(value, ast.Call) and not chain):
            return
        binding = Binding("value", (*chain, CALL) if isinstance(value, ast.Call) else chain, block)
        for name in names:
            block.typed[name] = binding

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


def parse_module(
    relpath: str,
    data: bytes,
    naming: ModuleName | None = None,
    absolute: Callable[[str], str] | None = None,
    repo: str = "",
) -> Module:
    """Parse one file named `naming` (by default its repository-relative dotted path); `absolute`
    maps an absolute import to the module Python would find from this file."""
    if naming is None:
        name, is_package = dotted_path(relpath)
        naming = ModuleName(name, is_package, True, "")
    lines = max(1, data.count(b"\n") + (0 if data.endswith(b"\n") else 1))
    module = Module(naming.name, relpath, naming.is_package, lines, repo=repo, rooted=naming.rooted)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences etc. in the indexed code
            tree = ast.parse(data, filename=relpath)
    except (SyntaxError, ValueError, MemoryError, RecursionError) as exc:
        module.error = f"{type(exc).__name__}: {exc}"[:200]
        return module
    try:
        _Parser(module, data, absolute or (lambda dotted: dotted)).run(tree)
    except RecursionError:
        module.error = "RecursionError: nesting too deep"
    return module
