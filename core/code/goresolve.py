"""Resolution across a repository's Go packages, never guessing.

A call resolves when its target is decidable from declarations alone: a function of the package
or of an imported one (`pkg.F`), a method on a receiver whose named type is known — the method's
own receiver, a parameter or variable declared with the type, a composite literal, `new(T)`, a
type assertion, the declared result of a resolved call, of a variable holding a function
(`var now = time.Now; now().Add`) or of a local holding a function literal, a value ranged over in
any of these, a type switch's variable (the one named type its clause lists;
with several, `nil` or `default`, the operand's type), a struct field of a known type — found on
the type or promoted through embedded fields (shallowest depth wins; a tie is ambiguous, as in
Go), and method expressions (`(*T).M`). What is left is counted, by why: a function value (a local,
parameter or field of function type, a literal), a call through an interface (dynamic), a package
outside the repository, a conversion (`T(x)`: not a call), a builtin, or unresolved. When several
files define the same name under different build constraints, the definition whose file belongs
to the caller's configuration is taken; otherwise it is ambiguous."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from graphctx.code.golayout import Config, Constraint, GoLayout
from graphctx.code.goparse import CALL, ELEMENT, Binding, Chain, GoDef, GoFile, Locals, TypeRef

GO_BUILTINS = frozenset(
    [
        "append",
        "cap",
        "clear",
        "close",
        "complex",
        "copy",
        "delete",
        "imag",
        "len",
        "make",
        "max",
        "min",
        "new",
        "panic",
        "print",
        "println",
        "real",
        "recover",
    ]
)
GO_TYPES = frozenset(
    [
        "any",
        "bool",
        "byte",
        "comparable",
        "complex64",
        "complex128",
        "error",
        "float32",
        "float64",
        "int",
        "int8",
        "int16",
        "int32",
        "int64",
        "rune",
        "string",
        "uint",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "uintptr",
    ]
)
TEST_NAME = re.compile(r"^(Test|Benchmark|Example|Fuzz)(?![a-z])")
MAX_DEPTH = 16
MAX_DECLARATIONS = 8  # a name declared more often than this in one function is left unknown
EMBED_DEPTH = 6


@dataclass(frozen=True, slots=True)
class Def:
    """A declaration: its package's import path, its file and its member name."""

    package: str
    rel: str
    member: str


@dataclass(frozen=True, slots=True)
class Target:
    kind: str  # "package" | "function" | "method" | "type" | "value" (of type `name`) | "elements"
    # (a slice, array or map of values of type `name`) | "func_value" (a variable holding the
    # function or method `where`: calling it is not static, but its result has `where`'s type) |
    # "func_literal" (a variable holding a function literal whose results have the types `results`)
    package: str
    name: str = ""
    where: Def | None = None  # for function, method, type
    results: tuple[TypeRef | None, ...] = ()  # for func_literal


class _Why:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


_HELD = ("value", "elements", "func_value", "func_literal")  # what a variable can hold
FUNCTION_VALUE = _Why("function_value")
DYNAMIC = _Why("dynamic")
EXTERNAL = _Why("external")
BUILTIN = _Why("builtin")
AMBIGUOUS = _Why("ambiguous")
Found = Target | _Why | None


@dataclass
class Package:
    key: str  # the import path; `{path}_test` for an external test package, `{path}#{name}` for
    # the other packages a directory holds (generators under `//go:build ignore`)
    path: str
    dir: str
    name: str
    files: list[GoFile] = field(default_factory=list)
    names: dict[str, list[tuple[GoFile, GoDef]]] = field(default_factory=dict)  # funcs and types
    methods: dict[tuple[str, str], list[tuple[GoFile, GoDef]]] = field(default_factory=dict)
    vars: dict[str, list[tuple[GoFile, Binding | None]]] = field(default_factory=dict)

    def add(self, f: GoFile) -> None:
        self.files.append(f)
        for d in f.defs.values():
            if d.kind == "method":
                self.methods.setdefault((d.receiver, d.name), []).append((f, d))
            elif d.name != "_" and not (d.name == "init" and d.kind == "function"):
                self.names.setdefault(d.name, []).append((f, d))
        for name, binding in f.vars.items():
            self.vars.setdefault(name, []).append((f, binding))


def is_external_test(f: GoFile) -> bool:
    return f.is_test and f.package.endswith("_test")


def is_test_func(f: GoFile, d: GoDef) -> bool:
    return f.is_test and d.kind == "function" and bool(TEST_NAME.match(d.name))


