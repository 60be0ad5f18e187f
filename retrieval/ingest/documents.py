"""A parent document's record checked as every backend can store it: its id, title and text, its metadata (scalars
or lists of one type, keys the stores accept, values within the sizes below), no duplicate id, one JSON type per
tenant field, and each multi-valued field a tuple in every document that has it."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Iterable

from ..core.errors import CorpusError
from ..core.types import RESERVED_KEYS, RESERVED_PREFIXES, Document
from .ids import _check_id
from .metadata import MAX_METADATA_TEXT_BYTES


_SCALARS = (str, int, float, bool)
_INT64 = (-(2**63), 2**63 - 1)

#: Sizes every backend can store, checked at load for both alike (UTF-8 bytes, which no Milvus version counts
#: as fewer than characters), so a corpus that loads on the local backend also syncs to Milvus: one value past
#: a Milvus field's ``max_length`` fails the sync of the whole corpus (every request then ``lexical_only``).
#: A document id: the chunk id ``{id}#{n}`` must fit Milvus's id field (1,024).
MAX_ID_BYTES = 1000
#: A tenant value (Milvus's partition key field).
MAX_TENANT_BYTES = 1024
#: A metadata string (Milvus's typed metadata fields): :data:`.metadata.MAX_METADATA_TEXT_BYTES`.
#: The tenant field checked at load when the caller does not name another (RETRIEVAL_TENANT_FIELD's default).
DEFAULT_TENANT_FIELD = "tenant"


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate ("\ud800" in the JSON)
        return False
    return True


def _check_metadata(meta: Any, where: str) -> dict[str, Any]:
    """Metadata as a dict of scalars whose keys the stores accept.

    Raises:
        CorpusError (with ``where``): not an object; a key empty, starting with ``$`` / ``#`` / ``chroma:`` or
            reserved by the stores; a value that is not a string, boolean, 64-bit integer or finite number.
    """

    if meta is None:
        return {}
    if not isinstance(meta, dict):
        raise CorpusError(f"{where}: 'metadata' must be an object")
    for key, value in meta.items():
        if not isinstance(key, str) or not key.strip():
            raise CorpusError(f"{where}: metadata key {key!r} is empty")
        if key.startswith(RESERVED_PREFIXES) or key in RESERVED_KEYS:
            raise CorpusError(f"{where}: metadata key {key!r} is reserved by the stores (keys may not start "
                              f"with {', '.join(RESERVED_PREFIXES)} nor be {', '.join(sorted(RESERVED_KEYS))})")
        if not _encodable(key):
            raise CorpusError(f"{where}: metadata key {key!r} is not valid Unicode text")
        if isinstance(value, (list, tuple)):  # a multi-valued field: non-empty, scalars of one type (what the stores keep)
            if not value or not all(isinstance(v, _SCALARS) for v in value) \
                    or len({type(v) for v in value}) > 1:
                raise CorpusError(f"{where}: metadata {key!r} is a list: it must hold strings, numbers or "
                                  "booleans of one type, and at least one")
            for member in value:
                _check_value(key, member, where)
            continue
        if not isinstance(value, _SCALARS):
            raise CorpusError(f"{where}: metadata {key!r} must be a string, number or boolean (or a list of them)")
        _check_value(key, value, where)
    return {k: tuple(dict.fromkeys(v)) if isinstance(v, list) else v for k, v in meta.items()}


def _check_value(key: str, value: Any, where: str) -> None:
    """One scalar of a metadata field: finite, within 64 bits, valid text within the stores' limit."""
    if isinstance(value, float) and not math.isfinite(value):
        raise CorpusError(f"{where}: metadata {key!r} must be a finite number, got {value!r}")
    if type(value) is int and not _INT64[0] <= value <= _INT64[1]:
        raise CorpusError(f"{where}: metadata {key!r} is an integer beyond 64 bits ({value})")
    if isinstance(value, str) and not _encodable(value):
        raise CorpusError(f"{where}: metadata {key!r} is not valid Unicode text")
    if isinstance(value, str) and len(value.encode("utf-8")) > MAX_METADATA_TEXT_BYTES:
        raise CorpusError(f"{where}: metadata {key!r} holds {len(value.encode('utf-8')):,} bytes of text; the "
                          f"limit is {MAX_METADATA_TEXT_BYTES:,} (UTF-8 bytes, what a Milvus text field holds)")


