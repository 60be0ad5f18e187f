"""The dense side's persistent store: a Chroma collection of subchunk vectors in cosine space.

One collection per corpus and embedding model, named from both; the model's name is also in the
collection metadata, and a collection whose metadata names another model is rebuilt. A sync adds, updates (by content hash) and removes chunks so that no stale chunk
survives; a changed model rebuilds the collection. Vectors are computed before anything is written, so a
failure while embedding leaves the previous collection as it was.

A request reads the store only through :func:`guarded` (:func:`read_vectors`, :func:`read_window`): a store
that fails comes back as a :class:`StoreRead` that says why, and the stage that read it drops with that reason.
"""

from __future__ import annotations

import hashlib
import logging
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Generic, Mapping, Protocol, Sequence, TypeVar

import numpy as np

from .filters import Filters
from .types import Chunk, RankedList, ScoredItem

log = logging.getLogger(__name__)
T = TypeVar("T")

_PARENT, _HASH, _POS = "rw_parent", "rw_hash", "rw_position"
#: Metadata keys the stores keep for themselves (ours, and Chroma's ``chroma:document``): refused at load,
#: with keys that are empty or start with ``$`` (filter operators), ``#`` or ``chroma:`` (Chroma's own).
RESERVED_KEYS = frozenset({_PARENT, _HASH, _POS, "chroma:document"})
RESERVED_PREFIXES = ("$", "#", "chroma:")


@dataclass(frozen=True)
class SyncReport:
    """What a sync did: chunk counts, and whether the collection was rebuilt (new model)."""

    added: int
    updated: int
    removed: int
    unchanged: int
    rebuilt: bool


def open_client(chroma_path: Path | str, chroma_host: str | None = None) -> Any:
    """A Chroma client: embedded ``PersistentClient`` at ``chroma_path``, or ``HttpClient`` to ``host:port``.

    Raises:
        Exception: whatever chromadb raises when the path is unusable or the server is unreachable.
    """
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    settings = ChromaSettings(anonymized_telemetry=False)
    if chroma_host:
        host, _, port = chroma_host.removeprefix("http://").partition(":")
        return chromadb.HttpClient(host=host, port=int(port or 8000), settings=settings)
    Path(chroma_path).mkdir(parents=True, exist_ok=True)
    return chromadb.PersistentClient(path=str(chroma_path), settings=settings)


def index_variant(chunk_tokens: int, chunk_overlap: int, contextual: bool = False,
                  passage_template: str = "title-newline") -> str:
    """What, besides the corpus and the model, changes the vectors: chunking, the context line and the
    passage template (the default template adds nothing, so existing collections keep their names)."""
    return (f"chunks-{chunk_tokens}-{chunk_overlap}" + ("+context" if contextual else "")
            + ("" if passage_template == "title-newline" else f"+{passage_template}"))


def collection_name(corpus_key: str, model_name: str, variant: str = "") -> str:
    """Chroma collection name for a corpus (its absolute path), an embedding model and an index variant
    (:func:`index_variant`): ``chunks-<sha1[:16]>``. Each combination keeps its own collection, so two
    configurations never overwrite each other's chunks and switching back costs no re-embedding."""
    key = f"{corpus_key}\n{model_name}" + (f"\n{variant}" if variant else "")
    return "chunks-" + hashlib.sha1(key.encode("utf-8")).hexdigest()[:16]


def embed_chunks(todo: Sequence[Chunk], embed: Callable[[list[str]], np.ndarray], batch: int, progress: bool,
                 on_progress: Callable[[int, int], None] | None = None,
                 passage_template: str = "title-newline") -> np.ndarray:
    """Embed what the embedder reads of each chunk (:meth:`Chunk.passage`), in batches, with a progress bar
    on stderr and ``on_progress(embedded, total)`` after each batch. Returns ``(len(todo), dim)``."""
    if not todo:
        return np.zeros((0, 0), dtype=np.float32)
    from tqdm import tqdm

    parts = []
    with tqdm(total=len(todo), desc="embedding chunks", unit="chunk", file=sys.stderr,
              disable=not progress) as bar:
        for start in range(0, len(todo), batch):
            texts = [c.passage(passage_template) for c in todo[start : start + batch]]
            parts.append(embed(texts))
            bar.update(len(texts))
            if on_progress:
                on_progress(bar.n, len(todo))
    return np.vstack(parts)


class DenseStore(Protocol):
    """What a request reads from a dense store (Chroma here; the benchmark's in-memory HNSW store, Milvus).

    ``query`` returns the cosine window (stage ``dense``, filters applied inside the search);
    ``vectors`` the stored unit vectors of the given chunks (absent ids are left out).
    """

    def query(self, vector: np.ndarray, filters: Filters, window: int) -> RankedList: ...

    def vectors(self, chunk_ids: Sequence[str]) -> Mapping[str, np.ndarray]: ...

    def count(self) -> int: ...


