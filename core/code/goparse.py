"""One Go file → its package clause, imports, declarations, and raw call sites (tree-sitter).

Nothing here resolves across files (graphctx.code.goresolve does). A declaration keeps its
one-line signature, the first sentence of its doc comment, a digest and what resolution needs:
receiver, declared result types, struct fields and embedded types, interface methods. What a
local name holds is recorded only when all its declarations agree: its declared type
(a parameter, the receiver, `var x T`), a composite literal (`T{}`, `&T{}`), `new(T)`, a type
assertion, or a value (`x := New()`, `y := x`) the resolver may type; anything else is unknown.
Inside a clause of `switch t := x.(type)`, a chain or value starting with t starts instead with
what t is there (`case *T:` a T, several types or `default`: x), unless the clause declares t or
x's name again."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from functools import cache

import tree_sitter_go
from tree_sitter import Language, Node, Parser, Query, QueryCursor

from graphctx.code.golayout import Constraint, name_constraint
from graphctx.code.summary import first_line
from graphctx.redact import redact

SIGNATURE_CHARS = 240
CALL = "()"
ELEMENT = "[]"  # an element of what precedes it: `xs[i].M` is ("xs", "[]", "M")
Chain = tuple[str, ...]
_SPACES = re.compile(r"\s+")
_DIRECTIVE = re.compile(r"^//(go:|line |export |extern |sys |nolint)")


_QUERY = """
(call_expression) @call
(type_conversion_expression type: (generic_type)) @conversion
[(short_var_declaration) (var_spec) (const_spec) (range_clause) (receive_statement)
 (type_switch_statement) (func_literal) (type_spec) (type_alias)] @declares
"""


@cache
def _language() -> Language:
    return Language(tree_sitter_go.language())


@cache
def _parser() -> Parser:
    return Parser(_language())


@cache
def _query() -> Query:
    return Query(_language(), _QUERY)


@dataclass(frozen=True, slots=True)
class TypeRef:
    """A named type as written: `T`, `*T`, `pkg.T`, `*pkg.T` (type arguments dropped)."""

    package: str  # the import name used in the file; "" for the file's own package
    name: str
    pointer: bool = False
    elements: bool = False  # a slice, array or map of this type (`[]T`, `[n]*T`, `map[K]T`)


@dataclass(frozen=True, slots=True)
class Binding:
    """What a name declared once holds: a value of a named type, the value of an expression
    (`chain`, a call ends with CALL; `index`: which result of a multi-value call), or a function
    literal (`returns`: the types of its results)."""

    type: TypeRef | None = None
    chain: Chain | None = None
    index: int = 0
    returns: tuple[TypeRef | None, ...] | None = None


@dataclass(frozen=True, slots=True)
class Place:
    """Where a local declaration is visible: from byte `visible` to the end of its scope (the block,
    clause, statement or function literal spanning `start`-`end`); `at`: where the declaration
    itself is, from which the names it is bound to are looked up (`r := r.Sub()`: the outer r)."""

    start: int
    end: int
    visible: int
    at: int


_END = 1 << 62  # past any file
WHOLE_FUNCTION = Place(0, _END, 0, 0)  # parameters, results, receivers, type parameters
_SCOPES = frozenset(
    {
        "block",
        "if_statement",
        "for_statement",
        "expression_switch_statement",
        "type_switch_statement",
        "select_statement",
        "expression_case",
        "type_case",
        "default_case",
        "communication_case",
        "func_literal",
    }
)


def _place(node: Node) -> Place:
    """Go's scope of what `node` declares: a function literal's parameters are visible in it, a type
    switch's variable in the switch; any other local from the end of its declaration to the end of
    the innermost enclosing block (an `if`, `for` or `switch` statement for its init clause, a case
    clause for its body)."""
    if node.type in ("func_literal", "type_switch_statement"):  # its parameters / its clauses' variable
        return Place(node.start_byte, node.end_byte, node.start_byte, node.start_byte)
    parent = node.parent
    while parent is not None and parent.type not in _SCOPES:
        parent = parent.parent
    if parent is None:
        return Place(0, _END, node.end_byte, node.start_byte)
    return Place(parent.start_byte, parent.end_byte, node.end_byte, node.start_byte)


@dataclass(slots=True)
class Locals:
    """The names a function declares (closures included), each with what it is bound to and where
    Go's block scoping makes it visible (`places`, one per declaration; none: the whole function)."""

    declared: dict[str, list[Binding | None]] = field(default_factory=dict)
    places: dict[str, list[Place]] = field(default_factory=dict)

    def add(self, name: str, binding: Binding | None, place: Place = WHOLE_FUNCTION) -> None:
        if name and name != "_":
            self.declared.setdefault(name, []).append(binding)
            self.places.setdefault(name, []).append(place)

    def visible(self, name: str, at: int) -> int | None:
        """Which declaration of `name` a use at byte `at` refers to: the one whose scope is the
        innermost holding `at` and that is declared before it (the first, where `a, err := ...`
        reuses an `err` of the same scope); None when no declaration is visible there."""
        places = self.places.get(name, [])
        inside = [i for i, p in enumerate(places) if p.start <= at < p.end and p.visible <= at]
        if not inside:
            return None
        innermost = min(places[i].end - places[i].start for i in inside)
        return min(
            (i for i in inside if places[i].end - places[i].start == innermost),
            key=lambda i: places[i].visible,
        )