class GoResolver:
    def __init__(self, files: Iterable[GoFile], layout: GoLayout) -> None:
        self.layout = layout
        self.files: dict[str, GoFile] = {}
        self.packages: dict[str, Package] = {}  # import path -> package
        self.by_dir: dict[str, str] = {}  # directory -> import path of its (non-test) package
        self.primary: dict[str, str] = {}  # directory -> the package name most of its files have
        votes: dict[str, dict[str, int]] = {}
        for f in files:
            self.files[f.relpath] = f
            if not f.is_test and "ignore" not in f.constraint.expr:
                d = f.relpath.rpartition("/")[0]
                votes.setdefault(d, {}).setdefault(f.package, 0)
                votes[d][f.package] += 1
        for d, counts in votes.items():
            self.primary[d] = max(sorted(counts), key=lambda n: counts[n])
        for f in self.files.values():
            d = f.relpath.rpartition("/")[0]
            key = self._key(f)
            if key is None:
                continue
            if not is_external_test(f):
                self.by_dir[d] = layout.dirs[d]
            pkg = self.packages.get(key)
            if pkg is None:
                path = layout.dirs[d] + ("_test" if is_external_test(f) else "")
                pkg = self.packages[key] = Package(key, path, d, f.package)
            pkg.add(f)
        self.consulted: set[str] = set()
        self._configs: dict[Constraint, Config | None] = {}
        self._imports: dict[str, dict[str, str | None]] = {}

    # -- files and packages ---------------------------------------------------------------------

    def _key(self, f: GoFile) -> str | None:
        d = f.relpath.rpartition("/")[0]
        path = self.layout.dirs.get(d)
        if path is None:
            return None
        if is_external_test(f):
            return f"{path}_test"
        primary = self.primary.get(d)
        return path if primary is None or f.package == primary else f"{path}#{f.package}"

    def package_of(self, f: GoFile) -> Package | None:
        key = self._key(f)
        return self.packages.get(key) if key is not None else None

    def imports_of(self, f: GoFile) -> dict[str, str | None]:
        """Name a file's imports bind -> the import path of the package in this repository (None:
        outside it). A dot import is bound to '.' + path; a blank one to nothing."""
        known = self._imports.get(f.relpath)
        if known is not None:
            return known
        out: dict[str, str | None] = {}
        importer = f.relpath.rpartition("/")[0]
        for imp in f.imports:
            d = self.layout.resolve_import(importer, imp.path)
            path = self.layout.dirs.get(d) if d is not None else None
            pkg = self.packages.get(path) if path is not None else None
            if imp.name == "_":
                continue
            if imp.name == ".":
                out[f".{imp.path}"] = path if pkg is not None else None
                continue
            name = imp.name or (pkg.name if pkg is not None else imp.path.rpartition("/")[2])
            out[name] = path if pkg is not None else None
        self._imports[f.relpath] = out
        return out

    def _pick(self, found: list[tuple[GoFile, GoDef]], caller: GoFile) -> tuple[GoFile, GoDef] | _Why | None:
        """One definition among those several constrained files give a name (see the module doc)."""
        if len(found) <= 1:
            return found[0] if found else None
        if caller.constraint not in self._configs:
            self._configs[caller.constraint] = caller.constraint.config()
        config = self._configs[caller.constraint]
        if config is not None:
            active = [x for x in found if x[0].constraint.active(config)]
            if len(active) == 1:
                return active[0]
        same = [x for x in found if x[0].constraint == caller.constraint]
        return same[0] if len(same) == 1 else AMBIGUOUS

    # -- names ----------------------------------------------------------------------------------

    def package_name(self, pkg: Package, name: str, caller: GoFile, depth: int) -> Found:
        self.consulted.add(pkg.path)
        found = pkg.names.get(name)
        if found:
            picked = self._pick(found, caller)
            if not isinstance(picked, tuple):
                return picked
            f, d = picked
            return Target(d.kind, pkg.key, d.name, Def(pkg.key, f.relpath, d.member))
        bound = pkg.vars.get(name)
        if bound:
            f, binding = bound[0]
            if len(bound) != 1 or binding is None or depth > MAX_DEPTH:
                return None  # a variable of a type we cannot say
            return _not_callable(self.binding(binding, f, None, depth + 1))
        return None

    def file_name(self, f: GoFile, name: str, depth: int) -> Found:
        """What a name is at a file's top level: its package's, an import, a dot import, a builtin."""
        pkg = self.package_of(f)
        if pkg is not None:
            found = self.package_name(pkg, name, f, depth)
            if found is not None:
                return found
        imports = self.imports_of(f)
        if name in imports:
            path = imports[name]
            return Target("package", path) if path is not None else EXTERNAL
        for key, path in imports.items():
            if key.startswith(".") and path is not None:
                dotted = self.package_name(self.packages[path], name, f, depth)
                if dotted is not None:
                    return dotted
        if any(k.startswith(".") and v is None for k, v in imports.items()):
            return EXTERNAL  # a dot import from outside the repository may bind it
        if name in GO_BUILTINS:
            return BUILTIN
        if name in GO_TYPES:
            return Target("type", "", name)
        return None

    def type_target(self, ref: TypeRef | None, f: GoFile, locals_: Locals | None) -> Found:
        """The named type a type expression of file f names."""
        if ref is None:
            return None
        if not ref.package:
            if locals_ is not None and ref.name in locals_.declared:
                return None  # a local type or a type parameter
            if ref.name in GO_TYPES:
                return DYNAMIC if ref.name == "error" else None
            own = self.package_of(f)
            found = self._type_in(own, ref.name, f) if own is not None else None
            if found is None:
                for key, path in self.imports_of(f).items():
                    if key.startswith("."):
                        found = self._type_in(self.packages[path], ref.name, f) if path else EXTERNAL
                        if found is not None:
                            break
            return found
        imports = self.imports_of(f)
        if ref.package not in imports:
            return None
        path = imports[ref.package]
        return self._type_in(self.packages[path], ref.name, f) if path is not None else EXTERNAL

    def _type_in(self, pkg: Package, name: str, caller: GoFile) -> Found:
        """A type a package declares (type expressions name only types: no variable is followed)."""
        self.consulted.add(pkg.path)
        picked = self._pick(pkg.names.get(name, []), caller)
        if isinstance(picked, tuple) and picked[1].kind == "type":
            f, d = picked
            return Target("type", pkg.key, d.name, Def(pkg.key, f.relpath, d.member))
        return picked if picked is AMBIGUOUS else None

    def binding(
        self, b: Binding, f: GoFile, locals_: Locals | None, depth: int, at: int | None = None
    ) -> Found:
        """What a declaration binds its name to; `at`: where the declaration is (the names of its
        expression are looked up from there)."""
        if depth > MAX_DEPTH:
            return None
        if b.type is not None:
            return self._typed(b.type, f, locals_)
        if b.returns is not None:
            return Target("func_literal", "", results=b.returns)
        if b.chain is None or depth > MAX_DEPTH:
            return None
        if b.index and b.chain[-1:] == (CALL,):
            callee = self.chain(b.chain[:-1], f, locals_, depth + 1, at)
            return self._called(callee, b.index, f, locals_)
        return self.chain(b.chain, f, locals_, depth + 1, at)

    # -- chains ---------------------------------------------------------------------------------

    def chain(
        self, chain: Chain, f: GoFile, locals_: Locals | None, depth: int = 0, at: int | None = None
    ) -> Found:
        """What a chain denotes in f; `at`: the byte where it is written, which decides the local
        declaration its head refers to (Go's block scoping; None: every declaration must agree)."""
        head, rest = chain[0], chain[1:]
        current: Found
        which = locals_.visible(head, at) if locals_ is not None and at is not None else None
        if locals_ is not None and head in locals_.declared and (at is None or which is not None):
            current = self._local(head, f, locals_, depth, which)
            if current is None:
                return FUNCTION_VALUE
        else:
            current = self.file_name(f, head, depth)  # not a local here: the package's (or a builtin)
        for attr in rest:
            if not isinstance(current, Target):
                return current
            if attr == CALL:
                current = self._called(current, 0, f, locals_)
            elif attr == ELEMENT:
                current = self._element(current)
            else:
                current = self.member(current, attr, f)
        return current

    def _typed(self, ref: TypeRef | None, f: GoFile, locals_: Locals | None) -> Found:
        """A value of a type expression (or, for `[]T`, the values' container)."""
        value = self._value(self.type_target(ref, f, locals_))
        if ref is not None and ref.elements and isinstance(value, Target):
            return Target("elements", value.package, value.name, value.where)
        return value

    @staticmethod
    def _element(t: Target) -> Found:
        """`xs[i]`: an element of a container; `F[int]`, `T[int]`: the instantiated function or type."""
        if t.kind == "elements":
            return Target("value", t.package, t.name, t.where)
        return t if t.kind in ("function", "type") else None

    def _local(self, name: str, f: GoFile, locals_: Locals, depth: int, which: int | None) -> Found:
        """What a local name holds: what its declaration `which` gives, or (which None) the one
        value every declaration of it gives (`s := new(T).Init()` and a closure's `s *T` agree), or
        None."""
        declared = locals_.declared[name]
        picked = list(range(len(declared))) if which is None else [which]
        if (which is None and len(declared) > MAX_DECLARATIONS) or depth > MAX_DEPTH:
            return None
        if any(declared[i] is None for i in picked):
            return None
        places = locals_.places[name]
        found = {
            _not_callable(self.binding(b, f, locals_, depth + 1, places[i].at))
            for i, b in {i: declared[i] for i in picked}.items()
            if b
        }
        one = found.pop() if len(found) == 1 else None
        if one is BUILTIN:
            return None  # `x := make(...)`, `n := len(...)`: a value of a type we cannot say
        if isinstance(one, _Why) or (isinstance(one, Target) and one.kind in _HELD):
            return one
        return None

    def _value(self, t: Found) -> Found:
        if isinstance(t, Target) and t.kind == "type":
            return Target("value", t.package, t.name, t.where)
        return t if isinstance(t, _Why) else None

    def _called(self, t: Found, index: int, caller: GoFile, locals_: Locals | None) -> Found:
        """What calling t gives: the declared result of a function or method, a converted value, the
        declared result of a function literal (written in the caller's file)."""
        if not isinstance(t, Target):
            return t
        if t.kind == "type":
            return self._value(t)
        if t.kind == "func_literal":
            return self._typed(t.results[index], caller, locals_) if index < len(t.results) else None
        if t.kind not in ("function", "method", "func_value") or t.where is None:
            return None
        f = self.files[t.where.rel]
        d = f.defs[t.where.member]
        if index >= len(d.results):
            return None
        return self._typed(d.results[index], f, d.locals)

    def member(self, t: Target, attr: str, caller: GoFile) -> Found:
        if t.kind == "package":
            return self.package_name(self.packages[t.package], attr, caller, 0)
        if t.kind in ("type", "value"):
            found = self.selector(t, attr, caller)
            if t.kind == "type" and isinstance(found, Target) and found.kind != "method":
                return None  # T.field is not an expression
            return found
        return None

    def _type_def(self, t: Target) -> tuple[GoFile, GoDef] | None:
        if t.where is None:
            return None
        f = self.files[t.where.rel]
        return f, f.defs[t.where.member]

    def _follow_alias(self, t: Target) -> Target | None:
        for _ in range(8):
            known = self._type_def(t)
            if known is None:
                return None
            f, d = known
            if d.alias is None:
                return t
            nxt = self.type_target(d.alias, f, None)
            if not isinstance(nxt, Target):
                return None
            t = nxt
        return None

    def selector(self, t: Target, attr: str, caller: GoFile) -> Found:
        """A method or field of a named type, its own or promoted through embedding (Go's rule:
        the shallowest depth decides; two at that depth are ambiguous)."""
        level: list[Target] = [t]
        seen: set[tuple[str, str]] = set()
        unknown: _Why | None = None  # a type at this depth we cannot see (it may have attr)
        for _ in range(EMBED_DEPTH):
            hits: list[Found] = []
            embedded: list[Target] = []
            hidden: _Why | None = None
            for typ in level:
                base = self._follow_alias(typ)
                if base is None or (base.package, base.name) in seen:
                    continue
                seen.add((base.package, base.name))
                pkg = self.packages.get(base.package)
                known = self._type_def(base)
                if pkg is None or known is None:
                    continue
                self.consulted.add(pkg.path)
                f, d = known
                methods = pkg.methods.get((base.name, attr))
                if methods:
                    picked = self._pick(methods, caller)
                    if isinstance(picked, tuple):
                        mf, md = picked
                        hits.append(Target("method", pkg.key, md.member, Def(pkg.key, mf.relpath, md.member)))
                    else:
                        hits.append(picked)
                    continue
                if d.interface:
                    if attr in d.methods:
                        hits.append(DYNAMIC)
                        continue
                elif attr in d.fields and not any(e.name == attr for e in d.embedded):
                    ref = d.fields[attr]
                    typed = self._typed(ref, f, None) if ref is not None else None
                    hits.append(typed if isinstance(typed, Target) else FUNCTION_VALUE)
                    continue
                for e in d.embedded:
                    et = self.type_target(e, f, None)
                    if isinstance(et, Target):
                        embedded.append(et)
                        if e.name == attr and not d.interface:
                            hits.append(self._value(et))  # the embedded field itself
                    elif et is EXTERNAL or et is DYNAMIC:
                        hidden = et  # its members are one level deeper
            if len(hits) == 1:
                return hits[0]
            if hits:
                return AMBIGUOUS
            if unknown is not None:
                return unknown
            if not embedded and hidden is None:
                return None
            level, unknown = embedded, hidden
        return None


