"""Unified diffs to changed line ranges, read on the pre-image side: the indexed graph holds the code
before the change, so `-` lines and insertion points are located in the old file's line numbers."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from graphctx import bounds
from graphctx.errors import InputError

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_GIT_HEADER = re.compile(r"^diff --git (?:\"?a/)(.+?)\"? (?:\"?b/)(.+?)\"?$")
_NULL = "/dev/null"


@dataclass(frozen=True)
class Change:
    """Old lines start..end changed; `between` marks an insertion between old lines start and end
    (= start + 1), which touches only a symbol spanning both."""

    start: int
    end: int
    between: bool = False

    def touches(self, line_start: int, line_end: int) -> bool:
        if self.between:
            return line_start <= self.start and line_end >= self.end
        return line_start <= self.end and line_end >= self.start


@dataclass
class FileChange:
    path: str
    changes: list[Change] = field(default_factory=list)
    whole: bool = False
    """The whole file changed (deleted, renamed, binary, or no hunk to say where)."""
    new: bool = False


def _path(raw: str, prefix: str) -> str:
    path = raw.split("\t", 1)[0].strip()
    if len(path) >= 2 and path[0] == path[-1] == '"':
        path = path[1:-1]
    if path != _NULL and path.startswith(prefix):
        path = path[len(prefix) :]
    return path


class _Parser:
    def __init__(self) -> None:
        self.files: list[FileChange] = []
        self.current: FileChange | None = None
        self.hunks: dict[int, int] = {}
        self.old = self.remaining_old = self.remaining_new = 0
        self.pending_old: str | None = None

    def start(self, path: str) -> FileChange:
        self.current = FileChange(path)
        self.files.append(self.current)
        self.hunks[id(self.current)] = 0
        return self.current

    def in_hunk(self) -> bool:
        return self.remaining_old > 0 or self.remaining_new > 0

    def body(self, line: str, number: int) -> None:
        assert self.current is not None
        tag = line[:1]
        if tag == "\\":
            return
        if tag in (" ", ""):
            self.old += 1
            self.remaining_old -= 1
            self.remaining_new -= 1
        elif tag == "-":
            self.current.changes.append(Change(self.old, self.old))
            self.old += 1
            self.remaining_old -= 1
        elif tag == "+":
            self.current.changes.append(Change(self.old - 1, self.old, between=True))
            self.remaining_new -= 1
        else:
            raise InputError(f"diff line {number}: unexpected line inside a hunk", line=number)

    def header(self, line: str, number: int) -> None:
        git = _GIT_HEADER.match(line)
        if line.startswith("diff --git "):
            self.start(git.group(1) if git else line.rsplit(maxsplit=1)[-1])
        elif line.startswith("--- "):
            self.pending_old = line[4:]
        elif line.startswith("+++ ") and self.pending_old is not None:
            self.file_header(self.pending_old, line[4:])
            self.pending_old = None
        elif line.startswith(("rename from ", "rename to ", "deleted file", "new file")):
            if self.current is None:
                raise InputError(f"diff line {number}: a git header line outside a file section", line=number)
            self.current.whole = True
            self.current.new = self.current.new or line.startswith("new file")
        elif line.startswith("Binary files ") and self.current is not None:
            self.current.whole = True
        elif (match := _HUNK.match(line)) is not None:
            if self.current is None:
                raise InputError(f"diff line {number}: a hunk before any file header", line=number)
            self.hunks[id(self.current)] += 1
            self.old = int(match.group(1))
            self.remaining_old = int(match.group(2) or 1)
            self.remaining_new = int(match.group(4) or 1)
            if self.remaining_old == 0:
                self.old += 1  # `-l,0` inserts after old line l
        elif line.startswith("@@"):
            raise InputError(f"diff line {number}: malformed hunk header", line=number)

    def file_header(self, old_raw: str, new_raw: str) -> None:
        old = _path(old_raw, "a/")
        new = _path(new_raw, "b/")
        path = new if old == _NULL else old
        if self.current is None or self.hunks[id(self.current)] or self.current.path not in (old, new, path):
            self.start(path)
        assert self.current is not None
        self.current.path = path
        if old == _NULL:
            self.current.new = self.current.whole = True
        if new == _NULL:
            self.current.whole = True


def parse_diff(text: str) -> list[FileChange]:
    """The files a unified diff (git or plain `diff -u`) touches, with their pre-image changes."""
    bounds.check_text("diff", text, bounds.DIFF_BYTES)
    parser = _Parser()
    # split on newlines only: source lines may hold form feeds and other characters splitlines() breaks on
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.removesuffix("\r")
        if parser.in_hunk():
            parser.body(line, number)
        else:
            parser.header(line, number)
    if parser.in_hunk():
        raise InputError("the diff ends inside a hunk (truncated?)", field="diff")
    if not parser.files:
        raise InputError("no file changes found in the diff", field="diff")
    for f in parser.files:
        if not parser.hunks[id(f)]:
            f.whole = True  # a header with no hunk (mode change, pure rename): say the file changed
    merged = merge(parser.files)
    for f in merged:
        f.changes = _coalesce(f.changes)
    return merged


def merge(files: Iterable[FileChange]) -> list[FileChange]:
    """One entry per path, in first-seen order: the changes joined, the flags or-ed."""
    merged: dict[str, FileChange] = {}
    for f in files:
        into = merged.setdefault(f.path, FileChange(f.path))
        into.changes += f.changes
        into.whole |= f.whole
        into.new |= f.new
    return list(merged.values())


def _coalesce(changes: list[Change]) -> list[Change]:
    """Adjacent changed lines become one range, and so does a replacement (lines removed, others
    inserted in their place); a pure insertion stays a point between two lines."""
    out: list[Change] = []
    for c in sorted(set(changes), key=lambda c: (c.start, c.end, c.between)):
        last = out[-1] if out else None
        if last and not c.between and not last.between and c.start <= last.end + 1:
            out[-1] = Change(last.start, max(last.end, c.end))
        elif not (last and c.between and not last.between and last.start <= c.start <= last.end):
            out.append(c)
    return out
