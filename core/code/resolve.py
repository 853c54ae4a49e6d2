"""Resolution of names across parsed modules: imports (absolute, relative, aliased), re-exports
through packages, `from X import *`, class members through the MRO (bases in any module), `self` /
`cls` / `super()` calls and `Class()` → the class. Names a scope binds once are followed: a
parameter or variable annotated with a class is an instance of it, `x = Foo()` too, `x = make()`
when `make` declares the class it returns (`-> Foo`, `-> Self`), `save = self.save` the method;
a method called on an instance resolves through its class. What cannot be pinned to one definition
is unresolved, never guessed. Every lookup records the module names it consulted, so an
incremental re-index knows which unchanged files depend on a changed module."""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from dataclasses import dataclass

from graphctx.code.pyparse import CALL, SUPER, Binding, Block, Chain, Module

BUILTINS = frozenset(dir(builtins))
MAX_DEPTH = 24


SELF_TYPES = frozenset({"Self"})  # typing.Self / typing_extensions.Self as a return annotation


@dataclass(frozen=True, slots=True)
class Target:
    kind: str  # "module" | "class" | "function" | "method" | "instance" (of the class module.qualname)
    module: str
    qualname: str  # "" for a module

    @property
    def dotted(self) -> str:
        return f"{self.module}.{self.qualname}" if self.qualname else self.module


class _Marker:
    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


LOCAL = _Marker("LOCAL")  # a local variable or parameter: its value is unknown
BUILTIN = _Marker("BUILTIN")
EXTERNAL = _Marker("EXTERNAL")  # a base class outside the repository

Found = Target | None
_Memo = tuple[Found, frozenset[str]]


