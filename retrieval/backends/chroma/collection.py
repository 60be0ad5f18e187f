"""The subchunk vectors of one corpus in Chroma (:class:`VectorStore`): its layout's collections synced by content
hash (a tenant added or removed creates or drops only its collection; a store of another layout moved with its
stored vectors), searched (HNSW, or exactly: :class:`~.exact.ExactSearch`) and read back."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ...core.filters import Filters, typed
from ...core.reasons import Reason
from ...core.types import Chunk, RankedList, ScoredItem
from ..reads import STORE_EMPTY
from ..vectors import SyncReport, embedded_batches
from .damage import damage_reason
from .exact import ExactSearch
from .layout import DenseLayout, collection_name, owned_by
from .rows import _HASH, _PARENT, _POS, _chroma_metadata, _reusable, _stored_hashes


class VectorStore:
    """Subchunk vectors of one corpus in Chroma (cosine distance), laid out by tenant (:class:`DenseLayout`).

    The layout is decided by :meth:`sync` from the chunks: a corpus whose chunks carry ``tenant_field`` gets one
    collection per tenant (or per bucket, ``tenant_buckets``); any other, one collection. Queries route by the
    request's tenant clause; a query without one (a single-tenant corpus; the benchmark's unfiltered search)
    searches every collection of the layout and merges by distance.
    """

    def __init__(self, client: Any, corpus_key: str, model_name: str, variant: str = "",
                 ef_search: int | None = None, passage_template: str = "title-newline",
                 tenant_field: str | None = None, tenant_buckets: int = 0, path: Path | str | None = None,
                 exact_up_to: int = 0) -> None:
        """Store the configuration; nothing is read or written before :meth:`sync`.

        Args:
            ef_search: HNSW's query-time candidate list, set on every collection (Chroma's default is 100;
                Malkov & Yashunin, 2018: a larger list raises recall and latency).
            passage_template: what the embedder reads of each chunk (:meth:`Chunk.passage`).
            tenant_field: the metadata field naming a chunk's tenant; ``None``: one collection, whatever the
                metadata.
            tenant_buckets: 0 = one collection per tenant, 1 = one collection for all (tenant filtered), N = N
                hash buckets (tenant filtered inside its bucket).
            path: the embedded store's folder (``None``: a server's), checked when a read fails (:meth:`damage`).
            exact_up_to: a corpus of at most this many chunks is searched exactly (:class:`ExactSearch`), a larger
                one by Chroma's HNSW; 0: always HNSW.
        """
        self.client, self.corpus_key, self.model_name, self.variant = client, corpus_key, model_name, variant
        self.path = Path(path) if path is not None else None
        self.passage_template = passage_template
        self.name = collection_name(corpus_key, model_name, variant)
        self.ef_search = ef_search
        self.tenant_field, self.tenant_buckets = tenant_field, tenant_buckets
        #: The layout and its open collections (name → Chroma collection), set by :meth:`sync`.
        self.layout: DenseLayout | None = None
        self.collections: dict[str, Any] = {}
        #: Chunk id → chunk of what :meth:`sync` stored: queries then read parents and metadata from memory
        #: instead of asking Chroma for them (half of an unfiltered query's time on the lab corpus).
        self.catalog: dict[str, Chunk] | None = None
        self.exact_up_to = exact_up_to
        #: The exact search's vectors, read from the collections on the first exact query after a sync.
        self.exact: ExactSearch | None = None

    @property
    def searched_exactly(self) -> bool:
        """Whether :meth:`query` compares every stored vector (the corpus has at most ``exact_up_to`` chunks)."""
        return self.catalog is not None and 0 < len(self.catalog) <= self.exact_up_to

    def damage(self, exc: BaseException) -> Reason | None:
        """:data:`~retrieval.backends.base.DAMAGED` when ``exc`` (a failed read or write) comes from damaged files
        of this embedded store (:func:`damage_reason`), else ``None``."""
        return damage_reason(exc, self.path, self.corpus_key)

    @property
    def collection(self) -> Any:
        """The one collection of a one-collection layout.

        Raises:
            AttributeError: the store is not synced, or its layout has several collections (see ``collections``).
        """
        if len(self.collections) != 1:
            raise AttributeError(f"{len(self.collections)} collections in this layout: read .collections")
        return next(iter(self.collections.values()))

    def _create(self, name: str, layout: DenseLayout) -> Any:
        collection = self.client.get_or_create_collection(
            name,
            metadata={"hnsw:space": "cosine", "embedding_model": self.model_name, "corpus": self.corpus_key,
                      "variant": self.variant, "passage_template": self.passage_template, "layout": layout.kind},
            embedding_function=None,
        )
        if self.ef_search is not None:
            self.set_ef_search(self.ef_search, collection)
        return collection

    def set_ef_search(self, ef_search: int, collection: Any = None) -> None:
        """Set HNSW's ``ef_search`` of one collection, or of every collection of the layout (stored with each;
        a no-op where already equal)."""
        for col in [collection] if collection is not None else list(self.collections.values()):
            current = ((col.configuration or {}).get("hnsw") or {}).get("ef_search")
            if current != ef_search:
                col.modify(configuration={"hnsw": {"ef_search": int(ef_search)}})
        self.ef_search = ef_search

    def count(self) -> int:
        """Chunks stored in the layout's collections."""
        return sum(col.count() for col in self.collections.values())

    def _stored_hashes(self, page: int) -> dict[str, str | None]:
        """Chunk id → content hash of everything the layout's collections hold (see :func:`_stored_hashes`)."""
        stored: dict[str, str | None] = {}
        for col in self.collections.values():
            stored.update(_stored_hashes(col, page))
        return stored

    def owned(self, page: int = 1000) -> dict[str, Any]:
        """Every collection of this index in the store, in any layout (name → collection), listed ``page`` at a
        time."""
        found: dict[str, Any] = {}
        offset = 0
        while True:
            got = self.client.list_collections(limit=page, offset=offset)
            found.update((col.name, col) for col in got if owned_by(self.name, col.name))
            if len(got) < page:
                return found
            offset += page

    def earlier_models(self, page: int = 1000) -> list[str]:
        """The encoders another collection of this corpus and chunking was embedded by (``e5-small`` before the
        one pass, say): their collections are another index, named by their model."""
        found: set[str] = set()
        offset = 0
        while True:
            got = self.client.list_collections(limit=page, offset=offset)
            for col in got:
                meta = col.metadata or {}
                if (meta.get("corpus") == self.corpus_key and meta.get("variant") == self.variant
                        and meta.get("embedding_model") not in (None, self.model_name)):
                    found.add(str(meta["embedding_model"]))
            if len(got) < page:
                return sorted(found)
            offset += page

    def sync(self, chunks: Sequence[Chunk], embed: Callable[[list[str]], np.ndarray],
             batch: int = 32, progress: bool = True,
             on_progress: Callable[[int, int], None] | None = None, page: int = 5000,
             encode_chunks: Callable[[Sequence[Chunk]], np.ndarray] | None = None) -> SyncReport:
        """Make the layout's collections hold exactly ``chunks`` embedded by the current model.

        Each collection is synced by content hash (added, updated, stale removed); a tenant new to the corpus
        creates only its collection, a tenant gone drops only its own. Collections of this index in another
        layout (a store built before tenant isolation, or with another ``tenant_buckets``) are read back, their
        stored vectors reused for the chunks whose content hash matches (``migrated``, never re-embedded), and
        dropped once the new layout is written.

        Resumable: each batch is written as soon as it is embedded, with its content hash, so a sync killed half
        way keeps what it wrote and the next one embeds only the rest.

        Args:
            chunks: all subchunks of the corpus.
            embed: passage-side encoder, ``list[str] -> (n, dim)`` normalized vectors.
            batch: texts per encode call (and per write).
            progress: show a progress bar on stderr while embedding.
            on_progress: called with ``(embedded, total)`` after each batch (e.g. for a UI progress bar).
            page: stored rows read per request when comparing content hashes.
            encode_chunks: encodes chunks rather than their passages (:func:`embedded_batches`).

        Raises:
            ValueError: two tenants of the corpus fall on one collection name (a 64-bit digest collision).
        """
        field = self.tenant_field
        layout = DenseLayout(self.name, field is not None and any(field in c.metadata for c in chunks),
                             self.tenant_buckets)
        groups: dict[str, list[Chunk]] = {} if chunks else {self.name: []}
        holder: dict[str, tuple[str, Any]] = {}
        name_of: dict[str, str] = {}
        for c in chunks:
            name = self.name
            if layout.multi_tenant:
                assert field is not None  # the layout is multi-tenant only with a tenant field
                name = layout.name_for(c.metadata.get(field))
                if layout.isolated and holder.setdefault(name, typed(c.metadata[field])) != typed(c.metadata[field]):
                    raise ValueError(f"tenants {holder[name][1]!r} and {c.metadata[field]!r} share collection "
                                     f"{name}: set RETRIEVAL_TENANT_BUCKETS")
            groups.setdefault(name, []).append(c)
            name_of[c.chunk_id] = name
        existing = self.owned()
        earlier = self.earlier_models() if not existing and chunks else []
        rebuilt = False
        stored: dict[str, dict[str, str | None]] = {}
        for name in groups:
            col = existing.get(name)
            if col is not None and (col.metadata or {}).get("embedding_model") != self.model_name:
                self.client.delete_collection(name)
                del existing[name]
                rebuilt = True
            stored[name] = _stored_hashes(existing[name], page) if name in existing else {}
        todo = {name: [c for c in group if stored[name].get(c.chunk_id) != c.content_hash]
                for name, group in groups.items()}
        others = {name: col for name, col in existing.items() if name not in groups}
        other_stored = {name: _stored_hashes(col, page) for name, col in others.items()}
        reused = _reusable(others, other_stored, [c for part in todo.values() for c in part])
        to_embed = [c for part in todo.values() for c in part if c.chunk_id not in reused]
        self.layout, self.collections, self.catalog, self.exact = None, {}, None, None  # no half layout kept
        created: list[str] = []
        collections: dict[str, Any] = {}
        for name in groups:
            if name in existing:
                col = self.client.get_collection(name, embedding_function=None)
                if self.ef_search is not None:
                    self.set_ef_search(self.ef_search, col)
            else:
                col = self._create(name, layout)
                created.append(name)
            collections[name] = col

        def write(rows: Sequence[Chunk], vectors: np.ndarray) -> None:
            by_name: dict[str, list[int]] = {}
            for i, c in enumerate(rows):
                by_name.setdefault(name_of[c.chunk_id], []).append(i)
            for name, at in by_name.items():
                part = [rows[i] for i in at]
                collections[name].upsert(
                    ids=[c.chunk_id for c in part],
                    embeddings=np.asarray(vectors[at], dtype=np.float32),
                    documents=[c.text for c in part],
                    metadatas=[{**_chroma_metadata(c.metadata), _PARENT: c.parent_id, _HASH: c.content_hash,
                                _POS: c.position} for c in part],
                )

        moved = [c for part in todo.values() for c in part if c.chunk_id in reused]
        for start in range(0, len(moved), 512):
            block = moved[start : start + 512]
            write(block, np.vstack([reused[c.chunk_id] for c in block]))
        # Writes overlap the encoding of the next batch (one writer thread, at most two batches waiting); a stopped
        # or failed sync still waits for what was handed to the writer, so every batch encoded is kept.
        with ThreadPoolExecutor(1, thread_name_prefix="store-write") as writer:
            pending: list[Future] = []
            try:
                for rows, vectors in embedded_batches(to_embed, embed, batch, progress, on_progress,
                                                      self.passage_template, encode_chunks):
                    pending.append(writer.submit(write, rows, vectors))
                    while len(pending) > 2:
                        pending.pop(0).result()
            finally:
                wait(pending)
            for done in pending:
                done.result()
        for name, group in groups.items():
            members = {c.chunk_id for c in group}
            stale = [cid for cid in stored[name] if cid not in members]
            for start in range(0, len(stale), 512):
                collections[name].delete(ids=stale[start : start + 512])
        for name in others:
            self.client.delete_collection(name)
        wanted = {c.chunk_id: c for c in chunks}
        known = set().union(*stored.values(), *other_stored.values())
        updated = sum(1 for c in to_embed if c.chunk_id in known)
        self.layout, self.collections, self.catalog = layout, collections, wanted
        self.exact = ExactSearch(self.collections, wanted, page) if self.searched_exactly else None
        return SyncReport(len(to_embed) - updated, updated, len(known - wanted.keys()),
                          len(chunks) - sum(map(len, todo.values())), rebuilt, migrated=len(reused),
                          layout=layout.kind, collections=len(collections), created=tuple(sorted(created)),
                          dropped=tuple(sorted(others)), earlier_model=", ".join(earlier))

    def _targets(self, filters: Filters) -> tuple[list[Any], Filters]:
        """The collections a query searches, and the filters sent to them (the tenant clause is left out where a
        collection holds one tenant; the full filters are re-checked on our side in any case).

        Raises:
            RuntimeError: the store is not synced (or was dropped).
            ValueError: the filters name several tenants (a request names one: :func:`build_filters`).
        """
        layout = self.layout
        if layout is None:
            raise RuntimeError("the vector store is not synced (or was dropped)")
        tenants = filters.get(self.tenant_field) if layout.multi_tenant and self.tenant_field else None
        if tenants is None:
            return list(self.collections.values()), filters
        if len(tenants) != 1:
            raise ValueError(f"a dense query names one tenant; got {len(tenants)}: nothing is searched across tenants")
        col = self.collections.get(layout.name_for(tenants[0]))
        if col is None:  # a tenant with no chunk in the corpus has no collection
            return [], filters
        if layout.isolated:
            filters = Filters(tuple((k, v) for k, v in filters.clauses if k != self.tenant_field))
        return [col], filters

    def query(self, vector: np.ndarray, filters: Filters, window: int) -> RankedList:
        """Nearest chunks to ``vector`` among those matching ``filters``: in the tenant's collection (no tenant
        filter sent where it holds one tenant; the other filters applied inside Chroma's search), or, without a
        tenant clause, in every collection of the layout, merged by distance.

        Returns:
            A ``RankedList`` (stage ``dense``, score kind ``cosine``: similarity in [-1, 1], higher is better).

        Raises:
            RuntimeError, ValueError: see :meth:`_targets` (a guarded read turns them into a reason).
        """
        catalog = self.catalog
        targets, sent = self._targets(filters)
        exact = self.exact   # set by a sync, with the catalog, where the corpus is small enough
        if exact is not None:
            return exact.query(vector, [name for name, col in self.collections.items() if col in targets], filters,
                               window)
        where = sent.chroma_where()
        query = [np.asarray(vector, dtype=np.float32).tolist()]
        include = ["distances"] if catalog is not None else ["metadatas", "distances"]
        asked = window
        kept: list[tuple[str, str, Mapping[str, Any], float]] = []
        for attempt in range(4):
            rows: list[tuple[str, str, Mapping[str, Any], float]] = []
            full = False
            for col in targets:
                result = col.query(query_embeddings=query, n_results=asked, where=where, include=include)
                ids, dists = result["ids"][0], result["distances"][0]
                full = full or len(ids) >= asked
                if catalog is not None:  # ids stored by another writer since our sync are left out
                    rows += [(cid, catalog[cid].parent_id, catalog[cid].metadata, d) for cid, d in zip(ids, dists)
                             if cid in catalog]
                else:
                    rows += [(cid, str(meta[_PARENT]), meta, d)
                             for cid, meta, d in zip(ids, result["metadatas"][0], dists)]
            if not rows and targets and sum(col.count() for col in targets) == 0:  # a round trip only when empty
                return RankedList("dense", "cosine", (), note=STORE_EMPTY())
            # The filters are checked again on our side, exactly in value and type: Chroma's ``where`` compares
            # numbers across int and float (``$eq: 1`` matches a stored 1.0), and a tenant filter must hold even
            # if the store ignored it (or a collection held another tenant).
            kept = [r for r in rows if filters.matches(r[2])]
            if len(kept) >= window or not full or len(kept) == len(rows):
                break
            asked *= 4  # the re-check dropped some of a full window: ask for more, so the window stays full
        rows = sorted(kept, key=lambda r: (r[3], r[0]))[:window]
        items = tuple(ScoredItem(cid, parent, rank, 1.0 - float(dist))
                      for rank, (cid, parent, _, dist) in enumerate(rows, start=1))
        return RankedList("dense", "cosine", items)

    def vectors(self, chunk_ids: Sequence[str]) -> dict[str, np.ndarray]:
        """Stored vectors of ``chunk_ids`` (missing ids are left out), read from each one's collection (every
        collection of the layout when the catalog does not know the id's tenant)."""
        if not chunk_ids:
            return {}
        layout, catalog = self.layout, self.catalog
        if layout is None:
            raise RuntimeError("the vector store is not synced (or was dropped)")
        wanted: dict[str, list[str]] = {}
        for cid in dict.fromkeys(chunk_ids):
            chunk = catalog.get(cid) if catalog is not None else None
            if chunk is None and catalog is not None:
                continue  # not a chunk of this corpus
            field = self.tenant_field  # set whenever the layout is multi-tenant
            names = ([layout.name_for(chunk.metadata.get(field)) if layout.multi_tenant and field is not None
                      else self.name] if chunk is not None else list(self.collections))
            for name in names:
                wanted.setdefault(name, []).append(cid)
        out: dict[str, np.ndarray] = {}
        for name, ids in wanted.items():
            col = self.collections.get(name)
            if col is None:
                continue
            got = col.get(ids=ids, include=["embeddings"])
            out.update((cid, np.asarray(vec, dtype=np.float32)) for cid, vec in zip(got["ids"], got["embeddings"]))
        return {cid: out[cid] for cid in chunk_ids if cid in out}

    def drop(self) -> None:
        """Delete every collection of this index, in any layout."""
        for name in self.owned():
            self.client.delete_collection(name)
        self.layout, self.collections, self.catalog, self.exact = None, {}, None, None