def _document(record: dict[str, Any], where: str, id_key: str = "id", markup_kind: str = "") -> Document:
    if id_key not in record:
        raise CorpusError(f"{where}: missing or empty '{id_key}'")
    doc_id = _check_id(record.get(id_key), where, f"'{id_key}'")
    text = record.get("text")
    if not isinstance(text, str) or not text.strip():
        raise CorpusError(f"{where}: document {doc_id!r} has an empty 'text'")
    title = record.get("title") or ""
    if not isinstance(title, str):
        raise CorpusError(f"{where}: 'title' must be a string")
    if not all(_encodable(x) for x in (str(doc_id), title, text)):
        raise CorpusError(f"{where}: document {str(doc_id)!r} holds invalid Unicode (a lone surrogate)")
    size = len(str(doc_id).encode("utf-8"))
    if size > MAX_ID_BYTES:
        raise CorpusError(f"{where}: document id {str(doc_id)[:40]!r}… is {size:,} bytes long; the limit is "
                          f"{MAX_ID_BYTES:,} (UTF-8 bytes: its chunk ids must fit the vector store's id field)")
    return Document(str(doc_id), title, text, _check_metadata(record.get("metadata"), where), markup_kind)


def _unique(docs: Iterable[tuple[str, Document]], tenant_field: str | None = DEFAULT_TENANT_FIELD,
            source: Path | None = None) -> list[Document]:
    """The documents, refusing duplicate ids and a tenant field that mixes JSON types.

    Tenant identity is exact in type: a corpus whose tenant values are ``1`` and ``true`` (or ``1`` and
    ``"1"``, or ``1`` and ``1.0``) is refused here, naming the first line of each type.
    """
    seen: dict[str, str] = {}
    tenant_type: tuple[str, str] | None = None
    out: list[Document] = []
    for where, doc in docs:
        if doc.id in seen:
            raise CorpusError(f"{where}: duplicate id {doc.id!r} (first at {seen[doc.id]})")
        seen[doc.id] = where
        if tenant_field and tenant_field in doc.metadata:
            tenant = doc.metadata[tenant_field]
            if isinstance(tenant, tuple):
                raise CorpusError(f"{where}: the tenant field {tenant_field!r} holds a list ({list(tenant)[:5]}): a "
                                  "document belongs to one tenant")
            if isinstance(tenant, str) and len(tenant.encode("utf-8")) > MAX_TENANT_BYTES:
                raise CorpusError(f"{where}: tenant {tenant[:40]!r}… ({tenant_field!r}) is "
                                  f"{len(tenant.encode('utf-8')):,} bytes long; the limit is {MAX_TENANT_BYTES:,} "
                                  "(UTF-8 bytes, what the vector store's tenant field holds)")
            kind = _json_type(tenant)
            if tenant_type is None:
                tenant_type = (kind, where)
            elif kind != tenant_type[0]:
                raise CorpusError(
                    f"{where}: tenant field '{tenant_field}' is a {kind} here but a {tenant_type[0]} at "
                    f"{tenant_type[1]}: a tenant field must hold one JSON type (tenants are exact in value and type)")
        out.append(doc)
    if not out:
        raise CorpusError(f"{source}: the corpus holds no document" if source else "the corpus holds no document")
    return out


def _json_type(value: Any) -> str:
    return {bool: "boolean", int: "integer", float: "number with a fraction", str: "string"}.get(type(value), "value")


def _multi_valued(docs: list[Document]) -> list[Document]:
    """The documents with each multi-valued field a tuple in every document that has it (a ``tags: dados`` in one
    file and ``tags: [dados, api]`` in another): the stores keep one kind per field, and a filter matches both by
    member."""
    multi = {k for d in docs for k, v in d.metadata.items() if isinstance(v, tuple)}
    if not multi:
        return docs
    out = []
    for d in docs:
        if any(k in multi and not isinstance(v, tuple) for k, v in d.metadata.items()):
            meta = {k: (v,) if k in multi and not isinstance(v, tuple) else v for k, v in d.metadata.items()}
            d = Document(d.id, d.title, d.text, meta, d.markup)
        out.append(d)
    return out