def _not_callable(found: Found) -> Found:
    """A variable holding a function or method is a function value: calling it is not static, but
    the variable has the function's type (`var now = time.Now`: `now()` gives a time.Time)."""
    if isinstance(found, Target) and found.kind in ("function", "method"):
        return Target("func_value", found.package, found.name, found.where) if found.where else FUNCTION_VALUE
    return found


_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?")  # `T` or `pkg.T` in a type as written
_KEYWORDS = frozenset({"func", "map", "chan", "struct", "interface"})


class Implementations:
    """Which named types implement which interfaces, decided from method sets: an interface of the
    repository with methods only (no embedded or union elements, no type parameters) is implemented
    by a named type whose own methods (value and pointer receivers; promoted methods are not
    followed) include each of its methods with the same parameter and result types, every type
    name in them resolved to its package. A signature naming a type that cannot be pinned down
    compares with nothing: a pair it would decide is left out, never guessed."""

    def __init__(self, resolver: GoResolver) -> None:
        self.r = resolver
        self._canonical: dict[tuple[str, str], str | None] = {}

    def canonical(self, text: str, f: GoFile) -> str | None:
        key = (f.relpath, text)
        if key not in self._canonical:
            self._canonical[key] = self._spell(text, f)
        return self._canonical[key]

    def _spell(self, text: str, f: GoFile) -> str | None:
        aliases: dict[str, str] = {}
        for imp in f.imports:
            if imp.name in ("_", "."):
                if imp.name == ".":
                    return None  # a dot import may bind any bare name
                continue
            d = self.r.layout.resolve_import(f.relpath.rpartition("/")[0], imp.path)
            path = self.r.layout.dirs.get(d) if d is not None else None
            pkg = self.r.packages.get(path) if path is not None else None
            aliases[imp.name or (pkg.name if pkg is not None else "")] = imp.path
        aliases.pop("", None)  # an outside package imported by its own name: not known here
        own = self.r.package_of(f)
        unknown = False

        def spell(m: re.Match[str]) -> str:
            nonlocal unknown
            head, _, name = m.group(0).partition(".")
            if name:
                path = aliases.get(head)
                if path is None:
                    unknown = True
                return f"{path}\x00{name}"
            if head in _KEYWORDS or head in GO_TYPES:
                return head
            found = own.names.get(head) if own is not None else None
            if not found or own is None or any(d.kind != "type" for _, d in found):
                unknown = True
                return head
            return f"{own.path}\x00{head}"

        spelled = _NAME.sub(spell, text)
        return None if unknown else spelled

    def compute(self) -> dict[tuple[str, str], list[Def]]:
        """(package key, type name) -> the interfaces it implements."""
        by_method: dict[str, set[tuple[str, str]]] = {}
        for pkg in self.r.packages.values():
            for recv, name in pkg.methods:
                by_method.setdefault(name, set()).add((pkg.key, recv))
        out: dict[tuple[str, str], list[Def]] = {}
        for pkg in self.r.packages.values():
            for found in pkg.names.values():
                for f, d in found:
                    if not d.interface or d.generic or d.elements or not d.methods:
                        continue
                    wanted = {m: self.canonical(d.shapes.get(m, ""), f) for m in d.methods}
                    if any(v is None for v in wanted.values()):
                        continue
                    candidates = set.intersection(*(by_method.get(m, set()) for m in d.methods))
                    exported = all(m[:1].isupper() for m in d.methods)
                    for key, recv in sorted(candidates):
                        if (exported or key == pkg.key) and self._satisfies(key, recv, wanted):
                            out.setdefault((key, recv), []).append(Def(pkg.key, f.relpath, d.member))
        return out

    def _satisfies(self, key: str, recv: str, wanted: dict[str, str | None]) -> bool:
        pkg = self.r.packages[key]
        types = pkg.names.get(recv, [])
        if len(types) != 1 or types[0][1].kind != "type" or types[0][1].interface or types[0][1].generic:
            return False
        if types[0][1].alias is not None:
            return False
        for name, shape in wanted.items():
            defs = pkg.methods.get((recv, name), [])
            if not defs or any(self.canonical(d.shape, f) != shape for f, d in defs):
                return False
        return True