@dataclass(slots=True)
class GoDef:
    member: str  # the Go-style name within the package: Do, (*Client).Do, Client.Do, Client
    name: str
    kind: str  # "function" | "method" | "type"
    start: int
    end: int
    signature: str
    summary: str
    doc: str
    digest: str
    receiver: str = ""  # a method's receiver type name
    pointer: bool = False  # a pointer receiver
    results: tuple[TypeRef | None, ...] = ()
    fields: dict[str, TypeRef | None] = field(default_factory=dict)  # struct fields
    embedded: tuple[TypeRef, ...] = ()  # embedded struct fields / interfaces
    interface: bool = False
    methods: tuple[str, ...] = ()  # an interface's methods
    alias: TypeRef | None = None  # `type A = B`
    shape: str = ""  # a method's parameter and result types, as written (`(int, []byte) (error)`)
    shapes: dict[str, str] = field(default_factory=dict)  # an interface's methods' shapes
    generic: bool = False  # a type with type parameters
    elements: int = 0  # an interface's elements that are not methods (embedded, unions)
    locals: Locals | None = None


@dataclass(slots=True)
class GoCall:
    caller: str  # the member of the enclosing declaration; "" at package level (var initialisers)
    chain: Chain | None  # the called expression as a name chain; None when it is not one
    line: int
    locals: Locals | None
    literal: bool = False  # a function literal called in place
    at: int | None = None  # the call's byte offset (which local declarations it sees)


@dataclass(slots=True)
class GoImport:
    path: str
    name: str | None  # the alias (`.`, `_` or a name); None: the package's own name
    line: int


@dataclass
class GoFile:
    relpath: str
    package: str = ""
    lines: int = 1
    doc: str = ""  # the package doc comment, when this file carries it
    constraint: Constraint = field(default_factory=Constraint)
    imports: list[GoImport] = field(default_factory=list)
    defs: dict[str, GoDef] = field(default_factory=dict)
    calls: list[GoCall] = field(default_factory=list)
    vars: dict[str, Binding | None] = field(default_factory=dict)  # package-level vars and consts
    error: str | None = None

    @property
    def is_test(self) -> bool:
        return self.relpath.endswith("_test.go")


def _text(node: Node | None) -> str:
    return node.text.decode("utf-8", "replace") if node is not None and node.text is not None else ""


