"""The data directory: the one place that creates it and its files, and how a process opens it.

A process opens a data directory to read or to write. Reads never create anything (a missing
directory is a clear error naming the path and where it came from) and work beside a writer. One
process at a time writes: it holds an exclusive lock on `<dir>/writer.lock` (which names its pid)
for as long as its stores are open, so a second writer gets `DataDirLocked` instead of a backend's
lock message. A directory this process cannot write serves reads and refuses writes (`ReadOnly`).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal

from graphctx.errors import DataDirLocked, DataDirMissing, ReadOnly
from graphctx.settings import Settings, default_data_dir

Mode = Literal["read", "write"]
LOCK_FILE = "writer.lock"


def ensure_dir(path: Path) -> Path:
    """Create a directory (and its parents) for the stores; every store directory is made here."""
    path.mkdir(parents=True, exist_ok=True)
    return path


def source_of(settings: Settings) -> str:
    """Where the data directory setting came from, for error messages."""
    env = os.environ.get("GRAPHCTX_DATA_DIR")
    if env and Path(env).expanduser() == settings.data_dir:
        return "GRAPHCTX_DATA_DIR"
    if settings.data_dir == default_data_dir():
        return "the default ($XDG_DATA_HOME/graphctx or ~/.local/share/graphctx)"
    return "--data-dir or the settings passed in"


@dataclass
class DataDirHandle:
    """What opening a data directory holds: the mode and, for a writer, the lock."""

    path: Path
    mode: Mode
    _lock: IO[str] | None = None

    def release(self) -> None:
        lock, self._lock = self._lock, None
        if lock is not None:
            with contextlib.suppress(OSError):
                lock.truncate(0)
            lock.close()  # closing the descriptor releases the flock


def writer_pid(path: Path) -> int | None:
    """The pid of the process holding the directory for writing, or None when nobody does."""
    lock_path = path / LOCK_FILE
    try:
        fh = lock_path.open("r")
    except OSError:
        return None
    with fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return _read_pid(lock_path)
        fcntl.flock(fh, fcntl.LOCK_UN)
        return None


def open_data_dir(settings: Settings, mode: Mode) -> DataDirHandle:
    path = settings.data_dir
    if mode == "read":
        if not path.is_dir():
            raise DataDirMissing(
                f"data directory {path} does not exist (set by {source_of(settings)}); a read never "
                "creates one: check the path, or write to it first (remember, index, demo)",
                path=str(path),
            )
        return DataDirHandle(path, "read")
    if path.is_dir() and not os.access(path, os.W_OK | os.X_OK):
        raise ReadOnly(f"data directory {path} is read-only: reads work, writes are refused", path=str(path))
    try:
        ensure_dir(path)
    except PermissionError as exc:
        raise ReadOnly(
            f"data directory {path} cannot be created here (read-only parent): {exc.strerror}",
            path=str(path),
        ) from None
    lock = (path / LOCK_FILE).open("a+")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        lock.close()
        pid = _read_pid(path / LOCK_FILE)
        who = f"pid {pid}" if pid else "pid unknown"
        raise DataDirLocked(
            f"another graphctx process is writing to {path} ({who}); reads work beside it, writes "
            "go through that process (its HTTP/MCP API) or wait until it stops",
            path=str(path),
            pid=pid,
        ) from None
    lock.seek(0)
    lock.truncate(0)
    lock.write(f"{os.getpid()}\n")
    lock.flush()
    return DataDirHandle(path, "write", lock)


def _read_pid(lock_path: Path) -> int | None:
    try:
        text = lock_path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None
