"""HugeGraph's REST API (schema, tasks) through pyhugegraph's session, with typed errors.

pyhugegraph resolves the graph (and 1.7 graphspace) path, sends basic auth and retries dropped
connections; this wrapper turns its exceptions into graphctx errors, bounds every attempt by the
operation's deadline and lets tests observe every request that leaves the process.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import requests
from pyhugegraph.api.schema import SchemaManager
from pyhugegraph.utils.exceptions import NotAuthorizedError
from pyhugegraph.utils.huge_config import HGraphConfig
from pyhugegraph.utils.huge_requests import HGraphSession
from pyhugegraph.utils.util import ResponseValidation
from urllib3.util import Timeout

from graphctx import deadlines
from graphctx.errors import BackendError, BackendUnavailable, GraphctxError

from .settings import HugeGraphSettings

HTTP_UNAVAILABLE = 503
RequestObserver = Callable[[requests.PreparedRequest], None]


class _Config(HGraphConfig):
    """pyhugegraph's config without its /versions probe: the graphspace comes from our settings, so a
    server that is down surfaces as one typed error on the first request, not a printed traceback."""

    def __post_init__(self) -> None:
        self.gs_supported = bool(self.graphspace)


class _DeadlineTimeout(Timeout):
    """The configured (connect, read) timeouts, cut to what remains of the operation's deadline
    whenever urllib3 takes a copy: at every attempt, so its retries stay within the deadline too."""

    def clone(self) -> Timeout:
        connect, read = float(self._connect), float(self._read)  # type: ignore[arg-type]
        left = deadlines.budget(max(connect, read), "a HugeGraph REST request")
        return Timeout(connect=min(connect, left), read=min(read, left))


class RestClient:
    """One pooled HTTP session to the REST endpoint; `observers` see each prepared request."""

    def __init__(self, settings: HugeGraphSettings) -> None:
        self.settings = settings
        self.observers: list[RequestObserver] = []
        self._http = requests.Session()
        self._http.hooks["response"].append(self._observe)
        config = _Config(
            url=settings.url.rstrip("/"),
            username=settings.username,
            password=settings.password.get_secret_value(),
            graph_name=settings.graph,
            graphspace=settings.graphspace or None,
            timeout=_DeadlineTimeout(  # type: ignore[arg-type]  # requests passes a Timeout through
                connect=settings.connect_timeout_s, read=settings.read_timeout_s
            ),
        )
        self.session = HGraphSession(config, retries=settings.retries, session=self._http)
        self.schema = SchemaManager(self.session)

    def _observe(self, response: requests.Response, *args: Any, **kwargs: Any) -> None:
        for observer in self.observers:
            observer(response.request)

    def get(self, path: str) -> dict[str, Any] | None:
        """GET a graph-relative path; None when the server answers 404."""
        result = self.call(lambda: self.session.request(path, validator=ResponseValidation(strict=False)))
        return result or None

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        answer: dict[str, Any] = self.call(lambda: self.session.request(path, "POST", data=json.dumps(body)))
        return answer

    def put(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        answer: dict[str, Any] = self.call(lambda: self.session.request(path, "PUT", data=json.dumps(body)))
        return answer

    def call(self, request: Callable[[], Any]) -> Any:
        """Run one pyhugegraph call, turning its failures into graphctx errors."""
        where = f"HugeGraph REST at {self.settings.url}"
        try:
            return request()
        except GraphctxError:
            raise  # the deadline, already typed
        except (requests.ConnectionError, requests.Timeout) as exc:
            raise BackendUnavailable(f"{where} is unreachable or too slow: {_first_line(exc)}") from exc
        except NotAuthorizedError as exc:
            raise BackendError(f"{where} refused the configured credentials") from exc
        except Exception as exc:  # pyhugegraph raises plain Exception subclasses for server errors
            if _status(exc) == HTTP_UNAVAILABLE:
                # HugeGraph's load filter: too many requests in flight, or too little free memory
                raise BackendUnavailable(f"{where} is overloaded (503): {_first_line(exc)}") from exc
            if isinstance(exc, requests.RequestException):
                raise BackendError(f"{where} failed: {_first_line(exc)}") from exc
            raise BackendError(f"{where} answered with an error: {_first_line(exc)}") from exc

    def close(self) -> None:
        self._http.close()


def _status(exc: BaseException | None) -> int | None:
    """The HTTP status behind an error (pyhugegraph wraps the requests error it raised from)."""
    while exc is not None:
        response = getattr(exc, "response", None)
        if isinstance(exc, requests.HTTPError) and response is not None:
            return int(response.status_code)
        exc = exc.__cause__ or exc.__context__
    return None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__