def type_ref(node: Node | None) -> TypeRef | None:
    pointer = elements = False
    for _ in range(8):
        if node is None:
            return None
        kind = node.type
        if kind in ("slice_type", "array_type", "map_type"):
            if elements or pointer:
                return None
            elements = True
            node = node.child_by_field_name("value" if kind == "map_type" else "element")
        elif kind == "pointer_type":
            if pointer:
                return None
            pointer = True
            node = node.named_children[0] if node.named_children else None
        elif kind in ("generic_type", "parenthesized_type"):
            node = node.child_by_field_name("type") or (
                node.named_children[0] if node.named_children else None
            )
        elif kind == "type_identifier":
            return TypeRef("", _text(node), pointer, elements)
        elif kind == "qualified_type":
            package, name = node.child_by_field_name("package"), node.child_by_field_name("name")
            return TypeRef(_text(package), _text(name), pointer, elements)
        else:
            return None
    return None


def chain_of(node: Node | None) -> Chain | None:
    """A called expression as a chain: `a.b.c`, `New().Do` -> ("New", "()", "Do"), `(*T).M` -> ("T", "M")."""
    parts: list[str] = []
    for _ in range(64):
        if node is None:
            return None
        kind = node.type
        if kind == "identifier":
            parts.append(_text(node))
            return tuple(reversed(parts))
        if kind == "selector_expression":
            parts.append(_text(node.child_by_field_name("field")))
            node = node.child_by_field_name("operand")
        elif kind == "call_expression" and parts:
            function = node.child_by_field_name("function")
            if function is not None and function.type == "identifier" and _text(function) == "new":
                args = node.child_by_field_name("arguments")  # new(T).M: a *T, typed as T() is
                return _typed_chain(
                    type_ref(args.named_children[0]) if args and args.named_children else None, parts
                )
            parts.append(CALL)
            node = function
        elif kind == "composite_literal" and parts:
            return _typed_chain(type_ref(node.child_by_field_name("type")), parts)  # T{}.M, (&T{}).M
        elif kind == "unary_expression" and _text(node.child_by_field_name("operator")) == "&" and parts:
            node = node.child_by_field_name("operand")
        elif kind in ("parenthesized_expression", "parenthesized_type"):
            node = node.named_children[0] if node.named_children else None
        elif kind == "unary_expression" and _text(node.child_by_field_name("operator")) == "*" and parts:
            node = node.child_by_field_name("operand")  # (*T).M: a method expression
        elif kind == "pointer_type" and parts:
            node = node.named_children[0] if node.named_children else None
        elif kind == "index_expression":
            parts.append(ELEMENT)  # x[i], or F[int]: the resolver decides
            node = node.child_by_field_name("operand")
        elif kind in ("generic_type", "type_identifier", "qualified_type"):
            ref = type_ref(node)
            if ref is None:
                return None
            parts.append(ref.name)
            if ref.package:
                parts.append(ref.package)
            return tuple(reversed(parts))
        else:
            return None
    return None


def _typed_chain(ref: TypeRef | None, parts: list[str]) -> Chain | None:
    """A chain that starts with a value of the named type: `T()` (a conversion gives a T)."""
    if ref is None:
        return None
    return (*((ref.package,) if ref.package else ()), ref.name, CALL, *reversed(parts))


