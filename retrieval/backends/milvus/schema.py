"""The collection's layout: one collection per corpus, embedding model, chunking and row layout
(:func:`collection_name`). Each row is one subchunk: its id, the tenant (the collection's partition key), parent,
content hash, the other metadata as typed scalar fields (and all of it as JSON), the dense vector (HNSW, cosine)
and a sparse vector holding our BM25 (:mod:`.bm25`). Ids, tenants and metadata strings too long for the fields are
refused when the corpus loads, for both backends (:data:`retrieval.ingest.documents.MAX_ID_BYTES` and its
neighbours), so one long value cannot fail the sync of a whole corpus."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any, Mapping, Sequence

import numpy as np

from ...core.filters import Filters
from ...core.types import Chunk
from ...ingest.documents import MAX_ID_BYTES, MAX_TENANT_BYTES
from ...ingest.metadata import MAX_METADATA_TEXT_BYTES
from . import expressions
from .bm25 import sparse_vector
from .client import LITE, ServerFeatures
from .expressions import tenant_key

#: Bumped when the row layout or the lexical weighting changes (part of the collection name).
FORMAT = 1
_ID_LEN, _TENANT_LEN, _TEXT_LEN = 1024, MAX_TENANT_BYTES, MAX_METADATA_TEXT_BYTES
assert MAX_ID_BYTES + 24 <= _ID_LEN  # a document id plus "#<chunk number>" fits the id field
_FIELD_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,60}$")
_SCALAR = {str: "VARCHAR", int: "INT64", float: "DOUBLE", bool: "BOOL"}


def collection_name(corpus_key: str, model_name: str, variant: str = "") -> str:
    """``rw_<sha1[:16]>`` of corpus, model and variant (chunking and row layout; Milvus names: letters, digits,
    ``_``). Each combination keeps its own collection, as with Chroma: switching back re-embeds nothing."""
    key = f"{corpus_key}\n{model_name}" + (f"\n{variant}" if variant else "")
    return "rw_" + hashlib.sha1(key.encode("utf-8")).hexdigest()[:16]


class Schema:
    """Which metadata keys get their own typed scalar field (``m_<key>``); the rest is filtered in JSON."""

    def __init__(self, types: Mapping[str, set[type]], tenant_field: str, features: ServerFeatures = LITE) -> None:
        self.tenant_field = tenant_field
        self.scalars: dict[str, str] = {}
        #: The lexical side in Milvus (a sparse vector per row) or in the app process (no sparse field).
        self.sparse = features.sparse
        # Without nullable fields a key that some chunk lacks cannot be a typed field: every key is read
        # through the JSON field then (``meta["key"]``).
        typed_fields = types.items() if features.nullable else ()
        for key, kinds in sorted(typed_fields):
            if key == tenant_field or not _FIELD_RE.match(key):
                continue
            kinds = set(kinds)
            if kinds == {int, float}:
                kinds = {float}
            if len(kinds) == 1 and next(iter(kinds)) in _SCALAR:
                self.scalars[key] = _SCALAR[next(iter(kinds))]

    def signature(self) -> str:
        """What the row layout depends on: part of the collection name, so another layout is another collection."""
        layout = {"format": FORMAT, "tenant": self.tenant_field, "scalars": self.scalars}
        if not self.sparse:  # named only when absent, so the names of existing collections stay as they were
            layout["sparse"] = False
        return json.dumps(layout, sort_keys=True)

    def field(self, key: str) -> str:
        """The expression that names metadata ``key``: its scalar field, or its entry in the JSON field."""
        return expressions.field(key, self.scalars)

    def expression(self, filters: Filters, tenant: Any = None, with_tenant: bool = True) -> str:
        """The Milvus expression of ``filters`` (AND across keys, IN within a key) for one tenant."""
        return expressions.expression(filters, tenant, self.tenant_field, self.scalars, with_tenant)

    def create(self, client: Any, name: str, dim: int, model_name: str) -> None:
        """Create the collection: HNSW (M 16, efConstruction 200) cosine on ``dense``, an inverted index (inner
        product) on ``sparse``, strong consistency (a search sees every acknowledged write)."""
        from pymilvus import DataType

        schema = client.create_schema(auto_id=False, enable_dynamic_field=False,
                                      description=f"{model_name} {self.signature()}")
        schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=_ID_LEN)
        schema.add_field("tenant", DataType.VARCHAR, max_length=_TENANT_LEN, is_partition_key=True)
        schema.add_field("parent", DataType.VARCHAR, max_length=_ID_LEN)
        schema.add_field("hash", DataType.VARCHAR, max_length=128)
        schema.add_field("lexkey", DataType.VARCHAR, max_length=128)
        schema.add_field("position", DataType.INT64)
        schema.add_field("meta", DataType.JSON)
        for key, kind in self.scalars.items():
            extra = {"max_length": _TEXT_LEN} if kind == "VARCHAR" else {}
            schema.add_field(f"m_{key}", getattr(DataType, kind), nullable=True, **extra)
        schema.add_field("dense", DataType.FLOAT_VECTOR, dim=dim)
        if self.sparse:
            schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
        index = client.prepare_index_params()
        index.add_index("dense", index_type="HNSW", metric_type="COSINE", params={"M": 16, "efConstruction": 200})
        if self.sparse:
            index.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="IP")
        client.create_collection(name, schema=schema, index_params=index, consistency_level="Strong")

    def row(self, chunk: Chunk, vector: np.ndarray | Sequence[float], weights: Mapping[str, float] | None,
            lexkey: str) -> dict[str, Any]:
        row = {"id": chunk.chunk_id, "tenant": tenant_key(chunk.metadata.get(self.tenant_field)),
               "parent": chunk.parent_id, "hash": chunk.content_hash, "lexkey": lexkey,
               "position": int(chunk.position), "meta": dict(chunk.metadata),
               "dense": np.asarray(vector, dtype=np.float32).tolist()}
        if self.sparse:
            row["sparse"] = sparse_vector(weights or {})
        for key, kind in self.scalars.items():
            value = chunk.metadata.get(key)
            # a DOUBLE field holds one number a chunk (a multi-valued field is never declared DOUBLE)
            row[f"m_{key}"] = float(value) if kind == "DOUBLE" and isinstance(value, (int, float, str)) else value
        return row
