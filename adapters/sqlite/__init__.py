"""Embedded SQLite adapter: the reference graph store and the durable index journal."""

from __future__ import annotations

from graphctx.settings import Settings

from .graph_store import SqliteGraphStore
from .journal import SqliteJournal
from .keys import SqliteKeyStore

__all__ = [
    "SqliteGraphStore",
    "SqliteJournal",
    "SqliteKeyStore",
    "create_graph_store",
    "create_journal",
    "create_key_store",
]


def create_graph_store(settings: Settings) -> SqliteGraphStore:
    """Entry point `graphctx.graph_stores: sqlite`: `<data_dir>/graph.sqlite`, schema ensured."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    store = SqliteGraphStore(settings.data_dir / "graph.sqlite")
    store.ensure_schema()
    return store


def create_journal(settings: Settings) -> SqliteJournal:
    """`<data_dir>/journal.sqlite`, next to the graph it journals for."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    return SqliteJournal(settings.data_dir / "journal.sqlite")


def create_key_store(settings: Settings) -> SqliteKeyStore:
    """`<data_dir>/keys.sqlite`: API keys, hashed."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    return SqliteKeyStore(settings.data_dir / "keys.sqlite")
