"""A GraphStore that sends every write to one store and every read to another: two clients of one
shared backend (two graph servers in front of one cluster) certified as if they were one."""

from __future__ import annotations

from typing import Any

from graphctx.kernel import templates as t
from graphctx.kernel.ports import Capabilities, GraphStore
from graphctx.scope import Scope

WRITES = frozenset(
    template.name
    for template in (t.ENTITY_UPSERT, t.ENTITY_DELETE, t.FACT_UPSERT, t.FACT_INVALIDATE, t.SCOPE_CLEAR)
)


class SplitGraphStore:
    def __init__(self, *, writer: GraphStore, reader: GraphStore) -> None:
        self.writer = writer
        self.reader = reader
        self.name = f"{writer.name} (writes) + {reader.name} (reads)"

    @property
    def capabilities(self) -> Capabilities:
        # what both ends support; the reader's templates are the ones a read can reach
        w, r = self.writer.capabilities, self.reader.capabilities
        return Capabilities(
            templates=w.templates & r.templates,
            durable=w.durable and r.durable,
            concurrent_readers=w.concurrent_readers and r.concurrent_readers,
            exact_search=w.exact_search and r.exact_search,
            extra={k: v for k, v in w.extra.items() if r.extra.get(k) == v},
        )

    def run(self, template: t.Template[Any, Any], scope: Scope, params: Any) -> Any:
        target = self.writer if template.name in WRITES else self.reader
        return target.run(template, scope, params)

    def ensure_schema(self) -> None:
        self.writer.ensure_schema()
        self.reader.ensure_schema()

    def close(self) -> None:
        try:
            self.writer.close()
        finally:
            self.reader.close()