class Resolver:
    def __init__(self, modules: Mapping[str, Module]) -> None:
        self.modules = modules
        self.packages: set[str] = set()
        for name in modules:
            parts = name.split(".")
            for i in range(1, len(parts)):
                self.packages.add(".".join(parts[:i]))
        self._memo: dict[tuple[str, str], _Memo] = {}
        self._mro: dict[Target, tuple[list[Target | _Marker], frozenset[str]]] = {}
        self._active: set[tuple[str, str]] = set()
        self.consulted: set[str] = set()

    # -- modules -------------------------------------------------------------------------------

    def _is_module(self, name: str) -> bool:
        if name in self.modules or name in self.packages:
            return True
        external = getattr(self.modules, "is_package", None)  # a namespace package spanning repositories
        return bool(external is not None and external(name))

    def path(self, dotted: str, depth: int = 0) -> Found:
        """The definition a dotted path names, walking from its longest known module prefix."""
        parts = dotted.split(".")
        head = parts[0]
        self.consulted.add(head)
        if not head or not self._is_module(head):
            return None
        # `from a.b import c` imports the module a.b itself, even where `a` binds a name `b` to
        # something else (pyparsing: `from .unicode import pyparsing_unicode as unicode`)
        start = next((i for i in range(len(parts) - 1, 1, -1) if ".".join(parts[:i]) in self.modules), 1)
        current: Found = Target("module", ".".join(parts[:start]), "")
        for attr in parts[start:]:
            if current is None:
                return None
            current = self.member(current, attr, depth + 1)
        return current

    def _imported(self, paths: set[str], depth: int = 0) -> Found:
        """What a name bound by import statements is; None when they import different things
        (conditional imports)."""
        found = {self.path(p, depth) for p in sorted(paths)}
        return found.pop() if len(found) == 1 else None

    def module_name(self, module: str, name: str, depth: int = 0) -> Found:
        """What `name` is at the top level of `module` (defs, imports, star imports)."""
        key = (module, name)
        memo = self._memo.get(key)
        if memo is not None:
            self.consulted |= memo[1]
            return memo[0]
        if key in self._active or depth > MAX_DEPTH:
            return None  # an import cycle; not memoised, the outer lookup decides
        outer = self.consulted
        self.consulted = {module}
        self._active.add(key)
        try:
            found = self._module_name(module, name, depth)
        finally:
            self._active.discard(key)
            seen = frozenset(self.consulted)
            self.consulted = outer | seen
        self._memo[key] = (found, seen)
        return found

    def _module_name(self, module: str, name: str, depth: int) -> Found:
        info = self.modules.get(module)
        if info is None:
            return None
        top = info.top
        qual = top.defs.get(name)
        if qual is not None:
            return Target(info.defs[qual].kind, module, qual)
        paths = top.imports.get(name)
        if paths:
            return self._imported(paths, depth + 1)
        if name in top.locals:
            binding = top.single(name)
            if binding is None or self._star_may_bind(info, name):
                return None  # a star import may bind it too (e.g. `fspath = _fspath` only if absent)
            return self._bound(binding, module, depth + 1)
        hits: set[Found] = set()
        for star in info.stars:
            source = self.modules.get(star)
            if source is None:
                if self._is_module(star) or star.split(".")[0] not in self.modules:
                    self.consulted.add(star)
                    return None  # it may come from a module we cannot see
                continue
            exported = source.all_names
            if exported is not None and name not in exported:
                continue
            if exported is None and name.startswith("_"):
                continue
            hit = self.module_name(star, name, depth + 1)
            if hit is not None:
                hits.add(hit)
        return hits.pop() if len(hits) == 1 else None

    def _star_may_bind(self, info: Module, name: str) -> bool:
        """Whether one of the module's star imports can bind `name` (a source we cannot read can)."""
        for star in info.stars:
            self.consulted.add(star)
            source = self.modules.get(star)
            if source is None:
                return True
            exported = source.all_names
            visible = name in exported if exported is not None else not name.startswith("_")
            top = source.top
            if visible and (name in top.defs or name in top.imports or name in top.locals or source.stars):
                return True
        return False

    def member(self, target: Target, attr: str, depth: int = 0) -> Found:
        if depth > MAX_DEPTH:
            return None
        if target.kind == "instance":
            found = self.class_member(Target("class", target.module, target.qualname), attr)
            return found if found is not None and found.kind in ("function", "method") else None
        if target.kind == "module":
            found = self.module_name(target.module, attr, depth)
            if found is not None:
                return found
            sub = f"{target.module}.{attr}"
            self.consulted.add(sub)
            return Target("module", sub, "") if self._is_module(sub) else None
        if target.kind == "class":
            return self.class_member(target, attr)
        return None

    # -- classes -------------------------------------------------------------------------------

    def mro(self, cls: Target) -> list[Target | _Marker]:
        known = self._mro.get(cls)
        if known is not None:
            self.consulted |= known[1]
            return known[0]
        self._mro[cls] = ([cls, EXTERNAL], frozenset())  # a cycle in bases is unresolvable
        outer = self.consulted
        self.consulted = {cls.module}
        try:
            order = self._linearize(cls)
        finally:
            seen = frozenset(self.consulted)
            self.consulted = outer | seen
        self._mro[cls] = (order, seen)
        return order

    def _linearize(self, cls: Target) -> list[Target | _Marker]:
        info = self.modules[cls.module].classes.get(cls.qualname)
        if info is None:
            return [cls]
        heads: list[list[Target | _Marker]] = []
        for chain in info.bases:
            base = self.chain(info.scope, cls.module, chain) if chain is not None else None
            if chain is not None and chain == ("object",) and base is BUILTIN:
                continue
            if isinstance(base, Target) and base.kind == "class":
                heads.append(list(self.mro(base)))
            else:
                heads.append([EXTERNAL])
        seqs = [h for h in heads if h] + [[h[0] for h in heads if h]]
        order: list[Target | _Marker] = [cls]
        while True:
            seqs = [s for s in seqs if s]
            if not seqs:
                return order
            for seq in seqs:
                head = seq[0]
                if head is EXTERNAL or not any(head in s[1:] for s in seqs):
                    break
            else:  # inconsistent hierarchy: Python would refuse it; the depth-first order is a fallback
                return order + [x for s in seqs for x in s]
            order.append(head)
            seqs = [s[1:] if s[0] is head else s for s in seqs]

    def class_member(self, cls: Target, attr: str, skip_first: bool = False) -> Found:
        order = self.mro(cls)
        for k in order[1:] if skip_first else order:
            if not isinstance(k, Target):
                return None  # an outside base may define it
            info = self.modules[k.module].classes.get(k.qualname)
            if info is None:
                return None
            qual = info.members.defs.get(attr)
            if qual is not None:
                return Target(self.modules[k.module].defs[qual].kind, k.module, qual)
            if attr in info.members.locals or attr in info.members.imports:
                return None  # a class attribute bound to something we do not follow
        return None

    # -- names at a call site ------------------------------------------------------------------

    def name(self, block: Block, module: str, name: str, depth: int = 0) -> Target | _Marker | None:
        b: Block | None = block
        start = block
        while b is not None:
            if b.kind == "function":
                if name in b.globals_:
                    b = _module_block(b)
                    continue
                if name in b.imports:
                    return self._imported(b.imports[name])
                qual = b.defs.get(name)
                if qual is not None:
                    return Target(self.modules[module].defs[qual].kind, module, qual)
                alias = b.aliases.get(name)
                if alias is not None and depth < MAX_DEPTH:
                    return self.chain(alias[1], module, alias[0], depth + 1)
                if name in b.locals:
                    binding = b.single(name)
                    if binding is not None and depth < MAX_DEPTH:
                        return self._bound(binding, module, depth + 1) or LOCAL
                    return LOCAL
            elif b.kind == "class":
                if b is start:  # class scope is visible only in the class body itself
                    qual = b.defs.get(name)
                    if qual is not None:
                        return Target(self.modules[module].defs[qual].kind, module, qual)
                    if name in b.imports:
                        return self._imported(b.imports[name])
                    if name in b.locals:
                        return LOCAL
            else:
                found_top = self.module_name(module, name, depth)
                if found_top is not None:
                    return found_top
                top = self.modules[module].top
                if name in BUILTINS and name not in top.locals and name not in top.imports:
                    return BUILTIN
                return None
            b = b.parent
        return None

    def _self_class(self, block: Block, module: str, head: str, called: bool) -> Target | None:
        """The class whose instance (or class) `head` is, when `head` is a method's first parameter;
        `called`: the parameter itself is called, which names the class only in a classmethod."""
        b: Block | None = block
        while b is not None and b.kind == "function":
            parent = b.parent
            if parent is not None and parent.kind == "class":
                if b.first_param == head and not b.static and (b.classmethod or not called):
                    return Target("class", module, parent.qualname)
                return None
            if head in b.locals or head in b.imports or head in b.defs:
                return None
            b = parent
        return None

    def chain(self, block: Block, module: str, chain: Chain, depth: int = 0) -> Target | _Marker | None:
        if depth > MAX_DEPTH:
            return None
        head, rest = chain[0], chain[1:]
        if head == SUPER:
            cls = self._enclosing_class(block, module)
            if cls is None or not rest:
                return None
            current: Target | _Marker | None = self.class_member(cls, rest[0], skip_first=True)
            rest = rest[1:]
        else:
            cls = self._self_class(block, module, head, called=rest[:1] == (CALL,) or not rest)
            current = cls if cls is not None else self.name(block, module, head, depth)
        receiver: Target | None = None
        for attr in rest:
            if not isinstance(current, Target):
                return None
            if attr == CALL:
                current, receiver = self._called(current, receiver, depth), None
            else:
                receiver, current = current, self.member(current, attr)
        return current

    def _bound(self, binding: Binding, module: str, depth: int) -> Target | None:
        """What a name bound once holds (see pyparse.Binding)."""
        found = self.chain(binding.scope, module, binding.chain, depth)
        if binding.kind == "instance":
            return _instance(found)
        return found if isinstance(found, Target) else None

    def _called(self, target: Target, receiver: Target | None, depth: int) -> Target | None:
        """What calling the target returns: an instance of a class; for a function or method that
        declares the class it returns, an instance of that class (`-> Self`: of the receiver's)."""
        if target.kind == "class":
            return _instance(target)
        if target.kind not in ("function", "method"):
            return None
        info = self.modules.get(target.module)
        d = info.defs.get(target.qualname) if info is not None else None
        if d is None or d.returns is None or d.scope is None:
            return None
        if d.returns[-1] in SELF_TYPES and len(d.returns) <= 2:
            if receiver is not None and receiver.kind in ("class", "instance"):
                return _instance(receiver)
            owner = target.qualname.rpartition(".")[0]
            return Target("instance", target.module, owner) if target.kind == "method" and owner else None
        return _instance(self.chain(d.scope, target.module, d.returns, depth + 1))

    def _enclosing_class(self, block: Block, module: str) -> Target | None:
        b: Block | None = block
        while b is not None and b.kind == "function":
            if b.parent is not None and b.parent.kind == "class":
                return Target("class", module, b.parent.qualname)
            b = b.parent
        return None


def _instance(found: Target | _Marker | None) -> Target | None:
    if isinstance(found, Target) and found.kind in ("class", "instance"):
        return Target("instance", found.module, found.qualname)
    return None


def _module_block(block: Block) -> Block:
    while block.parent is not None:
        block = block.parent
    return block