def _value(node: Node | None, index: int = 0) -> Binding | None:
    """What an expression assigned to a name holds, as far as it can be said without types."""
    for _ in range(8):
        if node is None:
            return None
        kind = node.type
        if kind == "parenthesized_expression":
            node = node.named_children[0] if node.named_children else None
            continue
        if kind == "composite_literal":
            ref = type_ref(node.child_by_field_name("type"))
            return Binding(ref) if ref is not None else None
        if kind == "unary_expression" and _text(node.child_by_field_name("operator")) == "&":
            inner = node.child_by_field_name("operand")
            while inner is not None and inner.type == "parenthesized_expression":
                inner = inner.named_children[0] if inner.named_children else None
            if inner is not None and inner.type == "composite_literal":
                ref = type_ref(inner.child_by_field_name("type"))
                return Binding(TypeRef(ref.package, ref.name, True)) if ref and not ref.pointer else None
            chain = chain_of(inner)  # `p := &x`, `&xs[i]`: a pointer to x's type
            return Binding(chain=chain) if chain else None
        if kind == "unary_expression" and _text(node.child_by_field_name("operator")) == "*":
            chain = chain_of(node.child_by_field_name("operand"))  # `v := *p`: p's type, dereferenced
            return Binding(chain=chain) if chain else None
        if kind == "type_assertion_expression":
            ref = type_ref(node.child_by_field_name("type"))
            return Binding(ref) if ref is not None else None
        if kind == "call_expression":
            function = node.child_by_field_name("function")
            if function is not None and function.type == "identifier" and _text(function) == "new":
                args = node.child_by_field_name("arguments")
                ref = type_ref(args.named_children[0]) if args is not None and args.named_children else None
                return Binding(TypeRef(ref.package, ref.name, True)) if ref and not ref.pointer else None
            chain = chain_of(function)
            return Binding(chain=(*chain, CALL), index=index) if chain else None
        if kind == "func_literal":  # `get := func() *T {...}`: calling get gives a *T
            return Binding(returns=_results(node.child_by_field_name("result")))
        if kind == "type_conversion_expression":
            ref = type_ref(node.child_by_field_name("type"))
            return Binding(chain=(*((ref.package,) if ref.package else ()), ref.name, CALL)) if ref else None
        if kind in ("identifier", "selector_expression", "index_expression"):
            chain = chain_of(node)  # `s := xs[i]`: an element of xs, as in `xs[i].M()`
            return Binding(chain=chain) if chain else None
        return None
    return None


def _names(node: Node | None) -> list[str]:
    if node is None:
        return []
    if node.type == "identifier":
        return [_text(node)]
    return [_text(c) for c in node.named_children if c.type == "identifier"]


def _declare_spec(spec: Node, into: Locals | dict[str, Binding | None]) -> None:
    """A var/const spec: `var x T`, `var x, y = a, b`, `var x, err = f()`."""
    names = [_text(c) for c in spec.children_by_field_name("name")]
    declared = type_ref(spec.child_by_field_name("type"))
    values = spec.child_by_field_name("value")
    exprs = values.named_children if values is not None else []
    for i, name in enumerate(names):
        if declared is not None:
            binding: Binding | None = Binding(declared)
        elif len(exprs) == len(names):
            binding = _value(exprs[i])
        elif len(exprs) == 1:
            binding = _value(exprs[0], i)
        else:
            binding = None
        if isinstance(into, Locals):
            into.add(name, binding)
        else:
            into[name] = binding if name not in into else None


def _params(node: Node | None, into: Locals) -> None:
    if node is None:
        return
    for p in node.named_children:
        if p.type == "parameter_declaration":
            ref = type_ref(p.child_by_field_name("type"))
            for n in p.children_by_field_name("name"):
                into.add(_text(n), Binding(ref) if ref is not None else None)
        elif p.type == "variadic_parameter_declaration":  # `xs ...T`: a []T
            ref = type_ref(p.child_by_field_name("type"))
            many = TypeRef(ref.package, ref.name, ref.pointer, True) if ref and not ref.elements else None
            for n in p.children_by_field_name("name"):
                into.add(_text(n), Binding(many) if many is not None else None)


def _type_params(node: Node | None, into: Locals) -> None:
    """A generic function's type parameters shadow package-level types of the same name."""
    for p in node.named_children if node is not None else []:
        if p.type == "type_parameter_declaration":
            for n in p.children_by_field_name("name"):
                into.add(_text(n), None)


