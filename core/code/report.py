"""What one indexing run did, as `graphctx index` and the service report it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class IndexReport:
    root: str
    repo: str = ""
    roots: list[str] = field(default_factory=list)  # the import roots names were computed from
    layout_notes: list[str] = field(default_factory=list)
    layout_changed: bool = False  # names (or the resolution rules) changed: every file was redone
    legacy_removed: int = 0  # entities of the single-repository id scheme removed
    dependents: dict[str, int] = field(default_factory=dict)  # other repositories' files re-resolved
    files_seen: int = 0
    files_parsed: int = 0
    files_unchanged: int = 0
    files_new: int = 0
    files_changed: int = 0
    files_deleted: int = 0
    files_reresolved: int = 0  # unchanged files whose edges were recomputed
    parse_errors: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    modules: int | None = None
    symbols: int | None = None
    edges: int | None = None
    calls: int | None = None
    resolved_calls: int | None = None
    unresolved_calls: int | None = None
    builtin_calls: int | None = None  # calls of Python builtins: neither edges nor unresolved
    documents: int | None = None
    sections: int | None = None
    # other languages' counts (the fields above are Python's): "go" -> packages, files, symbols, calls...
    languages: dict[str, dict[str, int]] = field(default_factory=dict)
    entities_written: int = 0
    entities_deleted: int = 0
    entities_recreated: int = 0
    facts_written: int = 0
    vector_skipped: int = 0
    index_errors: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["parse_errors"] = self.parse_errors[:20]
        data["parse_error_count"] = len(self.parse_errors)
        data["skipped"] = self.skipped[:20]
        data["skipped_count"] = len(self.skipped)
        return data
