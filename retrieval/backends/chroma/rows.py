"""A chunk as a row of a Chroma collection (the store's own metadata keys: parent, content hash, position;
a multi-valued field as a list) and a collection's rows read back page by page."""

from __future__ import annotations

from typing import Any, Iterator, Mapping, Sequence

import numpy as np

from ...core.types import Chunk

_PARENT, _HASH, _POS = "rw_parent", "rw_hash", "rw_position"


def _chroma_metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """A chunk's metadata as Chroma stores it: a multi-valued field (a tuple) as a list, which ``$contains``
    matches by member."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in metadata.items()}


def _pages(collection: Any, include: list[str], page: int) -> Iterator[Mapping[str, Any]]:
    """Everything stored in ``collection``, ``page`` rows a ``get`` (one unbounded ``get`` fails on large
    collections: Chroma's SQLite says "too many SQL variables" at 100k chunks)."""
    offset = 0
    while True:
        got = collection.get(include=include, limit=page, offset=offset)
        yield got
        if len(got["ids"]) < page:
            return
        offset += page


def _stored_hashes(collection: Any, page: int) -> dict[str, str | None]:
    """Chunk id → content hash of everything stored in ``collection``, read ``page`` rows at a time
    (:func:`_pages`)."""
    return {cid: (meta or {}).get(_HASH) for got in _pages(collection, ["metadatas"], page)
            for cid, meta in zip(got["ids"], got["metadatas"])}


def _reusable(others: Mapping[str, Any], other_stored: Mapping[str, Mapping[str, str | None]],
              todo: Sequence[Chunk], batch: int = 1000) -> dict[str, np.ndarray]:
    """Stored vectors of ``todo`` chunks found, with the same content hash, in collections of another layout
    (read back ``batch`` ids at a time): a layout change moves vectors and embeds nothing."""
    found: dict[str, np.ndarray] = {}
    for name, hashes in other_stored.items():
        ids = [c.chunk_id for c in todo if c.chunk_id not in found and hashes.get(c.chunk_id) == c.content_hash]
        for start in range(0, len(ids), batch):
            got = others[name].get(ids=ids[start : start + batch], include=["embeddings"])
            found.update((cid, np.asarray(vec, dtype=np.float32)) for cid, vec in zip(got["ids"], got["embeddings"]))
    return found