@dataclass(frozen=True)
class StoreRead(Generic[T]):
    """What one guarded read of the vector store gave: its ``value``, or ``None`` and why (``reason``).

    The request-path stages read the store only through :func:`guarded` (:func:`read_vectors`,
    :func:`read_window`), so a store that fails drops the stage that read it, with this reason in the trace,
    instead of raising out of the request.
    """

    value: T | None
    reason: str | None = None

    @property
    def ok(self) -> bool:
        """The read succeeded (``value`` holds its result)."""
        return self.reason is None


def guarded(read: Callable[[], T], what: str) -> StoreRead[T]:
    """Run one store read; any exception the store raises comes back as ``StoreRead(None, reason)``.

    Args:
        read: the read, e.g. ``lambda: store.vectors(ids)``.
        what: the reason's lead, e.g. ``"stored vectors unavailable"``; the reason is
            ``"<what>: <ExceptionClass>: <message, first 200 characters>"`` (one line, logged once).
    """
    try:
        return StoreRead(read())
    except Exception as exc:  # noqa: BLE001 - the caller drops its stage with this reason
        reason = " ".join(f"{what}: {exc.__class__.__name__}: {str(exc)[:200]}".split())
        log.warning(reason)
        return StoreRead(None, reason)


def read_vectors(store: DenseStore | None, chunk_ids: Sequence[str],
                 what: str = "stored vectors unavailable") -> StoreRead[Mapping[str, np.ndarray]]:
    """The stored unit vectors of ``chunk_ids`` (absent ids left out), read through :func:`guarded`.

    No ids: an empty mapping without a read. No store: unavailable, reason ``"<what>: no vector store"``.
    """
    if not chunk_ids:
        return StoreRead({})
    if store is None:
        return StoreRead(None, f"{what}: no vector store")
    ids = list(chunk_ids)
    return guarded(lambda: store.vectors(ids), what)


def read_window(store: DenseStore, vector: np.ndarray, filters: Filters, window: int,
                what: str = "dense search failed") -> StoreRead[RankedList]:
    """The store's cosine window (:meth:`DenseStore.query`), read through :func:`guarded`."""
    return guarded(lambda: store.query(vector, filters, window), what)