def _receiver_type_params(node: Node | None, into: Locals) -> None:
    """`func (l *List[T]) M()`: T is a type parameter of the method."""
    while node is not None and node.type == "pointer_type":
        node = node.named_children[0] if node.named_children else None
    args = node.child_by_field_name("type_arguments") if node is not None else None
    for elem in args.named_children if args is not None else []:
        for ident in elem.named_children:
            if ident.type == "type_identifier":
                into.add(_text(ident), None)


def _types_of(node: Node | None) -> list[str]:
    """The types of a parameter or result list as written, one per parameter (`a, b int`: two)."""
    if node is None:
        return []
    if node.type != "parameter_list":
        return [_SPACES.sub(" ", _text(node))]
    out: list[str] = []
    for p in node.named_children:
        kind = _SPACES.sub(" ", _text(p.child_by_field_name("type")))
        if p.type == "variadic_parameter_declaration":
            kind = "..." + kind
        out += [kind] * max(1, len(p.children_by_field_name("name")))
    return out


def _shape(node: Node) -> str:
    """A method's signature without names: `(int, []byte) (error)`."""
    params = _types_of(node.child_by_field_name("parameters"))
    results = _types_of(node.child_by_field_name("result"))
    return f"({', '.join(params)}) ({', '.join(results)})"


def _results(node: Node | None) -> tuple[TypeRef | None, ...]:
    if node is None:
        return ()
    if node.type != "parameter_list":
        return (type_ref(node),)
    out: list[TypeRef | None] = []
    for p in node.named_children:
        if p.type == "parameter_declaration":
            ref = type_ref(p.child_by_field_name("type"))
            out += [ref] * max(1, len(p.children_by_field_name("name")))
        else:
            out.append(None)
    return tuple(out)


def _doc(comments: list[Node]) -> str:
    lines: list[str] = []
    for c in comments:
        text = _text(c)
        if text.startswith("//"):
            if _DIRECTIVE.match(text):
                continue
            lines.append(text[2:].removeprefix(" "))
        else:
            lines += [ln.strip().lstrip("*").strip() for ln in text[2:-2].splitlines()]
    return "\n".join(lines).strip()


def _signature(data: bytes, node: Node, stop: Node | None) -> str:
    end = stop.start_byte if stop is not None else node.end_byte
    text = _SPACES.sub(" ", data[node.start_byte : end].decode("utf-8", "replace")).strip()
    if len(text) > SIGNATURE_CHARS:
        text = text[: SIGNATURE_CHARS - 1] + "…"
    return redact(text)


