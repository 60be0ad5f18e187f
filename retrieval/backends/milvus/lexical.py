"""The lexical side: our BM25 over the collection's sparse vectors (:class:`MilvusLexical`). Milvus ranks in
float32 and a hash collision could add a foreign token's weight, so the lexical side asks Milvus for a margin beyond
the window and rescores those candidates in float64 from their text (which also gives the per-term contributions),
then cuts the window: the list, its scores and its ``terms`` are the local engine's. A server without sparse vectors
(before 2.4) gets the local engine in the app process instead (:class:`InProcessLexical`), its reason in the
trace's ``models.bm25_engine``."""

from __future__ import annotations

import logging
import threading
from typing import Any, Callable, Sequence

from ...core.filters import Filters
from ...core.reasons import Reason, declare, raw
from ...core.text import tokenize
from ...core.types import Chunk, RankedList, ScoredItem
from ..lexical import CountFrequencies, LexicalIndex, lucene_idf
from ..reads import INTERRUPTS
from .bm25 import TenantStats, doc_weights, sparse_vector
from .collection import MilvusStore

log = logging.getLogger(__name__)

LEXICAL_FALLBACK = declare("milvus.lexical_fallback",
                           en="Milvus lexical search failed ({error}); in-process BM25 of the same chunks used",
                           pt="a busca léxica do Milvus falhou ({error}); usado o BM25 em processo dos mesmos "
                              "chunks")


class MilvusLexical:
    """:class:`retrieval.backends.lexical.Lexical` over the collection's sparse vectors (``search``, ``size``,
    ``document_frequencies``).

    Ranking, scores and ``terms`` equal the local engine's (see the module docstring). When Milvus does not
    answer at request time, the tenant's chunks are indexed in process (once, the same BM25) and the list says
    so in its note, so the request carries on (the dense side then fails and the tier is ``lexical_only``).
    """

    #: Candidates asked from Milvus beyond the window, rescored exactly (float32 ranking, hash collisions).
    MARGIN = 2.0

    def __init__(self, store: MilvusStore, chunks: Sequence[Chunk], tenant_field: str,
                 stats: dict[Any, TenantStats], fallback_engine: str = "bm25s") -> None:
        self.store, self.tenant_field, self.stats = store, tenant_field, stats
        self.engine = "milvus-sparse"
        self.chunk_by_id = {c.chunk_id: c for c in chunks}
        self._chunks = chunks
        self._fallback_engine = fallback_engine
        self._fallback: dict[Any, LexicalIndex] = {}
        self._lock = threading.Lock()
        self.last_note: Reason | None = None

    def size(self, tenant: object = None) -> int:
        s = self.stats.get(tenant)
        return s.n if s else 0

    def document_frequencies(self, tenant: object = None) -> tuple[int, Callable[[str], int]]:
        """``(chunks, token → chunks holding it)`` of ``tenant``'s statistics
        (:class:`retrieval.backends.lexical.Lexical`)."""
        s = self.stats.get(tenant)
        return (s.n, CountFrequencies(s.df)) if s else (0, CountFrequencies({}))

    def query_vector(self, tokens: Sequence[str], tenant: Any) -> dict[int, float]:
        """The query side: Lucene IDF over the tenant's chunks of each unique token the tenant holds."""
        s = self.stats.get(tenant)
        if s is None:
            return {}
        weights = {t: lucene_idf(s.n, s.df[t]) for t in dict.fromkeys(tokens) if s.df.get(t)}
        return sparse_vector(weights)

    def contributions(self, chunk: Chunk, query: Sequence[str], tenant: Any) -> dict[str, float]:
        """Per query token, its BM25 term in ``chunk`` (float64, the local engine's formula)."""
        s = self.stats[tenant]
        tokens = tokenize(chunk.indexed_text)
        weights = doc_weights(tokens, s.avgdl)
        return {t: lucene_idf(s.n, s.df[t]) * weights[t] for t in query if t in weights}

    def search(self, query_text: str, filters: Filters, window: int) -> RankedList:
        tenants = filters.get(self.tenant_field)
        keys = list(tenants) if tenants else list(self.stats)
        query = list(dict.fromkeys(tokenize(query_text)))
        found: list[tuple[float, str, ScoredItem]] = []
        note: Reason | None = None
        if query and window > 0:
            limit = int(window * self.MARGIN) + 10
            for tenant in keys:
                vector = self.query_vector(query, tenant)
                if not vector:
                    continue
                try:
                    hits = self.store.sparse_search(vector, filters, tenant, limit)
                except BaseException as exc:  # noqa: BLE001 - carried on in process, and said so (a panic too)
                    if isinstance(exc, INTERRUPTS):
                        raise
                    note = LEXICAL_FALLBACK(error=raw(f"{exc.__class__.__name__}: {str(exc)[:120]}"))
                    log.warning(note.text())
                    for item in self._local(tenant).search(query_text, filters, window).items:
                        found.append((item.score, item.chunk_id, item))
                    continue
                for cid, _ in hits:
                    chunk = self.chunk_by_id.get(cid)
                    if chunk is None or not filters.matches(chunk.metadata) \
                            or chunk.metadata.get(self.tenant_field) != tenant:
                        continue
                    terms = self.contributions(chunk, query, tenant)
                    if terms:
                        score = sum(terms.values())
                        found.append((score, cid, ScoredItem(cid, chunk.parent_id, 0, score, terms=terms)))
        found.sort(key=lambda f: (-f[0], f[1]))
        items = tuple(ScoredItem(i.chunk_id, i.parent_id, rank, i.score, terms=i.terms)
                      for rank, (_, _, i) in enumerate(found[:window], start=1))
        self.last_note = note
        return RankedList("lexical", "bm25", items, note=note)

    def _local(self, tenant: Any) -> LexicalIndex:
        with self._lock:
            if tenant not in self._fallback:
                own = [c for c in self._chunks if c.metadata.get(self.tenant_field) == tenant]
                self._fallback[tenant] = LexicalIndex(own, self.tenant_field, self._fallback_engine)
            return self._fallback[tenant]


class InProcessLexical(LexicalIndex):
    """The local engine's BM25 in the app process, for a Milvus server without sparse vectors (before 2.4):
    the same lists as the local backend; :attr:`label` (the trace's ``models.bm25_engine``) says why."""

    def __init__(self, chunks: Sequence[Chunk], tenant_field: str, engine: str, reason: str) -> None:
        super().__init__(chunks, tenant_field, engine)
        self.reason = reason
        self.label = f"{engine} in the app process ({reason})"
