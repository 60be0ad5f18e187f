"""The dense side and the collection: a corpus' rows in one Milvus collection (:class:`MilvusStore`), synced
from the chunks (only what changed is written) and searched per tenant, with the filters in the expression
(:mod:`.expressions`) and checked again on our side."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from ...core.defaults import RRF_K
from ...core.filters import Filters
from ...core.text import tokenize
from ...core.types import Chunk, RankedList, ScoredItem
from ..vectors import SyncReport, embed_chunks
from .bm25 import TenantStats, doc_weights, sparse_vector, tenant_names, tenant_stats
from .client import LITE, MilvusUnavailable, ServerFeatures
from .expressions import literal
from .schema import Schema, collection_name

_PAGE = 2000  # rows per write / read request


class MilvusStore:
    """A corpus' rows in one Milvus collection: :class:`retrieval.backends.chroma.VectorStore`'s methods (``sync``,
    ``query``, ``vectors``, ``count``, ``drop``) plus :meth:`sparse_search` for :class:`MilvusLexical` and
    :meth:`server_rrf` (Milvus's own hybrid search, a check of our fusion)."""

    def __init__(self, client: Any, corpus_key: str, model_name: str, variant: str = "", *,
                 tenant_field: str = "tenant", types: Mapping[str, set[type]] | None = None,
                 ef_search: int | None = None, timeout: float = 10.0, server: bool = False,
                 passage_template: str = "title-newline", features: ServerFeatures = LITE) -> None:
        self.client, self.corpus_key, self.model_name, self.variant = client, corpus_key, model_name, variant
        self.tenant_field = tenant_field
        self.passage_template = passage_template
        #: What the server supports (:func:`server_features`): Milvus Lite's whole API by default.
        self.features = features
        self.schema = Schema(types or {}, tenant_field, features)
        self.name = collection_name(corpus_key, model_name, f"{variant}\n{self.schema.signature()}")
        self.ef_search = ef_search or 100
        self.timeout = timeout
        #: A Milvus server (True) or Milvus Lite in process (False): Lite has no query iterator.
        self.server = server
        #: A request's reads on a server: Session consistency (this process' writes are seen at once, another
        #: process' within the server's time tick). Strong, the collection's level, made every search on Milvus
        #: 2.3.5 wait for the next time tick: 200 ms instead of 5 ms. The sync's own reads stay Strong.
        self.read_level = {"consistency_level": "Session"} if server else {}
        self.catalog: dict[str, Chunk] | None = None
        self.stats: dict[Any, TenantStats] = {}

    # VectorStore protocol ---------------------------------------------------------------------------
    def set_ef_search(self, ef_search: int) -> None:
        """HNSW's query-time candidate list (``ef``), sent with every dense search (at least the window)."""
        self.ef_search = int(ef_search)

    def count(self) -> int:
        if not self.client.has_collection(self.name, timeout=self.timeout):
            return 0
        got = self.client.query(self.name, filter="", output_fields=["count(*)"], timeout=self.timeout)
        return int(got[0]["count(*)"])

    def drop(self) -> None:
        if self.client.has_collection(self.name, timeout=self.timeout):
            self.client.drop_collection(self.name, timeout=self.timeout)

    def sync(self, chunks: Sequence[Chunk], embed: Callable[[list[str]], np.ndarray], batch: int = 32,
             progress: bool = True, on_progress: Callable[[int, int], None] | None = None,
             stats: dict[Any, TenantStats] | None = None,
             encode_chunks: Callable[[Sequence[Chunk]], np.ndarray] | None = None) -> "MilvusSyncReport":
        """Make the collection hold exactly ``chunks`` (dense vectors from ``embed`` and our BM25 weights).

        Unchanged rows (same content hash and the same tenant statistics) are not written; a tenant whose
        statistics changed gets only its sparse vectors rewritten (``reweighted``); stale rows are deleted.
        Every vector is computed before anything is written, so a failure while embedding leaves the
        previous collection as it was. (``rebuilt`` is always False: another model or row layout is another
        collection, see :func:`collection_name`.)

        Without sparse vectors (Milvus before 2.4) rows carry no BM25 weights and ``stats`` only name the
        tenants (nothing is reweighted); where ``upsert`` is unsafe, a changed row is deleted, then inserted.
        """
        if stats is None:
            stats = (tenant_stats if self.schema.sparse else tenant_names)(chunks, self.tenant_field)
        wanted = {c.chunk_id: c for c in chunks}
        exists = self.client.has_collection(self.name, timeout=self.timeout)
        stored: dict[str, tuple[str, str]] = {}
        stale: list[str] = []
        rebuilt = False
        if exists:
            self.client.load_collection(self.name, timeout=self.timeout)  # released after a restart
            stored, stale = self._stored(wanted)
        todo = [c for c in chunks if c.chunk_id not in stored or stored[c.chunk_id][0] != c.content_hash]
        lexkey = {t: (s.key if self.schema.sparse else "-") for t, s in stats.items()}
        reweight = [c for c in chunks if c.chunk_id in stored and stored[c.chunk_id][0] == c.content_hash
                    and stored[c.chunk_id][1] != lexkey[c.metadata.get(self.tenant_field)]]
        vectors = embed_chunks(todo, embed, batch, progress, on_progress, self.passage_template, encode_chunks)
        if not exists:
            if not todo:  # an empty corpus: nothing to create
                self.catalog, self.stats = wanted, stats
                return MilvusSyncReport(0, 0, 0, 0, rebuilt, reweighted=0)
            self.schema.create(self.client, self.name, int(vectors.shape[1]), self.model_name)
        for start in range(0, len(todo), _PAGE):
            part = todo[start : start + _PAGE]
            rows = []
            for j, c in enumerate(part):
                s = stats[c.metadata.get(self.tenant_field)]
                weights = doc_weights(tokenize(c.indexed_text), s.avgdl) if self.schema.sparse else None
                rows.append(self.schema.row(c, vectors[start + j], weights, lexkey[c.metadata.get(self.tenant_field)]))
            self._write(rows, [c.chunk_id for c in part if c.chunk_id in stored])
        for start in range(0, len(reweight), _PAGE):
            rows = []
            part = reweight[start : start + _PAGE]
            for c in part:
                s = stats[c.metadata.get(self.tenant_field)]
                rows.append({"id": c.chunk_id, "lexkey": s.key,
                             "sparse": sparse_vector(doc_weights(tokenize(c.indexed_text), s.avgdl))})
            if self.features.partial_update:
                self.client.upsert(self.name, rows, partial_update=True, timeout=self.timeout)
            else:  # the whole rows, with their stored dense vectors (nothing re-embedded)
                stored_dense = self._dense(c.chunk_id for c in part)
                self._write([{**self.schema.row(c, stored_dense[c.chunk_id], None, row["lexkey"]), **row}
                             for c, row in zip(part, rows)], [c.chunk_id for c in part])
        for start in range(0, len(stale), _PAGE):
            self.client.delete(self.name, ids=stale[start : start + _PAGE], timeout=self.timeout)
        if todo or reweight or stale:
            # Seal what was written: Milvus (Lite too) then searches indexed segments instead of scanning the
            # growing one (at 10k chunks on Milvus Lite: 2.3 s → 0.1 s a lexical query).
            self.client.flush(self.name, timeout=max(self.timeout, 600.0))
        updated = sum(1 for c in todo if c.chunk_id in stored)
        self.catalog, self.stats = wanted, stats
        return MilvusSyncReport(len(todo) - updated, updated, len(stale), len(chunks) - len(todo), rebuilt,
                                reweighted=len(reweight))

    def _write(self, rows: list[dict[str, Any]], replaced: list[str]) -> None:
        """Write ``rows``; ``replaced`` are the ids among them already stored (deleted first where the server's
        upsert is unsafe: Milvus 2.3.5 put upserted rows in another tenant's partition)."""
        if self.features.upsert:
            self.client.upsert(self.name, rows, timeout=self.timeout)
            return
        if replaced:
            self.client.delete(self.name, ids=replaced, timeout=self.timeout)
        self.client.insert(self.name, rows, timeout=self.timeout)

    def _dense(self, chunk_ids: Iterable[str]) -> dict[str, list[float]]:
        """The stored dense vectors of ``chunk_ids``, as stored (not normalized)."""
        got = self.client.get(self.name, ids=list(chunk_ids), output_fields=["dense"], timeout=self.timeout)
        return {str(row["id"]): row["dense"] for row in got}

    def _stored(self, wanted: Iterable[str]) -> tuple[dict[str, tuple[str, str]], list[str]]:
        """``(chunk id → (content hash, lexical key) of the stored rows among ``wanted``, stale ids)``.

        The wanted ids are looked up by primary key (``id in [...]``, a page at a time); the whole collection is
        listed only when it holds more rows than were found, i.e. when some are stale.
        """
        wanted = list(wanted)
        out: dict[str, tuple[str, str]] = {}
        for start in range(0, len(wanted), 1000):
            expr = f"id in [{', '.join(literal(cid) for cid in wanted[start : start + 1000])}]"
            rows = self.client.query(self.name, filter=expr, output_fields=["id", "hash", "lexkey"],
                                     timeout=self.timeout)
            out.update((str(r["id"]), (r["hash"], r["lexkey"])) for r in rows)
        if self.count() <= len(out):
            return out, []
        known = set(wanted)
        return out, [cid for cid in self._all_ids() if cid not in known]

    def _all_ids(self) -> list[str]:
        """Every stored id: a query iterator on a server (no offset cap), offset pages on Milvus Lite (which
        has no iterator)."""
        ids: list[str] = []
        if self.server:
            iterator = self.client.query_iterator(self.name, batch_size=_PAGE, filter="", output_fields=["id"],
                                                  timeout=self.timeout)
            try:
                while page := iterator.next():
                    ids.extend(str(r["id"]) for r in page)
            finally:
                iterator.close()
            return ids
        while True:
            page = self.client.query(self.name, filter="", output_fields=["id"], limit=_PAGE, offset=len(ids),
                                     timeout=self.timeout)
            ids.extend(str(r["id"]) for r in page)
            if len(page) < _PAGE:
                return ids

    def attach(self, chunks: Sequence[Chunk], stats: dict[Any, TenantStats]) -> None:
        """Use an already synced collection for ``chunks`` (e.g. another process wrote it)."""
        self.catalog, self.stats = {c.chunk_id: c for c in chunks}, stats

    def _tenants(self, filters: Filters) -> list[Any]:
        tenants = filters.get(self.tenant_field)
        if tenants is not None:
            return list(tenants)
        return list(self.stats) or [None]

    def query(self, vector: np.ndarray, filters: Filters, window: int) -> RankedList:
        """Nearest chunks by cosine among those matching ``filters`` (one search per tenant of the filter,
        each with the tenant in its expression). Stage ``dense``, score kind ``cosine``."""
        catalog = self.catalog or {}
        rows: list[tuple[float, str]] = []
        vec = np.asarray(vector, dtype=np.float32).tolist()
        for tenant in self._tenants(filters):
            if window <= 0:
                break
            hits = self._search([vec], "dense", "COSINE", window, self.schema.expression(filters, tenant),
                                {"ef": max(self.ef_search, window)})
            rows.extend((float(h["distance"]), str(h["id"])) for h in hits)
        # The filters are checked again on our side: a tenant filter holds even if the store ignored it.
        rows = [(d, cid) for d, cid in rows if cid in catalog and filters.matches(catalog[cid].metadata)]
        rows.sort(key=lambda r: (-r[0], r[1]))
        items = tuple(ScoredItem(cid, catalog[cid].parent_id, rank, d)
                      for rank, (d, cid) in enumerate(rows[:window], start=1))
        return RankedList("dense", "cosine", items)

    def vectors(self, chunk_ids: Sequence[str]) -> dict[str, np.ndarray]:
        if not chunk_ids:
            return {}
        got = self.client.get(self.name, ids=list(chunk_ids), output_fields=["dense"], timeout=self.timeout,
                              **self.read_level)
        out = {}
        for row in got:
            v = np.asarray(row["dense"], dtype=np.float32)
            out[str(row["id"])] = v / (np.linalg.norm(v) or 1.0)
        return out

    def sparse_search(self, query: Mapping[int, float], filters: Filters, tenant: Any, limit: int) -> list[tuple[str, float]]:
        """``(chunk id, inner product)`` of the sparse search for one tenant (Milvus's order)."""
        hits = self._search([dict(query)], "sparse", "IP", limit, self.schema.expression(filters, tenant), {})
        return [(str(h["id"]), float(h["distance"])) for h in hits]

    def _search(self, data: list[Any], field: str, metric: str, limit: int, expr: str,
                params: dict[str, Any]) -> list[dict[str, Any]]:
        result = self.client.search(self.name, data=data, anns_field=field, limit=min(limit, 16384),
                                    filter=expr, output_fields=["id"], timeout=self.timeout,
                                    search_params={"metric_type": metric, "params": params}, **self.read_level)
        return list(result[0]) if result else []

    def server_rrf(self, query_sparse: Mapping[int, float], vector: np.ndarray, filters: Filters, tenant: Any,
                   window: int, k: int = RRF_K) -> list[tuple[str, float]]:
        """Milvus's server-side ``hybrid_search`` with ``RRFRanker(k)`` over the sparse and the dense search
        (each ``window`` long, same expression): ``(chunk id, RRF score)`` in Milvus's order."""
        from pymilvus import AnnSearchRequest, RRFRanker

        if not (self.features.hybrid and self.schema.sparse):
            raise MilvusUnavailable(f"Milvus {self.features.version} has no hybrid search over sparse vectors (2.4+)")
        expr = self.schema.expression(filters, tenant)
        requests = [
            AnnSearchRequest([dict(query_sparse)], "sparse", {"metric_type": "IP", "params": {}}, limit=window,
                             expr=expr),
            AnnSearchRequest([np.asarray(vector, dtype=np.float32).tolist()], "dense",
                             {"metric_type": "COSINE", "params": {"ef": max(self.ef_search, window)}},
                             limit=window, expr=expr),
        ]
        result = self.client.hybrid_search(self.name, requests, RRFRanker(k), limit=2 * window,
                                           output_fields=["id"], timeout=self.timeout)
        return [(str(h["id"]), float(h["distance"])) for h in result[0]]


@dataclass(frozen=True)
class MilvusSyncReport(SyncReport):
    """:class:`SyncReport` plus the rows whose only change was their tenant's BM25 statistics."""

    reweighted: int = 0
