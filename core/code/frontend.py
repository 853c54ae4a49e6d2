"""The language layer: what the indexer asks of each language's front end.

A front end turns one repository's source files of its language into the desired code graph
(graphctx.code.build.FileGraph per indexed unit: a file, or for Go a package too), resolving
imports, calls, inheritance/embedding and tests its own way. The indexer stays language-blind: it
enumerates the stored ids, compares each unit's sha with the graph, asks the front ends for the
graphs of what changed (and of what a change can reach), and writes what differs. A front end
names the units a run changed in the vocabulary its files' `consulted` sets use (Python module
names, Go import paths), so an unchanged file that consulted one is re-resolved."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from graphctx.code.build import FileGraph, Stats
from graphctx.code.report import IndexReport
from graphctx.code.walk import SourceFile


class FrontEnd(Protocol):
    """One language's build of one repository for one indexing run."""

    lang: str  # the id prefix of its entities (graphctx.code.ids)
    full: bool  # this run redoes every unit of the language (set by begin)
    stats: Stats  # calls seen, resolved, unresolved, builtin

    def units(self) -> dict[str, SourceFile]:
        """Entity id -> what its stored `source` sha is compared with, for every unit it indexes."""
        ...

    def begin(self, changed: set[str], deleted: set[str], full: bool, sources: Mapping[str, str]) -> None:
        """The run's changed and deleted unit ids (of every language); `full`: names changed, redo all;
        `sources`: each stored unit's `source` as the graph holds it."""
        ...

    @property
    def changed_names(self) -> set[str]:
        """What changed, as the names its graphs' `consulted` sets hold."""
        ...

    @property
    def parsed(self) -> int:
        """How many files it parsed."""
        ...

    def graphs(self, stored: dict[str, str], changed: set[str]) -> dict[str, FileGraph]:
        """The graphs of the units this run must look at."""
        ...

    def more(self, entity_ids: set[str]) -> dict[str, FileGraph]:
        """The graphs so far, with those of the units whose edges can reach these (re-created)
        entities added."""
        ...

    def known(self, stored: dict[str, str], done: dict[str, FileGraph]) -> dict[str, str]:
        """Qualified name -> id of every unit and symbol (for the mentions in documents)."""
        ...

    def count(self, report: IndexReport, graphs: dict[str, FileGraph] | None, stored: set[str]) -> None:
        """Set its counts on the report: from the graphs of a full run, else from the stored ids."""
        ...