class _Parser:
    def __init__(self, f: GoFile, data: bytes) -> None:
        self.f = f
        self.data = data
        self.lines = data.splitlines(keepends=True)

    def _digest(self, start: int, end: int) -> str:
        return "sha256:" + hashlib.sha256(b"".join(self.lines[start - 1 : end])).hexdigest()

    def _add(self, d: GoDef) -> None:
        member = d.member
        n = 1
        while member in self.f.defs:  # init (and `_`) may repeat
            member = f"{d.member}.{n}"
            n += 1
        d.member = member
        self.f.defs[member] = d

    def run(self, root: Node) -> None:
        pending: list[Node] = []
        previous_end = -2
        for node in root.children:
            if node.type == "comment":
                if not pending or node.start_point.row > previous_end + 1:
                    pending = []
                pending.append(node)
                previous_end = node.end_point.row
                if _text(node).startswith("//go:build ") and not self.f.package:
                    self.f.constraint = Constraint(
                        _text(node)[len("//go:build ") :].strip(), self.f.constraint.by_name
                    )
                continue
            attached = pending if pending and previous_end == node.start_point.row - 1 else []
            pending = []
            kind = node.type
            if kind == "package_clause":
                names = [c for c in node.named_children if c.type == "package_identifier"]
                self.f.package = _text(names[0]) if names else ""
                self.f.doc = _doc(attached)
            elif kind == "import_declaration":
                self._imports(node)
            elif kind == "function_declaration":
                self._function(node, attached)
            elif kind == "method_declaration":
                self._method(node, attached)
            elif kind == "type_declaration":
                self._types(node, attached)
            elif kind in ("var_declaration", "const_declaration"):
                for spec in _specs(node):
                    _declare_spec(spec, self.f.vars)
                self._calls(node, "", None)

    def _imports(self, node: Node) -> None:
        specs = [
            s for c in node.named_children for s in ([c] if c.type == "import_spec" else c.named_children)
        ]
        for spec in specs:
            if spec.type != "import_spec":
                continue
            path = _text(spec.child_by_field_name("path")).strip('"`')
            alias = spec.child_by_field_name("name")
            self.f.imports.append(
                GoImport(path, _text(alias) if alias is not None else None, spec.start_point.row + 1)
            )

    def _function(self, node: Node, comments: list[Node]) -> None:
        name = _text(node.child_by_field_name("name"))
        body = node.child_by_field_name("body")
        locals_ = Locals()
        _type_params(node.child_by_field_name("type_parameters"), locals_)
        _params(node.child_by_field_name("parameters"), locals_)
        _params(node.child_by_field_name("result"), locals_)
        d = self._decl(node, comments, name, name, "function", body)
        d.results = _results(node.child_by_field_name("result"))
        d.locals = locals_
        self._add(d)
        self._calls(body, d.member, locals_)

    def _method(self, node: Node, comments: list[Node]) -> None:
        name = _text(node.child_by_field_name("name"))
        receiver = node.child_by_field_name("receiver")
        locals_ = Locals()
        ref: TypeRef | None = None
        for p in receiver.named_children if receiver is not None else []:
            if p.type == "parameter_declaration":
                ref = type_ref(p.child_by_field_name("type"))
                for n in p.children_by_field_name("name"):
                    locals_.add(_text(n), Binding(ref) if ref is not None else None)
                _receiver_type_params(p.child_by_field_name("type"), locals_)
        if ref is None:
            return
        _params(node.child_by_field_name("parameters"), locals_)
        _params(node.child_by_field_name("result"), locals_)
        member = f"(*{ref.name}).{name}" if ref.pointer else f"{ref.name}.{name}"
        body = node.child_by_field_name("body")
        d = self._decl(node, comments, name, member, "method", body)
        d.receiver, d.pointer = ref.name, ref.pointer
        d.results = _results(node.child_by_field_name("result"))
        d.locals = locals_
        d.shape = _shape(node)
        self._add(d)
        self._calls(body, d.member, locals_)

    def _decl(
        self, node: Node, comments: list[Node], name: str, member: str, kind: str, stop: Node | None
    ) -> GoDef:
        start, end = node.start_point.row + 1, node.end_point.row + 1
        doc = _doc(comments)
        return GoDef(
            member,
            name,
            kind,
            start,
            end,
            _signature(self.data, node, stop),
            first_line(doc),
            doc,
            self._digest(start, end),
        )

    def _types(self, node: Node, comments: list[Node]) -> None:
        specs = [c for c in node.named_children if c.type in ("type_spec", "type_alias", "comment")]
        grouped = any(c.type == "(" for c in node.children)
        pending: list[Node] = []
        for spec in specs:
            if spec.type == "comment":
                pending.append(spec)
                continue
            attached = pending if grouped else comments
            pending = []
            name = _text(spec.child_by_field_name("name"))
            body = spec.child_by_field_name("type")
            where = spec if grouped else node
            stop = None
            if body is not None and body.type in ("struct_type", "interface_type"):
                stop = body.named_children[0] if body.type == "struct_type" and body.named_children else None
                stop = stop or next((c for c in body.children if c.type == "{"), None)
            d = self._decl(where, attached, name, name, "type", stop)
            if stop is not None:
                d.signature = d.signature.rstrip(" {") if not grouped else d.signature
                if not d.signature.startswith("type "):
                    d.signature = "type " + d.signature
            elif grouped:
                d.signature = "type " + d.signature
            d.generic = spec.child_by_field_name("type_parameters") is not None
            if spec.type == "type_alias":
                d.alias = type_ref(body)
            elif body is not None and body.type == "struct_type":
                self._struct(body, d)
            elif body is not None and body.type == "interface_type":
                d.interface = True
                methods, embedded = [], []
                for c in body.named_children:
                    if c.type == "method_elem":
                        methods.append(_text(c.child_by_field_name("name")))
                        d.shapes[methods[-1]] = _shape(c)
                    elif c.type == "type_elem":
                        d.elements += 1
                        ref = type_ref(c.named_children[0]) if len(c.named_children) == 1 else None
                        if ref is not None:
                            embedded.append(ref)
                d.methods, d.embedded = tuple(methods), tuple(embedded)
            self._add(d)

    @staticmethod
    def _struct(body: Node, d: GoDef) -> None:
        embedded: list[TypeRef] = []
        fields = body.named_children[0] if body.named_children else None
        for fd in fields.named_children if fields is not None else []:
            if fd.type != "field_declaration":
                continue
            ref = type_ref(fd.child_by_field_name("type"))
            names = fd.children_by_field_name("name")
            if not names:
                if ref is not None:
                    embedded.append(ref)
                    d.fields[ref.name] = ref
                continue
            for n in names:
                d.fields[_text(n)] = ref
        d.embedded = tuple(embedded)

    def _calls(self, root: Node | None, caller: str, locals_: Locals | None) -> None:
        """Call sites and local declarations under a node (closures belong to the declaration);
        found by a tree-sitter query, so the walk runs in C."""
        if root is None:
            return
        found = QueryCursor(_query()).captures(root)
        declares = sorted(found.get("declares", ()), key=_position)
        cases = _type_cases(declares)
        calls = self.f.calls
        for node in sorted(found.get("call", ()), key=_position):  # the captures' order varies
            function = node.child_by_field_name("function")
            literal = function is not None and function.type == "func_literal"
            chain = None if literal else _in_case(chain_of(function), node.start_byte, cases)
            calls.append(GoCall(caller, chain, node.start_point.row + 1, locals_, literal, node.start_byte))
        # F[int](x) may call F: the resolver decides
        for node in sorted(found.get("conversion", ()), key=_position):
            chain = chain_of(node.child_by_field_name("type"))
            if chain:
                calls.append(GoCall(caller, chain, node.start_point.row + 1, locals_, at=node.start_byte))
        if locals_ is not None:
            for node in declares:
                here = Locals()
                self._declares(node, node.type, here)
                place = _place(node)
                for name, bindings in here.declared.items():
                    for b in bindings:
                        chain = _in_case(b.chain, node.start_byte, cases) if b is not None else None
                        bound = Binding(b.type, chain, b.index, b.returns) if b is not None and chain else b
                        locals_.add(name, bound, place)

    @staticmethod
    def _declares(node: Node, kind: str, locals_: Locals) -> None:
        if kind == "short_var_declaration":
            left = _names(node.child_by_field_name("left"))
            right = node.child_by_field_name("right")
            exprs = right.named_children if right is not None else []
            for i, name in enumerate(left):
                if len(exprs) == len(left):
                    locals_.add(name, _value(exprs[i]))
                elif len(exprs) == 1:
                    locals_.add(name, _value(exprs[0], i))
                else:
                    locals_.add(name, None)
        elif kind in ("var_spec", "const_spec"):
            _declare_spec(node, locals_)
        elif kind in ("range_clause", "receive_statement"):
            if any(c.type == ":=" for c in node.children):
                names = _names(node.child_by_field_name("left"))
                # what is ranged over, as a value: `xs`, `x.Items()`, `m[k]` (a range is single-valued)
                over = _value(node.child_by_field_name("right")) if kind == "range_clause" else None
                ranged = over.chain if over is not None and over.index == 0 else None
                for i, name in enumerate(names):
                    # `for _, v := range xs`: v is an element of xs (the first name is an index or key)
                    element = ranged is not None and i == 1
                    locals_.add(name, Binding(chain=(*ranged, ELEMENT)) if element and ranged else None)
        elif kind == "type_switch_statement":
            for name in _names(node.child_by_field_name("alias")):
                locals_.add(name, None)
        elif kind == "func_literal":
            _params(node.child_by_field_name("parameters"), locals_)
            _params(node.child_by_field_name("result"), locals_)
        elif kind in ("type_spec", "type_alias"):
            locals_.add(_text(node.child_by_field_name("name")), None)
        elif kind == "labeled_statement":
            pass


