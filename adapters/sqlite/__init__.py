"""Embedded SQLite adapter: the reference graph store and the durable index journal."""

from __future__ import annotations

from graphctx.datadir import ensure_dir
from graphctx.errors import ConfigError
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
    """Entry point `graphctx.graph_stores: sqlite`: `<data_dir>/graph.sqlite`, schema ensured
    (read-only: opened `mode=ro`, schema version checked)."""
    path = settings.data_dir / "graph.sqlite"
    if settings.read_only:
        if not path.exists():
            raise ConfigError(f"{settings.data_dir} holds no graph yet ({path.name} is missing)")
    else:
        ensure_dir(settings.data_dir)
    store = SqliteGraphStore(path, read_only=settings.read_only)
    try:
        store.ensure_schema()
    except BaseException:
        store.close()
        raise
    return store


def create_journal(settings: Settings) -> SqliteJournal:
    """`<data_dir>/journal.sqlite`, next to the graph it journals for; read-only: an absent journal
    is an in-memory empty one (nothing pending)."""
    path = settings.data_dir / "journal.sqlite"
    if settings.read_only:
        return SqliteJournal(path, read_only=True) if path.exists() else SqliteJournal(":memory:")
    ensure_dir(settings.data_dir)
    return SqliteJournal(path)


def create_key_store(settings: Settings) -> SqliteKeyStore:
    """`<data_dir>/keys.sqlite`: API keys, hashed."""
    ensure_dir(settings.data_dir)
    return SqliteKeyStore(settings.data_dir / "keys.sqlite")
