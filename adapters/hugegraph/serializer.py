"""GraphSON v3 for HugeGraph: its element ids arrive typed as `hugegraph:*Id`.

GraphBinary cannot carry them at all (HugeGraphIoRegistry registers only Gryo and GraphSON modules,
apache/hugegraph#2526), and gremlinpython's stock GraphSON reader would turn each typed id into a
dict, so the ids are read back as their plain value.
"""

from __future__ import annotations

from typing import Any

from gremlin_python.driver.serializer import GraphSONMessageSerializer
from gremlin_python.structure.io import graphsonV3d0

# HugeGraphSONModule's own types (hugegraph-core org.apache.hugegraph.io.HugeGraphSONModule); dates
# and UUIDs never occur in our schema (times are epoch longs) but are read as their plain value too
ID_TYPES = (
    "hugegraph:StringId",
    "hugegraph:LongId",
    "hugegraph:UuidId",
    "hugegraph:EdgeId",
    "hugegraph:Date",
    "hugegraph:UUID",
)


class _PlainId:
    @classmethod
    def objectify(cls, value: Any, reader: Any) -> Any:
        return value


def graphson_reader() -> graphsonV3d0.GraphSONReader:
    return graphsonV3d0.GraphSONReader(dict.fromkeys(ID_TYPES, _PlainId))


def message_serializer() -> GraphSONMessageSerializer:
    """GraphSON v3 (application/vnd.gremlin-v3.0+json) with the HugeGraph id deserialisers."""
    return GraphSONMessageSerializer(reader=graphson_reader(), writer=graphsonV3d0.GraphSONWriter())
