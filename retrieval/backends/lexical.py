"""BM25 over subchunks, one index per tenant (Robertson and Zaragoza, 2009).

Score of chunk d for query tokens q (unique):
    Σ_t idf(t) · tf(t,d) · (k1 + 1) / (tf(t,d) + k1 · (1 − b + b · |d| / avgdl)),   k1 = 1.5, b = 0.75
with Lucene's always-positive IDF, idf(t) = ln(1 + (N − n_t + 0.5) / (n_t + 0.5)), so a term in half or more
of the documents still counts. Scores: BM25, unbounded, higher is better; comparable only within one index.

Two engines rank identically: ``bm25s`` (the default: ``method="lucene"``, whose scores are multiplied by
k1 + 1 so both print the same numbers; sparse posting lists, a few ms a query at 1M chunks) and ``rank-bm25``
(``BM25Okapi`` with its IDF replaced; a Python loop over every document, about 2.3 s a query at 1M chunks).
"""

from __future__ import annotations

import logging
import math
import threading
from array import array
from collections import Counter
from typing import Any, Callable, Iterable, Mapping, Protocol, Sequence

import numpy as np

from ..core.filters import Filters, typed
from ..core.analysis import DEFAULT_ANALYZER, analyzer_function, check_analyzer
from ..core.text import tokenize
from ..core.types import Chunk, RankedList, ScoredItem

K1 = 1.5
B = 0.75


def lucene_idf(n_docs: int, doc_freq: int) -> float:
    """Lucene BM25 IDF: ``ln(1 + (N − n + 0.5) / (n + 0.5))``; positive for every ``n ≤ N``."""
    return math.log(1.0 + (n_docs - doc_freq + 0.5) / (doc_freq + 0.5))


class _Engine:
    """Scores of one tenant's chunks for a query: only the chunks with a positive score are returned.

    ``match(query) -> (positions, scores)``: positions (int array, ascending) of the chunks that contain a
    query token and their BM25 scores (float64). ``contributions(positions, query)``: per chunk, the BM25 term
    of each query token it contains (they sum to its score).
    """

    def match(self, query: list[str]) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - interface
        raise NotImplementedError

    def contributions(self, positions: np.ndarray, query: list[str]) -> list[dict[str, float]]:  # pragma: no cover
        raise NotImplementedError


class _RankBM25(_Engine):
    """rank-bm25's ``BM25Okapi`` with Lucene's IDF: a Python loop over every document per query term
    (about 2.3 s a query at 1M chunks). It keeps one term-frequency dict per document, which the
    contributions read."""

    def __init__(self, token_lists: Iterable[list[str]]) -> None:
        from rank_bm25 import BM25Okapi

        class LuceneBM25(BM25Okapi):
            """rank-bm25's BM25Okapi with Lucene's IDF instead of its floored Robertson IDF."""

            def _calc_idf(self, nd: dict[str, int]) -> None:
                self.idf = {word: lucene_idf(self.corpus_size, freq) for word, freq in nd.items()}

        self.model = LuceneBM25(list(token_lists), k1=K1, b=B)

    def match(self, query: list[str]) -> tuple[np.ndarray, np.ndarray]:
        scores = np.asarray(self.model.get_scores(query), dtype=np.float64)
        positions = np.flatnonzero(scores > 0)
        return positions, scores[positions]

    def contributions(self, positions: np.ndarray, query: list[str]) -> list[dict[str, float]]:
        m = self.model
        out = []
        for pos in positions.tolist():
            tf, norm = m.doc_freqs[pos], K1 * (1 - B + B * m.doc_len[pos] / m.avgdl)
            out.append({t: float(m.idf[t] * tf[t] * (K1 + 1) / (tf[t] + norm)) for t in query if tf.get(t)})
        return out


