"""Which files of a repository are indexed: Python, Go and Markdown files, minus `.gitignore`d and
excluded paths (gitignore-style patterns), read once and hashed (sha256 of the bytes). Packaging
files (pyproject.toml, setup.cfg, go.mod) are read too: they declare where the import roots are."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pathspec import GitIgnoreSpec

from graphctx.errors import InputError

MD_SUFFIXES = (".md", ".markdown")
CONFIG_FILES = frozenset({"pyproject.toml", "setup.cfg"})
MAX_FILE_BYTES = 4 * 1024 * 1024  # larger sources are generated data, not code worth a card
ALWAYS_SKIPPED = frozenset({".git", ".hg", ".svn"})


@dataclass(frozen=True, slots=True)
class SourceFile:
    relpath: str  # posix, relative to the repository root
    kind: str  # "py" | "md" | "go" | "config" / "gomod" (packaging declarations; not entities)
    data: bytes
    sha: str  # "sha256:<hex>", the incremental key stored in the graph


@dataclass
class WalkResult:
    files: list[SourceFile]
    skipped_large: list[str]
    skipped_names: list[str]  # paths that cannot be part of an id (they contain '::' or '#')


def _kind(name: str) -> str | None:
    if name.endswith(".py"):
        return "py"
    if name.endswith(".go"):
        return "go"
    if name == "go.mod":
        return "gomod"
    if name.endswith(MD_SUFFIXES):
        return "md"
    if name in CONFIG_FILES:
        return "config"
    return None


class _Ignores:
    """A stack of .gitignore specs; the deepest file with a matching pattern decides (git's rule)."""

    def __init__(self, exclude: GitIgnoreSpec) -> None:
        self.exclude = exclude
        self.specs: dict[str, GitIgnoreSpec] = {}

    def load(self, base: str, directory: Path) -> None:
        ignore = directory / ".gitignore"
        if ignore.is_file():
            try:
                lines = ignore.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                return
            self.specs[base] = GitIgnoreSpec.from_lines(lines)

    def ignored(self, relpath: str, is_dir: bool) -> bool:
        probe = relpath + "/" if is_dir else relpath
        if self.exclude.match_file(probe):
            return True
        parts = relpath.split("/")
        for depth in range(len(parts) - 1, -1, -1):
            base = "/".join(parts[:depth])
            spec = self.specs.get(base)
            if spec is None:
                continue
            rel = "/".join(parts[depth:]) + ("/" if is_dir else "")
            decision = spec.check_file(rel).include
            if decision is not None:
                return bool(decision)
        return False


def _inside(path: Path, root: Path) -> bool:
    try:
        return path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):
        return False


def exclusion_spec(patterns: Iterable[str]) -> GitIgnoreSpec:
    lines = [p for p in patterns if p and p.strip()]
    try:
        return GitIgnoreSpec.from_lines(lines)
    except (ValueError, TypeError) as exc:
        raise InputError(f"invalid exclusion pattern: {exc}", field="exclude") from None


def walk(root: Path, exclude: Sequence[str]) -> WalkResult:
    """Every indexable file under root, in path order. Symlinked directories are not followed and
    symlinked files only when they point inside the repository."""
    if not root.is_dir():
        raise InputError(f"{root} is not a directory", field="root")
    ignores = _Ignores(exclusion_spec(exclude))
    result = WalkResult([], [], [])
    for current, dirs, names in os.walk(root, followlinks=False):
        here = Path(current)
        base = here.relative_to(root).as_posix()
        base = "" if base == "." else base
        ignores.load(base, here)
        kept = []
        for d in sorted(dirs):
            rel = f"{base}/{d}" if base else d
            if d in ALWAYS_SKIPPED or (here / d).is_symlink() or ignores.ignored(rel, True):
                continue
            kept.append(d)
        dirs[:] = kept
        for name in sorted(names):
            kind = _kind(name)
            if kind is None:
                continue
            rel = f"{base}/{name}" if base else name
            path = here / name
            if (path.is_symlink() and not _inside(path, root)) or ignores.ignored(rel, False):
                continue
            if "::" in rel or "#" in rel:
                result.skipped_names.append(rel)
                continue
            try:
                if path.stat().st_size > MAX_FILE_BYTES:
                    result.skipped_large.append(rel)
                    continue
                data = path.read_bytes()
            except OSError:
                continue  # vanished or unreadable while walking: treated as absent
            result.files.append(SourceFile(rel, kind, data, "sha256:" + hashlib.sha256(data).hexdigest()))
    result.files.sort(key=lambda f: f.relpath)
    return result
