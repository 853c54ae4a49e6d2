"""Code entity ids: readable, prefix-enumerable and unique per repository.

    repo:{repo}                              the repository
    py:{repo}:{path}                         a Python module (path repository-relative)
    py:{repo}:{path}::{qualname}             a class, function or method in it
    md:{repo}:{path}  /  md:{repo}:{path}#{slug}   a Markdown document / section

A repository name never holds ':' or '/', so `py:{repo}:` enumerates exactly one repository's
modules and symbols, and an id of the single-repository scheme before it (`py:{path}`) is told apart
by its shape. The language prefix is the only language-specific part; Go's ids are

    go:{repo}:{dir}                          a Go package (its directory; `.` for the root)
    go:{repo}:{path}                         a .go file
    go:{repo}:{path}::{member}               a function, method or type: Do, (*Client).Do, Client"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from graphctx.errors import InputError

REPO_PREFIX = "repo:"
LANGUAGES = ("go", "md", "py")  # every prefix a repository's entities can have
_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


def check_repo_name(name: str) -> str:
    if not isinstance(name, str) or not _REPO.match(name):
        raise InputError(
            f"repository name {str(name)[:60]!r} must be 1-100 letters, digits, '.', '_' or '-' "
            "and start with a letter or digit",
            field="repo",
        )
    return name


def repo_name_from(text: str) -> str | None:
    """A repository name made from a project or directory name, or None when nothing is left."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-._")[:100]
    return name if name and _REPO.match(name) else None


def default_repo_name(root: Path, project: str = "") -> str:
    """The declared project name (stable across checkouts), else the directory's name."""
    return repo_name_from(project) or repo_name_from(root.name) or "repo"


def repository_id(repo: str) -> str:
    return f"{REPO_PREFIX}{repo}"


def module_id(repo: str, relpath: str) -> str:
    return f"py:{repo}:{relpath}"


def symbol_id(repo: str, relpath: str, qualname: str) -> str:
    return f"py:{repo}:{relpath}::{qualname}"


def go_id(repo: str, path: str, member: str = "") -> str:
    """A Go package (path = its directory), file, or declaration in a file (member)."""
    return f"go:{repo}:{path}::{member}" if member else f"go:{repo}:{path}"


def file_ids(repo: str, path: str) -> tuple[str, ...]:
    """The ids a repository-relative file path can have, one per language."""
    return (module_id(repo, path), go_id(repo, path), document_id(repo, path))


def document_id(repo: str, relpath: str) -> str:
    return f"md:{repo}:{relpath}"


def section_id(repo: str, relpath: str, slug: str) -> str:
    return f"md:{repo}:{relpath}#{slug}"


def prefixes(repo: str) -> tuple[str, ...]:
    """The id prefixes that enumerate every module, symbol, document and section of a repository."""
    return tuple(f"{lang}:{repo}:" for lang in LANGUAGES)


def file_key(entity_id: str) -> str:
    """The id of the module/document entity a code entity belongs to."""
    if entity_id.startswith("md:"):
        return entity_id.split("#", 1)[0]
    return entity_id.split("::", 1)[0]


@dataclass(frozen=True, slots=True)
class CodeId:
    lang: str
    repo: str
    path: str  # repository-relative file path
    member: str  # qualname or slug; "" for the file itself


def parse(entity_id: str) -> CodeId | None:
    """The parts of a code id of this scheme; None for anything else (memory ids, older ids)."""
    lang, sep, rest = entity_id.partition(":")
    if not sep or lang not in LANGUAGES:
        return None
    repo, sep, rest = rest.partition(":")
    if not sep or not rest or rest.startswith(":") or not _REPO.match(repo):
        return None
    if lang == "md":
        path, _, member = rest.partition("#")
    else:
        path, _, member = rest.partition("::")
    return CodeId(lang, repo, path, member) if path else None


def is_legacy(entity_id: str) -> bool:
    """An id of the single-repository scheme (`py:{path}`, `md:{path}#slug`)."""
    lang = entity_id.partition(":")[0]
    return lang in LANGUAGES and parse(entity_id) is None