@dataclass(frozen=True, slots=True)
class _Case:
    """A clause of `switch t := x.(type)`: there, t is a value of the one named type the clause
    lists, or (several types, `nil`, `default`) has x's type; `chain` is what t stands for."""

    start: int
    end: int
    name: str
    chain: Chain


def _type_cases(declares: list[Node]) -> list[_Case]:
    """The type-switch clauses whose variable's type can be said: the one named type the clause
    lists, or the operand's when it lists several, `nil` or is `default` (a clause listing one
    type that is not a named type, `[]T` or `func()`, is left out); a clause in which a declaration
    (a closure's parameter, a nested switch) reuses the name, or the operand's, is left out."""
    out: list[_Case] = []
    for node in declares:
        if node.type != "type_switch_statement":
            continue
        names = _names(node.child_by_field_name("alias"))
        if len(names) != 1 or names[0] == "_":
            continue
        operand = chain_of(node.child_by_field_name("value"))
        for clause in node.named_children:
            if clause.type not in ("type_case", "default_case"):
                continue
            types = clause.children_by_field_name("type") if clause.type == "type_case" else []
            ref = type_ref(types[0]) if len(types) == 1 else None
            chain: Chain | None
            if len(types) == 1 and not (ref is not None and ref.name == "nil" and not ref.package):
                chain = _typed_chain(ref, []) if ref is not None and not ref.elements else None
            else:
                chain = operand
            if chain is None:
                continue
            inner = Locals()
            for d in declares:
                if clause.start_byte <= d.start_byte and d.end_byte <= clause.end_byte:
                    _Parser._declares(d, d.type, inner)
            if names[0] not in inner.declared and chain[0] not in inner.declared:
                out.append(_Case(clause.start_byte, clause.end_byte, names[0], chain))
    return out


