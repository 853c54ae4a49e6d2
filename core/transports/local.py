"""A CLI read answered by a running `graphctx serve` on the same data directory instead of opening the
stores in a fresh process (importing and opening them is most of a CLI call).

`serve` advertises itself in `<data_dir>/serve.json` (0600, replaced atomically once it listens, removed
when it stops cleanly): its address, its pid and that pid's start time (a reused pid is not it), a
secret made at each start, the graphctx version and the fingerprint of what its settings come from.
A CLI read uses it when the file is there, the process alive and both fingerprints equal; otherwise it
opens the stores itself. Either way the answer is the same: serve runs the request model and handler
the CLI runs, in the scope the CLI's settings give, resolved under the same environment and config
files (that is what the fingerprint proves).

The secret proves only that the caller can read the data directory, which already grants every
tenant's memory. It opens read operations only, and serve answers in exactly the scope the caller's
own settings name, never a wider one. This module imports only the standard library: the CLI's path
through serve loads neither pydantic nor a store.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tomllib
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphctx import __version__
from graphctx.locations import CONFIG_FILE, ENV_PREFIX, default_data_dir, user_config_file

if TYPE_CHECKING:
    from graphctx.settings import Settings

log = logging.getLogger("graphctx.local")

RUNTIME_FILE = "serve.json"
PREFIX = "/local/v1"
SECRET_HEADER = "X-Graphctx-Local"
VIA_ENV = "GRAPHCTX_CLI_VIA"
READS = ("recall", "explain", "neighbourhood", "path", "search", "symbol", "callers", "callees", "impact")
"""The CLI commands serve answers exactly as the CLI would (`status` differs: it describes the process
that runs it)."""
SCOPE_FIELDS = ("tenant_id", "namespace")
"""The settings a call through serve carries (the data directory is serve's own)."""
CONNECT_TIMEOUT_S = 2.0
ANSWER_MARGIN_S = 5.0
"""Waited for an answer beyond serve's read deadline, which bounds the operation itself."""

_SCOPE_ENV = {f"{ENV_PREFIX}{name.upper()}": name for name in SCOPE_FIELDS}
_NOT_FINGERPRINTED = {
    f"{ENV_PREFIX}DATA_DIR",
    VIA_ENV,
    f"{ENV_PREFIX}DEBUG",
    f"{ENV_PREFIX}API_KEY",
    *_SCOPE_ENV,
}
"""Variables that change nothing in a read's answer: the data directory is the advert's own place,
the scope travels with each call (scope_of), the rest concern only the CLI process."""
_SERVING_ONLY = (f"{ENV_PREFIX}HTTP_", f"{ENV_PREFIX}MCP_")


class Unreachable(Exception):
    """serve did not answer the call (gone, refused, reset, silent): the read can be answered directly."""


@dataclass(frozen=True)
class Advert:
    host: str
    port: int
    pid: int
    started: str
    secret: str
    version: str
    fingerprint: str
    data_dir: str
    deadline_s: float

    def where(self) -> str:
        return f"pid {self.pid} at {self.host}:{self.port}"


def data_dir_of(flag: Path | None, environ: Mapping[str, str]) -> Path:
    """The data directory as graphctx.settings resolves it (flag, GRAPHCTX_DATA_DIR, the user's config
    file, the default), without loading the settings; a value it cannot read is left to them."""
    if flag is not None:
        return flag
    env = _env(environ).get(f"{ENV_PREFIX}DATA_DIR")
    if env:
        return Path(env)
    home = user_config_file()
    with contextlib.suppress(OSError, tomllib.TOMLDecodeError):
        with home.open("rb") as fh:
            value = tomllib.load(fh).get("data_dir")
        if isinstance(value, str) and value:
            return Path(value)
    return default_data_dir()


def fingerprint(data_dir: Path, environ: Mapping[str, str]) -> str:
    """What a process's settings come from: its GRAPHCTX_* variables (the values hashed, never written)
    and the config files in force, by path and content."""
    digest = hashlib.sha256()
    for name, value in sorted(_env(environ).items()):
        if name not in _NOT_FINGERPRINTED and not name.startswith(_SERVING_ONLY):
            digest.update(f"{name}={value}\0".encode("utf-8", "surrogateescape"))
    for path in (data_dir.resolve() / CONFIG_FILE, user_config_file()):
        try:
            content = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError:
            content = "absent"
        digest.update(f"{path}:{content}\0".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def scope_of(flags: Mapping[str, Any], environ: Mapping[str, str]) -> dict[str, str]:
    """The scope settings a call through serve carries: each CLI flag given, else its GRAPHCTX_*
    variable if set (stronger than the config files, as in the settings). What neither sets, serve
    resolves from the same config files and defaults (the fingerprint shows them equal)."""
    env = _env(environ)
    found = {field: env[name] for name, field in _SCOPE_ENV.items() if name in env}
    found.update({name: str(flags[name]) for name in SCOPE_FIELDS if name in flags})
    return found


def scope_unsent(sent: Mapping[str, str], environ: Mapping[str, str]) -> list[str]:
    """The scope variables set in serve's environment (`environ`) for a setting the call did not send:
    the caller resolves it from the config files, serve would take its own variable; such a call is
    answered directly."""
    return sorted(name for name, field in _SCOPE_ENV.items() if field not in sent and name in _env(environ))


def _env(environ: Mapping[str, str]) -> dict[str, str]:
    # pydantic-settings matches names case-insensitively
    return {k.upper(): v for k, v in environ.items() if k.upper().startswith(ENV_PREFIX)}


def process_started(pid: int) -> str:
    """When process `pid` started (clock ticks since boot, /proc/<pid>/stat field 22); "" if unknown."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    fields = stat.rpartition(")")[2].split()  # the command name may hold spaces and parentheses
    return fields[19] if len(fields) > 19 else ""


@dataclass(frozen=True)
class LocalAccess:
    """What serve holds to answer local CLI reads: the secret of this start and its fingerprint."""

    secret: str
    fingerprint: str

    @classmethod
    def new(cls, data_dir: Path, environ: Mapping[str, str]) -> LocalAccess:
        import secrets  # serve's side only: a CLI read never makes a secret

        return cls(secrets.token_urlsafe(32), fingerprint(data_dir, environ))


def reachable(host: str) -> str:
    """Where a client on this machine reaches a server listening on `host` (a wildcard: loopback)."""
    return {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(host, host)


def advertise(settings: Settings, host: str, port: int, access: LocalAccess) -> None:
    """Write `<data_dir>/serve.json` (0600, atomically) for the serve in this process listening at
    host:port; a wildcard address is advertised as the loopback of its family. One that cannot be
    written is logged: serve serves anyway, and the CLI opens the stores."""
    data_dir = settings.data_dir
    host = reachable(host)
    pid = os.getpid()
    advert = Advert(host, port, pid, process_started(pid), access.secret, __version__, access.fingerprint,
                    str(data_dir.resolve()), settings.deadline_s)  # fmt: skip
    temporary = data_dir / f".{RUNTIME_FILE}.{pid}"
    try:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(asdict(advert), fh)
        os.replace(temporary, data_dir / RUNTIME_FILE)
    except OSError as exc:
        log.warning("serve could not advertise itself to the CLI in %s: %s", data_dir, exc)


def withdraw(data_dir: Path, access: LocalAccess) -> None:
    """Remove the advert if it is still this serve's (a later one's is left alone)."""
    target = data_dir / RUNTIME_FILE
    found = _read(target)
    if found is not None and found.secret == access.secret:
        with contextlib.suppress(OSError):
            target.unlink()


def _read(path: Path) -> Advert | None:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        advert = Advert(**raw)
    except (OSError, ValueError, TypeError):
        return None
    kinds: dict[str, type | tuple[type, ...]] = {"port": int, "pid": int, "deadline_s": (int, float)}
    for name, value in asdict(advert).items():
        if not isinstance(value, kinds.get(name, str)) or isinstance(value, bool):
            return None
    return advert


def find(data_dir: Path, expected: str) -> Advert | str:
    """The live serve advertised in `data_dir` whose settings come from what this process's do (the
    `expected` fingerprint), or why there is none to use."""
    path = data_dir / RUNTIME_FILE
    if not path.exists():
        return f"no graphctx serve advertised in {data_dir}"
    advert = _read(path)
    if advert is None:
        return f"{path} is not a serve advert this version reads"
    if not _alive(advert.pid, advert.started):
        return f"the serve advertised in {path} (pid {advert.pid}) is gone"
    if Path(advert.data_dir) != data_dir.resolve():
        return f"the serve advertised in {path} serves {advert.data_dir}"
    if advert.version != __version__:
        return f"the serve advertised in {path} runs graphctx {advert.version}, this is {__version__}"
    if advert.fingerprint != expected:
        return (
            f"the serve advertised in {path} runs under other settings (GRAPHCTX_* variables or config "
            "files differ from this command's)"
        )
    return advert


def _alive(pid: int, started: str) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's process holds the pid: the start time decides
    return bool(started) and process_started(pid) == started


def call(advert: Advert, operation: str, body: dict[str, Any]) -> tuple[int, bytes]:
    """POST one read to serve; its status and body. Unreachable when serve does not answer."""
    import http.client

    payload = json.dumps(body, ensure_ascii=False, default=_iso).encode("utf-8")
    conn = http.client.HTTPConnection(advert.host, advert.port, timeout=CONNECT_TIMEOUT_S)
    try:
        conn.connect()
        assert conn.sock is not None
        conn.sock.settimeout(advert.deadline_s + ANSWER_MARGIN_S)
        conn.request(
            "POST",
            f"{PREFIX}/{operation}",
            body=payload,
            headers={"Content-Type": "application/json", SECRET_HEADER: advert.secret},
        )
        response = conn.getresponse()
        return response.status, response.read()
    except (OSError, http.client.HTTPException) as exc:  # refused, reset, timed out, cut short
        raise Unreachable(f"{type(exc).__name__}: {exc}".rstrip(": ")) from None
    finally:
        conn.close()


def _iso(value: object) -> object:
    isoformat = getattr(value, "isoformat", None)
    if callable(isoformat):
        return isoformat()
    raise TypeError(f"cannot send a {type(value).__name__} to serve")
