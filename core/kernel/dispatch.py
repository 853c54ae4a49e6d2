"""Shared plumbing for graph-store adapters: template dispatch with typed errors."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel

from graphctx.errors import BackendError, DeadlineExceeded, InputError, ScopeError, UnsupportedTemplate
from graphctx.kernel.breaker import Breaker
from graphctx.kernel.templates import CATALOG, Template
from graphctx.scope import Scope

Handler = Callable[[Scope, Any], BaseModel]
_MAKING = threading.Lock()


class TemplateDispatch:
    """Adapters subclass this and return {template name: handler} from `handlers()`.

    `run` checks the template is the catalogue's (name and version), the scope is a Scope and the
    params are the template's model, then calls the handler. An unknown template is an
    UnsupportedTemplate error, never an empty result.
    """

    def handlers(self) -> Mapping[str, Handler]:
        raise NotImplementedError

    def run(self, template: Template[Any, Any], scope: Scope, params: Any) -> Any:
        spec = CATALOG.get(getattr(template, "name", ""))
        if spec is None or spec.version != template.version:
            raise UnsupportedTemplate(f"template {template} is not in the catalogue")
        handler = self.handlers().get(spec.name)
        if handler is None:
            raise UnsupportedTemplate(f"{type(self).__name__} does not translate template {template}")
        if not isinstance(scope, Scope):
            raise ScopeError("a graph template needs a Scope")
        if not isinstance(params, spec.params):
            raise InputError(f"template {template} takes {spec.params.__name__}, got {type(params).__name__}")
        try:
            return self._breaker().call(lambda: handler(scope, params))
        except (BackendError, DeadlineExceeded) as exc:  # a caller is told which store, never its URL
            exc.details.setdefault("store", "graph")
            exc.details.setdefault("backend", getattr(self, "name", type(self).__name__))
            raise

    def _breaker(self) -> Breaker:
        """This store's circuit breaker (made on first use: subclasses need not call an __init__)."""
        breaker = self.__dict__.get("_graphctx_breaker")
        if breaker is None:
            with _MAKING:
                breaker = self.__dict__.setdefault(
                    "_graphctx_breaker", Breaker("graph", getattr(self, "name", type(self).__name__))
                )
        return breaker  # type: ignore[no-any-return]

    def supported_templates(self) -> frozenset[str]:
        return frozenset(self.handlers())