def _in_case(chain: Chain | None, at: int, cases: list[_Case]) -> Chain | None:
    """A chain starting with a type switch's variable, inside a clause that says what it is, as
    the chain it stands for (the innermost clause decides)."""
    if not chain or not cases:
        return chain
    inside = [c for c in cases if c.name == chain[0] and c.start <= at < c.end]
    if not inside:
        return chain
    return (*max(inside, key=lambda c: c.start).chain, *chain[1:])


def _position(node: Node) -> tuple[int, int]:
    return (node.start_byte, node.end_byte)


def _specs(node: Node) -> list[Node]:
    out = []
    for c in node.named_children:
        if c.type in ("var_spec", "const_spec"):
            out.append(c)
        elif c.type in ("var_spec_list", "const_spec_list"):
            out += [s for s in c.named_children if s.type in ("var_spec", "const_spec")]
    return out


def parse_go(relpath: str, data: bytes) -> GoFile:
    f = GoFile(relpath, constraint=Constraint("", name_constraint(relpath)))
    f.lines = max(1, data.count(b"\n") + (0 if data.endswith(b"\n") else 1))
    try:
        tree = _parser().parse(data)
    except (ValueError, MemoryError) as exc:
        f.error = f"{type(exc).__name__}: {exc}"[:200]
        return f
    root = tree.root_node
    if root.has_error:
        f.error = "syntax error (tree-sitter recovered; declarations around it may be missing)"
    _Parser(f, data).run(root)
    return f
