"""Typed errors. Every error a caller can see has a stable `code` and a message naming the problem."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pydantic is imported by what raises it, not by `graphctx --help`
    from pydantic import ValidationError

PUBLIC_DETAILS = frozenset(
    {"backend", "store", "stage", "deadline_s", "retry_after_s", "cause", "applied", "recorded"}
)
"""The details an error about the machine may show a caller: which backend, which stage, when to retry."""


class GraphctxError(Exception):
    """Base of every error graphctx raises on purpose.

    `message` and `details` are the whole story, for logs and the local operator's CLI. Errors about
    the machine rather than the caller's input (`internal = True`: backends, configuration, the data
    directory) may hold URLs, paths and driver text; what a remote caller sees of them (`to_dict()`,
    every transport's error body) is `public_message()` and only the `PUBLIC_DETAILS`."""

    code = "graphctx_error"
    exit_status = 1
    internal = False

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def public_message(self) -> str:
        return self.message

    def to_dict(self, *, full: bool = False) -> dict[str, Any]:
        """The error body: what a remote caller may see, or (`full`) everything, for the operator."""
        if full or not self.internal:
            message, details = self.message, self.details
        else:
            message = self.public_message()
            details = {k: v for k, v in self.details.items() if k in PUBLIC_DETAILS}
        return {
            "code": self.code,
            "message": printable(message),
            **({"details": _printable_tree(details)} if details else {}),
        }


def printable(text: str) -> str:
    """Text that always encodes as UTF-8: a lone surrogate (from a caller's bad input quoted in a
    message) becomes U+FFFD, so an error can always be rendered."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


def _printable_tree(value: Any) -> Any:
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {printable(str(k)): _printable_tree(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_printable_tree(v) for v in value]
    return value


class InputError(GraphctxError):
    """Malformed input or input of the wrong type."""

    code = "invalid_input"
    exit_status = 64


class BoundExceeded(InputError):
    """Input over one of the design's bounds; `bound` names it."""

    code = "bound_exceeded"

    def __init__(self, what: str, limit: int, actual: int, unit: str = "bytes") -> None:
        super().__init__(
            f"{what} is {actual} {unit}, over the bound of {limit} {unit}",
            bound=what,
            limit=limit,
            actual=actual,
            unit=unit,
        )


class ScopeError(GraphctxError):
    """A scope or selector the caller may not use."""

    code = "scope_denied"
    exit_status = 77


class NotFound(GraphctxError):
    code = "not_found"
    exit_status = 3


class AmbiguousName(GraphctxError):
    """A name that matches several entities; `candidates` lists the identities to use instead."""

    code = "ambiguous_name"
    exit_status = 4  # 2 is the CLI's usage error (click)

    def __init__(self, name: str, candidates: list[dict[str, Any]]) -> None:
        super().__init__(
            f"'{name}' matches {len(candidates)} entities; use one of the listed identities",
            name=name,
            candidates=candidates,
        )
        self.candidates = candidates


class BudgetError(GraphctxError):
    """Even the subject and the envelope do not fit in the token budget."""

    code = "budget_too_small"


class DeadlineExceeded(GraphctxError):
    """The operation's deadline passed; `stage` says during what (a backend's message may quote its
    address: a remote caller sees the stage and the store instead)."""

    code = "deadline_exceeded"
    internal = True

    def public_message(self) -> str:
        stage = self.details.get("stage")
        during = f" during {stage}" if stage else ""
        on = f" on {_backend(self.details)}" if self.details.get("store") else ""
        return f"the operation's deadline passed{during}{on}; retry later"


class BackendTimeout(DeadlineExceeded):
    """A backend call abandoned at the operation's deadline: the server did not answer in time. It
    counts against the backend in its circuit breaker; a deadline spent before the call does not."""


class UnsupportedTemplate(GraphctxError):
    """The store has no translation for this template (never a silent empty result)."""

    code = "unsupported_template"


class InvalidVector(GraphctxError):
    """A vector that is non-finite, all zero or of the wrong dimension."""

    code = "invalid_vector"


class BackendError(GraphctxError):
    """A backend failed; the message says which one and what it did (its URL, the driver's words:
    logged, never shown to a remote caller, who sees the backend's role and name)."""

    code = "backend_error"
    internal = True
    _what = "failed on this request"

    def public_message(self) -> str:
        return f"{_backend(self.details)} {self._what}; the server log has the details"


class BackendUnavailable(BackendError):
    code = "backend_unavailable"
    _what = "is unavailable; retry later"


def _backend(details: dict[str, Any]) -> str:
    store, backend = details.get("store"), details.get("backend")
    if store and backend:
        return f"the {store} store ({backend})"
    return f"the {store or 'storage'} backend"


class MethodNotAllowed(GraphctxError):
    """An HTTP method the endpoint does not serve; `allow` lists the ones it does."""

    code = "method_not_allowed"


class RequestTimeout(GraphctxError):
    """The client did not send its request (headers or body) within the server's timeout."""

    code = "request_timeout"


class OverCapacity(GraphctxError):
    """A serving cap is reached (connections, requests of one key, MCP streams); retry later.
    `limit` names the cap, `max` its value, `retry_after_s` when to retry."""

    code = "over_capacity"

    def __init__(self, what: str, limit: str, maximum: int, retry_after_s: int) -> None:
        super().__init__(
            f"{what} are at their limit of {maximum}; retry after {retry_after_s} s",
            limit=limit,
            max=maximum,
            retry_after_s=retry_after_s,
        )
        self.retry_after_s = retry_after_s


class ServeUnavailable(GraphctxError):
    """`--via serve` (GRAPHCTX_CLI_VIA=serve) and no live `graphctx serve` answered for this data
    directory under this command's settings."""

    code = "serve_unavailable"
    exit_status = 69


class SettingsDiffer(GraphctxError):
    """A local read reached a serve whose settings come from other variables or config files than the
    caller's: its answer could differ from the caller's own, so the caller answers directly."""

    code = "settings_differ"


class ConfigError(GraphctxError):
    code = "config_error"
    exit_status = 78
    internal = True

    def public_message(self) -> str:
        return "the server is not configured for this request; the server log has the details"


class DataDirMissing(ConfigError):
    """A read was asked of a data directory that does not exist (reads never create one)."""

    code = "data_dir_missing"


class DataDirLocked(GraphctxError):
    """Another process holds the data directory for writing."""

    code = "data_dir_locked"
    exit_status = 75
    internal = True

    def public_message(self) -> str:
        return "the server's data directory is held by another process; retry later"


class ReadOnly(GraphctxError):
    """A write asked of stores opened read-only (a read command, a read-only directory or process)."""

    code = "read_only"
    exit_status = 73
    internal = True

    def public_message(self) -> str:
        return "this server is read-only: reads work, writes are refused"


class WriteIncomplete(BackendError):
    """A write failed part-way on a backend; its journaled plan is completed automatically."""

    code = "write_incomplete"

    def public_message(self) -> str:
        if self.details.get("recorded") is False:
            return (
                f"an earlier write is still incomplete and {_backend(self.details)} is not taking it; this "
                "write was not recorded: send it again once the backend answers"
            )
        return (
            f"{_backend(self.details)} failed during the write; the write is recorded and may be partly "
            "applied: graphctx completes it before the next write"
        )


def from_validation(exc: ValidationError, *, where: str | None = None, default_loc: str = "") -> InputError:
    """The first problem pydantic found, as an InputError naming the field (prefixed by `where`)."""
    first = exc.errors()[0]
    loc = ".".join(str(p) for p in first["loc"]) or default_loc
    prefix = f"{where}: " if where else ""
    problem = str(first["msg"]).removeprefix("Value error, ")
    return InputError(f"{prefix}{loc}: {problem}", field=loc)


def _subclasses(cls: type[GraphctxError]) -> list[type[GraphctxError]]:
    out = [cls]
    for sub in cls.__subclasses__():
        out += _subclasses(sub)
    return out


def from_dict(data: dict[str, Any]) -> GraphctxError:
    """The error another process sent as `to_dict()`, as its own class (so every transport maps it
    to the same status); an unknown code becomes a plain GraphctxError keeping that code."""
    code = str(data.get("code", GraphctxError.code))
    message = str(data.get("message", ""))
    details = data.get("details") or {}
    cls = next((c for c in _subclasses(GraphctxError) if c.code == code), GraphctxError)
    exc = cls.__new__(cls)
    Exception.__init__(exc, message)
    exc.message, exc.details = message, dict(details)
    if isinstance(exc, AmbiguousName):
        exc.candidates = list(exc.details.get("candidates", []))
    if cls is GraphctxError and code != GraphctxError.code:
        exc.code = code
    return exc