class VectorStore:
    """Subchunk vectors of one corpus in one Chroma collection (cosine distance)."""

    def __init__(self, client: Any, corpus_key: str, model_name: str, variant: str = "",
                 ef_search: int | None = None, passage_template: str = "title-newline") -> None:
        """Open (or create) the collection; ``ef_search`` sets HNSW's query-time candidate list (Chroma's
        default is 100; Malkov & Yashunin, 2018: a larger list raises recall and latency);
        ``passage_template`` is what the embedder reads of each chunk (:meth:`Chunk.passage`)."""
        self.client, self.corpus_key, self.model_name, self.variant = client, corpus_key, model_name, variant
        self.passage_template = passage_template
        self.name = collection_name(corpus_key, model_name, variant)
        self.ef_search = ef_search
        self.collection = self._open()
        #: Chunk id → chunk of what :meth:`sync` stored: queries then read parents and metadata from memory
        #: instead of asking Chroma for them (half of an unfiltered query's time on the lab corpus).
        self.catalog: dict[str, Chunk] | None = None

    def _open(self) -> Any:
        collection = self.client.get_or_create_collection(
            self.name,
            metadata={"hnsw:space": "cosine", "embedding_model": self.model_name, "corpus": self.corpus_key,
                      "variant": self.variant, "passage_template": self.passage_template},
            embedding_function=None,
        )
        if self.ef_search is not None:
            self.set_ef_search(self.ef_search, collection)
        return collection

    def set_ef_search(self, ef_search: int, collection: Any = None) -> None:
        """Set HNSW's ``ef_search`` of the collection (stored with it; a no-op when already equal)."""
        collection = collection if collection is not None else self.collection
        current = ((collection.configuration or {}).get("hnsw") or {}).get("ef_search")
        if current != ef_search:
            collection.modify(configuration={"hnsw": {"ef_search": int(ef_search)}})
        self.ef_search = ef_search

    def count(self) -> int:
        return self.collection.count()

    def sync(self, chunks: Sequence[Chunk], embed: Callable[[list[str]], np.ndarray],
             batch: int = 32, progress: bool = True,
             on_progress: Callable[[int, int], None] | None = None, page: int = 5000) -> SyncReport:
        """Make the collection hold exactly ``chunks`` embedded by the current model.

        Args:
            chunks: all subchunks of the corpus.
            embed: passage-side encoder, ``list[str] -> (n, dim)`` normalized vectors.
            batch: texts per encode call.
            progress: show a progress bar on stderr while embedding.
            on_progress: called with ``(embedded, total)`` after each batch (e.g. for a UI progress bar).
            page: stored rows read per request when comparing content hashes.
        """
        rebuilt = (self.collection.metadata or {}).get("embedding_model") != self.model_name
        if rebuilt:
            self.client.delete_collection(self.name)
            self.collection = self._open()
        stored = self._stored_hashes(page)
        wanted = {c.chunk_id: c for c in chunks}
        todo = [c for c in chunks if stored.get(c.chunk_id) != c.content_hash]
        stale = [cid for cid in stored if cid not in wanted]
        vectors = embed_chunks(todo, embed, batch, progress, on_progress, self.passage_template)
        for start in range(0, len(todo), 512):
            part = todo[start : start + 512]
            self.collection.upsert(
                ids=[c.chunk_id for c in part],
                embeddings=vectors[start : start + len(part)],
                documents=[c.text for c in part],
                metadatas=[{**c.metadata, _PARENT: c.parent_id, _HASH: c.content_hash, _POS: c.position}
                           for c in part],
            )
        for start in range(0, len(stale), 512):
            self.collection.delete(ids=stale[start : start + 512])
        updated = sum(1 for c in todo if c.chunk_id in stored)
        self.catalog = wanted
        return SyncReport(len(todo) - updated, updated, len(stale), len(chunks) - len(todo), rebuilt)

    def _stored_hashes(self, page: int) -> dict[str, str | None]:
        """Chunk id → content hash of everything stored, read ``page`` rows at a time (one unbounded ``get``
        fails on large collections: Chroma's SQLite says "too many SQL variables" at 100k chunks)."""
        stored: dict[str, str | None] = {}
        offset = 0
        while True:
            got = self.collection.get(include=["metadatas"], limit=page, offset=offset)
            stored.update((cid, (meta or {}).get(_HASH)) for cid, meta in zip(got["ids"], got["metadatas"]))
            if len(got["ids"]) < page:
                return stored
            offset += page

    def query(self, vector: np.ndarray, filters: Filters, window: int) -> RankedList:
        """Nearest chunks to ``vector`` among those matching ``filters`` (applied inside Chroma's search).

        Returns:
            A ``RankedList`` (stage ``dense``, score kind ``cosine``: similarity in [-1, 1], higher is better).
        """
        catalog = self.catalog
        where = filters.chroma_where()
        asked = window
        for attempt in range(4):
            result = self.collection.query(
                query_embeddings=[np.asarray(vector, dtype=np.float32).tolist()], n_results=asked,
                where=where, include=["distances"] if catalog is not None else ["metadatas", "distances"],
            )
            ids, dists = result["ids"][0], result["distances"][0]
            if not ids and self.count() == 0:  # a second round trip only when nothing came back
                return RankedList("dense", "cosine", (), note="the vector store is empty")
            if catalog is not None:  # ids stored by another writer since our sync are left out
                rows = [(cid, catalog[cid].parent_id, catalog[cid].metadata, d) for cid, d in zip(ids, dists)
                        if cid in catalog]
            else:
                rows = [(cid, str(meta[_PARENT]), meta, d) for cid, meta, d in zip(ids, result["metadatas"][0], dists)]
            # The filters are checked again on our side, exactly in value and type: Chroma's ``where`` compares
            # numbers across int and float (``$eq: 1`` matches a stored 1.0), and a tenant filter must hold even
            # if the store ignored it.
            kept = [r for r in rows if filters.matches(r[2])]
            if len(kept) >= window or len(ids) < asked or len(kept) == len(rows):
                break
            asked *= 4  # the re-check dropped some of a full window: ask for more, so the window stays full
        rows = sorted(kept, key=lambda r: (r[3], r[0]))[:window]
        items = tuple(ScoredItem(cid, parent, rank, 1.0 - float(dist))
                      for rank, (cid, parent, _, dist) in enumerate(rows, start=1))
        return RankedList("dense", "cosine", items)

    def vectors(self, chunk_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored vectors of ``chunk_ids`` (missing ids are left out)."""
        if not chunk_ids:
            return {}
        got = self.collection.get(ids=list(chunk_ids), include=["embeddings"])
        return {cid: np.asarray(vec, dtype=np.float32) for cid, vec in zip(got["ids"], got["embeddings"])}

    def drop(self) -> None:
        """Delete this corpus' collection."""
        self.client.delete_collection(self.name)
