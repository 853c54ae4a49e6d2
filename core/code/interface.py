"""A module's interface: what resolving another module can consult in it, as one digest.

Resolution looks into another module only through its top-level bindings (definitions, imports,
other bindings and what a binding holds), its star imports and `__all__`, its classes (bases, body
bindings) and its definitions' kinds, decorators and declared return classes. Function bodies are
not consulted, so an edit inside one keeps the digest: the changed module is re-resolved, and no
other module needs to be. The digest is stored with the module entity (its `source` is
`<file sha>+<digest>`), so the next run compares the edited file's digest with the stored one.
A test-suite module is never judged this way: the tests of other files follow its helpers' calls
(graphctx.code.testmap)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

from graphctx.code.pyparse import Block, Module

MARK = "+"
"""Between the file sha and the interface digest in a module entity's `source`."""


def digest(module: Module) -> str:
    """The interface digest of one parsed module (16 hex characters)."""
    h = hashlib.blake2b(digest_size=8)
    for part in _parts(module):
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    return h.hexdigest()


def module_source(sha: str, interface: str) -> str:
    """A module entity's `source`: the file's sha and its interface digest."""
    return f"{sha}{MARK}{interface}"


def file_sha(source: str) -> str:
    """The file sha of a stored `source` (a module's, or any other unit's, which is the sha alone)."""
    return source.partition(MARK)[0]


def stored_digest(source: str) -> str | None:
    """The interface digest a stored module `source` carries; None when written without one."""
    return source.partition(MARK)[2] or None


def _parts(module: Module) -> Iterator[str]:
    yield repr((module.name, module.is_package, module.rooted, sorted(module.stars)))
    yield repr(sorted(module.all_names) if module.all_names is not None else None)
    yield from _block(module.top)
    for qual, info in sorted(module.classes.items()):
        yield repr((qual, info.bases, info.scope.qualname))
        yield from _block(info.members)
    for qual, d in sorted(module.defs.items()):
        scope = d.scope.qualname if d.scope is not None else None
        yield repr((qual, d.kind, d.parent, d.decorators, d.returns, scope, d.fixture, d.params))
        # a return class declared inside a function is looked up in that function's bindings
        block = d.scope
        while d.returns is not None and block is not None and block.kind == "function":
            yield from _block(block)
            block = block.parent


def _block(block: Block) -> Iterator[str]:
    yield repr((block.qualname, block.kind, block.first_param, block.static, block.classmethod))
    yield repr(sorted(block.defs.items()))
    yield repr(sorted((name, sorted(paths)) for name, paths in block.imports.items()))
    yield repr((sorted(block.locals), sorted(block.globals_), sorted(block.bound.items())))
    yield repr(sorted((name, chain, scope.qualname) for name, (chain, scope) in block.aliases.items()))
    yield repr(sorted((name, b.kind, b.chain, b.scope.qualname) for name, b in block.typed.items()))
