"""BM25 over subchunks, one index per tenant (Robertson and Zaragoza, 2009).

Score of chunk d for query tokens q (unique):
    Σ_t idf(t) · tf(t,d) · (k1 + 1) / (tf(t,d) + k1 · (1 − b + b · |d| / avgdl)),   k1 = 1.5, b = 0.75
with Lucene's always-positive IDF, idf(t) = ln(1 + (N − n_t + 0.5) / (n_t + 0.5)), so a term in half or more
of the documents still counts. Scores: BM25, unbounded, higher is better; comparable only within one index.

Two engines rank identically: ``rank-bm25`` (``BM25Okapi`` with its IDF replaced) and ``bm25s``
(``method="lucene"``, whose scores are multiplied by k1 + 1 so both print the same numbers).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from .filters import Filters
from .text import tokenize
from .types import Chunk, RankedList, ScoredItem

K1 = 1.5
B = 0.75


def lucene_idf(n_docs: int, doc_freq: int) -> float:
    """Lucene BM25 IDF: ``ln(1 + (N − n + 0.5) / (n + 0.5))``; positive for every ``n ≤ N``."""
    return math.log(1.0 + (n_docs - doc_freq + 0.5) / (doc_freq + 0.5))


def _rank_bm25_engine(corpus_tokens: list[list[str]]) -> Callable[[list[str]], np.ndarray]:
    from rank_bm25 import BM25Okapi

    class LuceneBM25(BM25Okapi):
        """rank-bm25's BM25Okapi with Lucene's IDF instead of its floored Robertson IDF."""

        def _calc_idf(self, nd: dict[str, int]) -> None:
            self.idf = {word: lucene_idf(self.corpus_size, freq) for word, freq in nd.items()}

    model = LuceneBM25(corpus_tokens, k1=K1, b=B)
    return lambda query: np.asarray(model.get_scores(query), dtype=np.float64)


def _bm25s_engine(corpus_tokens: list[list[str]]) -> Callable[[list[str]], np.ndarray]:
    try:
        import bm25s
    except ImportError as exc:  # pragma: no cover - bm25s is in requirements.txt
        raise ImportError("RETRIEVAL_BM25_ENGINE=bm25s needs `pip install bm25s`") from exc
    model = bm25s.BM25(method="lucene", k1=K1, b=B)
    model.index(corpus_tokens, show_progress=False)
    vocab = model.vocab_dict

    def score(query: list[str]) -> np.ndarray:
        known = [t for t in query if t in vocab]
        if not known:
            return np.zeros(len(corpus_tokens))
        return np.asarray(model.get_scores(known), dtype=np.float64) * (K1 + 1)

    return score


ENGINES = {"rank-bm25": _rank_bm25_engine, "bm25s": _bm25s_engine}


@dataclass(frozen=True)
class _TenantIndex:
    chunks: tuple[Chunk, ...]
    term_freqs: tuple[Counter, ...]
    lengths: np.ndarray
    avgdl: float
    idf: dict[str, float]
    score: Callable[[list[str]], np.ndarray]


class LexicalIndex:
    """BM25 indexes built from subchunks: one per value of ``tenant_field`` (one in all if absent).

    Rebuilt from the chunks at start-up (never pickled), so it cannot drift from the vector store.
    """

    def __init__(self, chunks: Sequence[Chunk], tenant_field: str, engine: str = "rank-bm25") -> None:
        if engine not in ENGINES:
            raise ValueError(f"unknown BM25 engine '{engine}' (use one of {', '.join(ENGINES)})")
        self.engine = engine
        self.tenant_field = tenant_field
        groups: dict[object, list[Chunk]] = {}
        for chunk in chunks:
            groups.setdefault(chunk.metadata.get(tenant_field), []).append(chunk)
        self._indexes = {tenant: self._build(group) for tenant, group in groups.items()}

    def _build(self, chunks: list[Chunk]) -> _TenantIndex:
        tokens = [tokenize(c.indexed_text) for c in chunks]
        freqs = tuple(Counter(t) for t in tokens)
        lengths = np.array([len(t) for t in tokens], dtype=np.float64)
        df: Counter = Counter()
        for f in freqs:
            df.update(f.keys())
        n = len(chunks)
        idf = {term: lucene_idf(n, count) for term, count in df.items()}
        return _TenantIndex(tuple(chunks), freqs, lengths, float(lengths.mean() or 1.0), idf,
                            ENGINES[self.engine](tokens))

    def size(self, tenant: object = None) -> int:
        """Number of chunks in the index of ``tenant`` (``None`` for a corpus without tenants)."""
        index = self._indexes.get(tenant)
        return len(index.chunks) if index else 0

    def contributions(self, index: _TenantIndex, position: int, query: list[str]) -> dict[str, float]:
        """Per-token BM25 terms of one chunk (they sum to its score); zero terms are left out."""
        tf, length = index.term_freqs[position], index.lengths[position]
        out = {}
        for term in query:
            f = tf.get(term, 0)
            if f:
                out[term] = float(index.idf[term] * f * (K1 + 1) / (f + K1 * (1 - B + B * length / index.avgdl)))
        return out

    def search(self, query_text: str, filters: Filters, window: int) -> RankedList:
        """Rank the chunks of the filters' tenant that match every filter.

        Args:
            query_text: the query; tokenized with :func:`retrieval.text.tokenize`.
            filters: applied before selection (a chunk outside them is never scored into the list).
            window: maximum number of items returned.

        Returns:
            A ``RankedList`` (stage ``lexical``, score kind ``bm25``); items with score 0 are never listed.
        """
        tenants = filters.get(self.tenant_field)
        keys = list(tenants) if tenants else list(self._indexes)
        query = list(dict.fromkeys(tokenize(query_text)))
        found: list[tuple[float, str, ScoredItem]] = []
        if query:
            for key in keys:
                index = self._indexes.get(key)
                if index is None:
                    continue
                scores = index.score(query)
                taken = 0
                for pos in np.argsort(-scores, kind="stable"):
                    if scores[pos] <= 0:
                        break
                    chunk = index.chunks[pos]
                    if not filters.matches(chunk.metadata):
                        continue
                    terms = self.contributions(index, int(pos), query)
                    found.append((float(scores[pos]), chunk.chunk_id,
                                  ScoredItem(chunk.chunk_id, chunk.parent_id, 0, float(scores[pos]), terms=terms)))
                    taken += 1
                    if taken >= window:
                        break
        found.sort(key=lambda f: (-f[0], f[1]))
        items = tuple(
            ScoredItem(i.chunk_id, i.parent_id, rank, i.score, terms=i.terms)
            for rank, (_, _, i) in enumerate(found[:window], start=1)
        )
        return RankedList("lexical", "bm25", items)