class _BM25S(_Engine):
    """``bm25s`` (``method="lucene"``): a sparse matrix of precomputed per-(token, chunk) BM25 terms, one
    column per token. A query reads only its tokens' posting lists (no per-document Python loop), so its
    cost follows the postings, not the corpus size; contributions are read from the same matrix. bm25s
    scores are BM25 / (k1 + 1); they are multiplied back so both engines print the same numbers."""

    def __init__(self, token_lists: Iterable[list[str]]) -> None:
        try:
            import bm25s
        except ImportError as exc:  # pragma: no cover - bm25s is in requirements.txt
            raise ImportError("RETRIEVAL_BM25_ENGINE=bm25s needs `pip install bm25s`") from exc
        logging.getLogger("bm25s").setLevel(logging.WARNING)  # bm25s sets its own logger to DEBUG
        vocab: dict[str, int] = {}
        ids = [array("i", [vocab.setdefault(t, len(vocab)) for t in tokens]) for tokens in token_lists]
        self.vocab = vocab
        self.n_docs = len(ids)
        if not vocab:
            self.indptr = np.zeros(1, dtype=np.int64)
            self.indices = np.zeros(0, dtype=np.int32)
            self.data = np.zeros(0, dtype=np.float64)
            self.upper = np.zeros(0, dtype=np.float64)
            return
        model = bm25s.BM25(method="lucene", k1=K1, b=B)
        model.index((ids, dict(vocab)), create_empty_token=False, show_progress=False)
        self.indptr = np.asarray(model.scores["indptr"], dtype=np.int64)
        self.indices = np.asarray(model.scores["indices"])
        self.data = np.asarray(model.scores["data"])
        # Postings must be sorted by chunk position for the contributions' binary search.
        for t in range(len(self.indptr) - 1):
            a, b = self.indptr[t], self.indptr[t + 1]
            if b - a > 1 and np.any(np.diff(self.indices[a:b]) < 0):
                order = np.argsort(self.indices[a:b], kind="stable")
                self.indices[a:b], self.data[a:b] = self.indices[a:b][order], self.data[a:b][order]
        # Each term's largest contribution (MaxScore's upper bound; every vocabulary term has a posting).
        self.upper = np.maximum.reduceat(self.data.astype(np.float64), self.indptr[:-1]) * (K1 + 1)

    def top(self, query: list[str], window: int, allowed: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Candidates that contain every chunk scoring within float noise of the ``window``-th best, with their
        exact scores (a superset of what :meth:`match` would let through; ``allowed`` masks chunk positions).

        MaxScore pruning (Turtle & Flood, 1995): the rarer terms are scored over their postings; when the
        common terms' summed upper bounds cannot lift an unseen chunk to the current ``window``-th partial
        score, the common terms' long postings are only probed (binary search) for the candidates instead of
        being scanned. A query made only of common terms is scored exhaustively, as :meth:`match` does.
        """
        terms = sorted((t for t in dict.fromkeys(query) if t in self.vocab),
                       key=lambda t: self.indptr[self.vocab[t] + 1] - self.indptr[self.vocab[t]])
        spans = [(int(self.indptr[self.vocab[t]]), int(self.indptr[self.vocab[t] + 1])) for t in terms]
        bounds = [float(self.upper[self.vocab[t]]) for t in terms]
        if sum(b - a for a, b in spans) > self.n_docs // 8 and window > 0:
            for split in range(1, len(terms)):
                positions, scores = self._score(spans[:split])
                if allowed is not None:
                    keep = allowed[positions]
                    positions, scores = positions[keep], scores[keep]
                if len(positions) < window:
                    continue
                threshold = np.partition(scores, len(scores) - window)[len(scores) - window]
                if sum(bounds[split:]) >= threshold * (1 - 1e-5):
                    continue  # an unseen chunk could still reach the window: score one more term fully
                for a, b in spans[split:]:  # scores is a fresh array: completed in place
                    postings = self.indices[a:b]
                    at = np.minimum(np.searchsorted(postings, positions), len(postings) - 1)
                    hit = postings[at] == positions
                    scores[hit] += self.data[a + at[hit]].astype(np.float64) * (K1 + 1)
                return positions, scores
        positions, scores = self.match(query)
        if allowed is not None:
            keep = allowed[positions]
            positions, scores = positions[keep], scores[keep]
        return positions, scores

    def _score(self, spans: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
        """Exact partial scores of the chunks in the given postings (positions ascending)."""
        if len(spans) == 1:
            a, b = spans[0]
            return self.indices[a:b].astype(np.int64), self.data[a:b].astype(np.float64) * (K1 + 1)
        docs = np.concatenate([self.indices[a:b] for a, b in spans])
        terms = np.concatenate([self.data[a:b] for a, b in spans]).astype(np.float64)
        if len(docs) > self.n_docs // 8:
            # Long postings (a term in many chunks): one dense accumulator beats sorting the postings.
            dense = np.bincount(docs, weights=terms, minlength=self.n_docs)
            positions = np.flatnonzero(dense)
            return positions, dense[positions] * (K1 + 1)
        positions, inverse = np.unique(docs, return_inverse=True)
        return positions.astype(np.int64), np.bincount(inverse, weights=terms) * (K1 + 1)

    def match(self, query: list[str]) -> tuple[np.ndarray, np.ndarray]:
        spans = [(self.indptr[self.vocab[t]], self.indptr[self.vocab[t] + 1]) for t in query if t in self.vocab]
        if not spans:
            return np.zeros(0, dtype=np.int64), np.zeros(0)
        return self._score(spans)

    def contributions(self, positions: np.ndarray, query: list[str]) -> list[dict[str, float]]:
        out: list[dict[str, float]] = [{} for _ in range(len(positions))]
        for t in query:
            if t not in self.vocab:
                continue
            a, b = self.indptr[self.vocab[t]], self.indptr[self.vocab[t] + 1]
            postings = self.indices[a:b]
            at = np.searchsorted(postings, positions)
            inside = at < len(postings)
            hit = np.zeros(len(positions), dtype=bool)
            hit[inside] = postings[at[inside]] == positions[inside]
            for j in np.flatnonzero(hit).tolist():
                out[j][t] = float(self.data[a + at[j]]) * (K1 + 1)
        return out


ENGINES: dict[str, Callable[[Iterable[list[str]]], _Engine]] = {"rank-bm25": _RankBM25, "bm25s": _BM25S}


class Lexical(Protocol):
    """What the pipeline and the learned judge read of a lexical backend, whichever holds the postings (the
    in-process :class:`LexicalIndex`, Milvus' sparse vectors: :class:`retrieval.backends.milvus.MilvusLexical`)."""

    tenant_field: str

    def size(self, tenant: object = None) -> int:
        """Chunks in ``tenant``'s index (``None``: the index of a corpus without tenants)."""
        ...

    def search(self, query_text: str, filters: Filters, window: int) -> RankedList:
        """The BM25 list of the filters' chunks (stage ``lexical``), at most ``window`` items."""
        ...

    def document_frequencies(self, tenant: object = None) -> tuple[int, Callable[[str], int]]:
        """``(chunks, token → chunks holding it)`` of ``tenant``'s index: the statistics BM25's IDF reads."""
        ...


class PostingFrequencies:
    """Document frequency from bm25s posting lists (a posting list's length)."""

    def __init__(self, vocab: Mapping[str, int], indptr: np.ndarray) -> None:
        self.vocab, self.indptr = vocab, indptr

    def __call__(self, token: str) -> int:
        v = self.vocab.get(token)
        return 0 if v is None else int(self.indptr[v + 1] - self.indptr[v])


class CountFrequencies:
    """Document frequency from a token → chunk count map."""

    def __init__(self, counts: Mapping[str, int]) -> None:
        self.counts = counts

    def __call__(self, token: str) -> int:
        return int(self.counts.get(token, 0))


class _TenantIndex:
    """One tenant's chunks, their BM25 engine, and metadata columns (built on first use) for filter masks."""

    def __init__(self, chunks: list[Chunk], engine: str, analyzer: str = DEFAULT_ANALYZER) -> None:
        self.chunks = tuple(chunks)
        self.analyzer = analyzer
        analyze = analyzer_function(analyzer)
        self.engine = ENGINES[engine](analyze(c.indexed_text) for c in chunks)
        self._columns: dict[str, tuple[np.ndarray, dict[Any, int]]] = {}
        self._masks: dict[tuple[str, tuple[Any, ...]], np.ndarray] = {}
        self._lock = threading.Lock()  # requests share the index
        self._counts: Counter[str] | None = None

    def document_frequencies(self) -> tuple[int, Callable[[str], int]]:
        """The engine's posting lists where it keeps them (bm25s), else each token's chunks counted once.

        Always over :func:`~retrieval.core.text.tokenize`'s folded tokens, whatever the analyser: the learned
        judge reads these statistics with folded tokens (its features were trained on them), so with a
        stemming analyser they are counted from the chunks once, on first use, not read from the stemmed
        postings."""
        engine = self.engine
        if isinstance(engine, _BM25S) and self.analyzer == DEFAULT_ANALYZER:
            return int(engine.n_docs), PostingFrequencies(engine.vocab, engine.indptr)
        with self._lock:
            if self._counts is None:
                self._counts = Counter(t for c in self.chunks for t in set(tokenize(c.indexed_text)))
        return len(self.chunks), CountFrequencies(self._counts)

    def column(self, key: str) -> tuple[np.ndarray, dict[Any, int]]:
        """Codes of ``key``'s value per chunk (-1 when absent) and the typed value → code map (keyed by
        :func:`retrieval.core.filters.typed`, so ``True`` and ``1`` get different codes)."""
        if key not in self._columns:
            codes: dict[Any, int] = {}
            missing = object()
            values = (c.metadata.get(key, missing) for c in self.chunks)
            column = np.fromiter((-1 if v is missing else codes.setdefault(typed(v), len(codes)) for v in values),
                                 dtype=np.int32, count=len(self.chunks))
            self._columns[key] = (column, codes)
        return self._columns[key]

    def allowed(self, positions: np.ndarray, filters: Filters, skip: str) -> np.ndarray:
        """Mask over ``positions``: the chunks that match every clause (``skip`` is the tenant field, which
        holds by construction in a tenant's own index). Each clause's mask over all chunks is computed once
        and kept (a few recent ones), so a repeated filter costs one gather."""
        mask = np.ones(len(positions), dtype=bool)
        for key, values in filters.clauses:
            if key != skip:
                mask &= self._clause_mask(key, values)[positions]
        return mask

    def mask(self, filters: Filters, skip: str) -> np.ndarray | None:
        """Mask over all of this tenant's chunks for every clause but ``skip``; ``None`` when nothing filters."""
        clauses = [(key, values) for key, values in filters.clauses if key != skip]
        if not clauses:
            return None
        mask = self._clause_mask(*clauses[0])
        for key, values in clauses[1:]:
            mask = mask & self._clause_mask(key, values)
        return mask

    def _clause_mask(self, key: str, values: tuple[Any, ...]) -> np.ndarray:
        cache_key = (key, tuple(typed(v) for v in values))
        with self._lock:
            found = self._masks.get(cache_key)
            if found is None:
                column, codes = self.column(key)
                asked = set(cache_key[1])
                # a value is wanted as itself, or (a multi-valued field's tuple) where one of its members is
                wanted = [code for (kind, value), code in codes.items()
                          if (kind, value) in asked or (kind == "tuple" and any(typed(m) in asked for m in value))]
                found = np.isin(column, wanted) if wanted else np.zeros(len(column), dtype=bool)
                if len(self._masks) >= 32:
                    self._masks.pop(next(iter(self._masks)))
                self._masks[cache_key] = found
            return found


class LexicalIndex:
    """BM25 indexes built from subchunks: one per value of ``tenant_field`` (one in all if absent).

    Rebuilt from the chunks at start-up (never pickled), so it cannot drift from the vector store. No
    per-chunk Python object is kept besides what the engine needs: filters are vectorized masks over metadata
    columns, selection uses ``np.argpartition``, and per-term contributions are computed for the returned
    chunks only.

    ``analyzer`` (:mod:`retrieval.core.analysis`: ``fold``, ``portuguese``, ``english``) makes the tokens of
    the chunks and of every query alike; with a stemming analyser the items' ``terms`` are keyed by stems.
    """

    def __init__(self, chunks: Sequence[Chunk], tenant_field: str, engine: str = "bm25s",
                 analyzer: str = DEFAULT_ANALYZER) -> None:
        if engine not in ENGINES:
            raise ValueError(f"unknown BM25 engine '{engine}' (use one of {', '.join(ENGINES)})")
        self.engine = engine
        self.analyzer = check_analyzer(analyzer)
        self._analyze = analyzer_function(analyzer)
        self.tenant_field = tenant_field
        # Keyed by the tenant's exact identity (type and value): tenants True and 1 get two indexes.
        groups: dict[tuple[str, object], list[Chunk]] = {}
        for chunk in chunks:
            groups.setdefault(typed(chunk.metadata.get(tenant_field)), []).append(chunk)
        self._indexes = {tenant: _TenantIndex(group, engine, analyzer) for tenant, group in groups.items()}

    def size(self, tenant: object = None) -> int:
        """Number of chunks in the index of ``tenant``, matched exactly in type and value (``None`` for a corpus
        without tenants)."""
        index = self._indexes.get(typed(tenant))
        return len(index.chunks) if index else 0

    def document_frequencies(self, tenant: object = None) -> tuple[int, Callable[[str], int]]:
        """``(chunks, token → chunks holding it)`` of ``tenant``'s index (:class:`Lexical`)."""
        index = self._indexes.get(typed(tenant))
        return index.document_frequencies() if index is not None else (0, CountFrequencies({}))

    def search(self, query_text: str, filters: Filters, window: int) -> RankedList:
        """Rank the chunks of the filters' tenant that match every filter.

        Args:
            query_text: the query; read by the index's analyser (:func:`retrieval.core.analysis.analyze`:
                :func:`retrieval.core.text.tokenize`, plain words stemmed unless the analyser is ``fold``).
            filters: applied before selection (a chunk outside them is never scored into the list).
            window: maximum number of items returned.

        Returns:
            A ``RankedList`` (stage ``lexical``, score kind ``bm25``); items with score 0 are never listed.
            Each item's ``score`` is the sum of its ``terms``. Ties are broken by chunk id.
        """
        tenants = filters.get(self.tenant_field)
        keys = [typed(t) for t in tenants] if tenants is not None else list(self._indexes)
        query = list(dict.fromkeys(self._analyze(query_text)))
        found: list[tuple[float, str, ScoredItem]] = []
        if query and window > 0:
            for key in keys:
                index = self._indexes.get(key)
                if index is None:
                    continue
                if isinstance(index.engine, _BM25S):  # pruned top-window candidates, filters applied inside
                    positions, scores = index.engine.top(query, window, index.mask(filters, self.tenant_field))
                    keep = scores > 0
                else:
                    positions, scores = index.engine.match(query)
                    keep = scores > 0
                    if filters.clauses:
                        keep &= index.allowed(positions, filters, self.tenant_field)
                positions, scores = positions[keep], scores[keep]
                if len(positions) > window:
                    kth = np.partition(scores, len(scores) - window)[len(scores) - window]
                    # Everything within float noise of the window's last score, so ties break by chunk id.
                    near = scores >= kth - 1e-6 * abs(kth)
                    positions, scores = positions[near], scores[near]
                for pos, terms in zip(positions.tolist(), index.engine.contributions(positions, query)):
                    if not terms:
                        continue
                    chunk = index.chunks[pos]
                    score = sum(terms.values())
                    found.append((score, chunk.chunk_id, ScoredItem(chunk.chunk_id, chunk.parent_id, 0, score,
                                                                    terms=terms)))
        found.sort(key=lambda f: (-f[0], f[1]))
        items = tuple(
            ScoredItem(i.chunk_id, i.parent_id, rank, i.score, terms=i.terms)
            for rank, (_, _, i) in enumerate(found[:window], start=1)
        )
        return RankedList("lexical", "bm25", items)
