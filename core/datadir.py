"""The data directory: the one place that creates it and its files, and how a process opens it.

A process opens a data directory to read or to write. Reads never create anything (a missing
directory is a clear error naming the path and where it came from) and work beside a writer. One
process at a time writes: it holds an exclusive lock on `<dir>/writer.lock` (which names its pid)
for as long as its stores are open, so a second writer gets `DataDirLocked` instead of a backend's
lock message. A directory this process cannot write serves reads and refuses writes (`ReadOnly`).

Private by default: every tenant's memory and the key hashes live here, so the directory and its
store directories are created 0700, and a writer takes group and other permissions off what it
owns in the directory when it opens it (the CLI also runs under umask 077, so every file it creates
is 0600). `exposed` names what other local users could still read, for `status` and `serve`.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal

from graphctx.errors import DataDirLocked, DataDirMissing, ReadOnly
from graphctx.locations import default_data_dir, user_config_file
from graphctx.settings import Settings, config_files

Mode = Literal["read", "write"]
LOCK_FILE = "writer.lock"
_OTHERS = stat.S_IRWXG | stat.S_IRWXO


def ensure_dir(path: Path) -> Path:
    """Create a directory (and its parents) for the stores; every store directory is made here,
    0700 (an existing one keeps its mode: a writer's `make_private` tightens the data directory)."""
    if not path.is_dir():
        path.mkdir(parents=True, exist_ok=True)
        path.chmod(0o700)
    return path


def make_private(root: Path) -> int:
    """Take group and other permissions off the directory and everything in it this process owns
    (files 0600-or-less, directories 0700-or-less); the number of entries changed."""
    changed = 0
    uid = os.getuid()
    for entry in [root, *root.rglob("*")]:
        try:
            info = entry.lstat()
        except OSError:
            continue  # removed meanwhile (a store compacting)
        if stat.S_ISLNK(info.st_mode) or info.st_uid != uid or not info.st_mode & _OTHERS:
            continue
        with contextlib.suppress(OSError):
            entry.chmod(stat.S_IMODE(info.st_mode) & ~_OTHERS)
            changed += 1
    return changed


def exposed(root: Path, limit: int = 20) -> list[str]:
    """What in the data directory other local users may read or write (the directory itself as
    ".", the rest relative to it), at most `limit` names; empty when it is private."""
    try:
        if not root.stat().st_mode & _OTHERS:
            return []  # nobody else can enter it: what is inside is private whatever its mode
    except OSError:
        return []
    found = ["."]
    for entry in root.rglob("*"):
        if len(found) >= limit:
            break
        with contextlib.suppress(OSError):
            info = entry.lstat()
            if not stat.S_ISLNK(info.st_mode) and info.st_mode & (stat.S_IRGRP | stat.S_IROTH):
                found.append(str(entry.relative_to(root)))
    return found


def exposure_warning(root: Path) -> str | None:
    """The warning `status` and `serve` print for a data directory others can read, with the fix."""
    names = exposed(root)
    if not names:
        return None
    shown = ", ".join(names[:6]) + (", ..." if len(names) > 6 else "")
    return (
        f"WARNING: the data directory {root} is readable by other local users ({shown}): it holds "
        f"every tenant's memory and the API key hashes. Fix: chmod -R go-rwx '{root}'"
    )


def source_of(settings: Settings) -> str:
    """Where the data directory setting came from, for error messages."""
    env = os.environ.get("GRAPHCTX_DATA_DIR")
    if env and Path(env).expanduser() == settings.data_dir:
        return "GRAPHCTX_DATA_DIR"
    home = user_config_file()
    for path, data in config_files({}) if home.is_file() else ():
        if path == home and Path(str(data.get("data_dir", ""))).expanduser() == settings.data_dir:
            return f"data_dir in {home}"
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
            make_private(self.path)  # what the stores created meanwhile, under the caller's umask
            with contextlib.suppress(OSError):
                lock.truncate(0)
            lock.close()  # closing the descriptor releases the flock


def process_usage() -> dict[str, int | None]:
    """This process's resident set and open file descriptors (None where /proc is not there)."""
    rss: int | None = None
    fds: int | None = None
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) * 1024
        fds = len(os.listdir("/proc/self/fd"))
    except (OSError, ValueError):
        pass
    return {"rss_bytes": rss, "open_fds": fds}


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
    make_private(path)
    return DataDirHandle(path, "write", lock)


def _read_pid(lock_path: Path) -> int | None:
    try:
        text = lock_path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None
