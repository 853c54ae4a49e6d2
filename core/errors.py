"""Typed errors. Every error a caller can see has a stable `code` and a message naming the problem."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pydantic is imported by what raises it, not by `graphctx --help`
    from pydantic import ValidationError


class GraphctxError(Exception):
    """Base of every error graphctx raises on purpose."""

    code = "graphctx_error"
    exit_status = 1

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def to_dict(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "message": self.message,
            **({"details": self.details} if self.details else {}),
        }


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
    code = "deadline_exceeded"


class UnsupportedTemplate(GraphctxError):
    """The store has no translation for this template (never a silent empty result)."""

    code = "unsupported_template"


class InvalidVector(GraphctxError):
    """A vector that is non-finite, all zero or of the wrong dimension."""

    code = "invalid_vector"


class BackendError(GraphctxError):
    """A backend failed; the message says which one and what it did."""

    code = "backend_error"


class BackendUnavailable(BackendError):
    code = "backend_unavailable"


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


class ConfigError(GraphctxError):
    code = "config_error"
    exit_status = 78


class DataDirMissing(ConfigError):
    """A read was asked of a data directory that does not exist (reads never create one)."""

    code = "data_dir_missing"


class DataDirLocked(GraphctxError):
    """Another process holds the data directory for writing."""

    code = "data_dir_locked"
    exit_status = 75


class ReadOnly(GraphctxError):
    """A write asked of stores opened read-only (a read command, a read-only directory or process)."""

    code = "read_only"
    exit_status = 73


class WriteIncomplete(BackendError):
    """A write failed part-way on a backend; its journaled plan is completed automatically."""

    code = "write_incomplete"


def from_validation(exc: ValidationError, *, where: str | None = None, default_loc: str = "") -> InputError:
    """The first problem pydantic found, as an InputError naming the field (prefixed by `where`)."""
    first = exc.errors()[0]
    loc = ".".join(str(p) for p in first["loc"]) or default_loc
    prefix = f"{where}: " if where else ""
    return InputError(f"{prefix}{loc}: {first['msg']}", field=loc)


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
