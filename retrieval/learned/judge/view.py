"""What the judge reads of a request: the tenant's BM25 statistics, the token views of the corpus' chunks and
parents (computed once per chunk and kept) and the frozen :class:`JudgeInput` that holds them with the
generators' lists."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from ...ingest.chunking import document_text
from ...backends.lexical import Lexical, lucene_idf
from ...core.codes import codes
from ...core.text import fold, tokenize, whole_sentences
from ...core.types import Chunk, Document, RankedList
from .words import word_forms


# -- tenant statistics -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class TenantStats:
    """A tenant's BM25 statistics: number of subchunks and document frequency per token."""

    n_docs: int
    doc_freq: Callable[[str], int]

    def idf(self, token: str) -> float:
        """Lucene BM25 IDF of ``token`` (the largest value when the token is not in the index)."""
        return lucene_idf(max(self.n_docs, 1), min(self.doc_freq(token), max(self.n_docs, 1)))

    @property
    def max_idf(self) -> float:
        """IDF of a token absent from the index: the normalizer of ``focus_missing``."""
        return lucene_idf(max(self.n_docs, 1), 0)


def tenant_stats(lexical: Lexical, tenant: Any = None) -> TenantStats:
    """The BM25 statistics of ``tenant``'s index (``None``: the index of a corpus without tenants), from the
    lexical backend's own :meth:`~retrieval.backends.lexical.Lexical.document_frequencies`."""
    n_docs, doc_freq = lexical.document_frequencies(tenant)
    return TenantStats(n_docs, doc_freq)


def stats_without(stats: TenantStats, chunks: Sequence[Chunk]) -> TenantStats:
    """``stats`` of the same index with ``chunks`` taken out (what the tenant's index would hold without
    them): used by leave-the-evidence-out cases, so a token found only in the removed evidence is unseen."""
    removed = Counter(t for c in chunks for t in set(tokenize(c.indexed_text)))
    return TenantStats(max(stats.n_docs - len(chunks), 0), _MinusDF(stats.doc_freq, removed))


class _MinusDF:
    """Document frequency of a base index minus the chunks taken out."""

    def __init__(self, base: Callable[[str], int], removed: Mapping[str, int]) -> None:
        self.base, self.removed = base, removed

    def __call__(self, token: str) -> int:
        return max(self.base(token) - int(self.removed.get(token, 0)), 0)


# -- text views (cached per corpus) ----------------------------------------------------------------------
@dataclass
class TextView:
    """Token views of a corpus' chunks and parents, computed once per chunk and kept (the same candidates
    come back request after request)."""

    chunks: Mapping[str, Chunk]
    documents: Mapping[str, Document]
    _chunk_tokens: dict[str, list[str]] = field(default_factory=dict)
    _chunk_sets: dict[str, frozenset[str]] = field(default_factory=dict)
    _parent_sets: dict[str, frozenset[str]] = field(default_factory=dict)
    _title_sets: dict[str, frozenset[str]] = field(default_factory=dict)
    _codes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    _folded: dict[str, str] = field(default_factory=dict)
    _sentences: dict[str, tuple[tuple[str, list[str], str], ...]] = field(default_factory=dict)
    _stems: dict[str, frozenset[str]] = field(default_factory=dict)

    @classmethod
    def build(cls, chunks: Iterable[Chunk], documents: Iterable[Document]) -> "TextView":
        return cls({c.chunk_id: c for c in chunks}, {d.id: d for d in documents})

    def tokens(self, chunk_id: str) -> list[str]:
        found = self._chunk_tokens.get(chunk_id)
        if found is None:
            found = self._chunk_tokens[chunk_id] = tokenize(self.chunks[chunk_id].indexed_text)
        return found

    def token_set(self, chunk_id: str) -> frozenset[str]:
        found = self._chunk_sets.get(chunk_id)
        if found is None:
            found = self._chunk_sets[chunk_id] = frozenset(self.tokens(chunk_id))
        return found

    def parent_set(self, parent_id: str) -> frozenset[str]:
        found = self._parent_sets.get(parent_id)
        if found is None:
            doc = self.documents.get(parent_id)
            text = f"{doc.title}\n{document_text(doc)}" if doc else ""  # a Markdown parent as plain text
            found = self._parent_sets[parent_id] = frozenset(tokenize(text))
        return found

    def title_set(self, parent_id: str) -> frozenset[str]:
        found = self._title_sets.get(parent_id)
        if found is None:
            doc = self.documents.get(parent_id)
            found = self._title_sets[parent_id] = frozenset(tokenize(doc.title if doc else ""))
        return found

    def folded(self, chunk_id: str) -> str:
        found = self._folded.get(chunk_id)
        if found is None:
            found = self._folded[chunk_id] = fold(self.chunks[chunk_id].indexed_text)
        return found

    def codes(self, chunk_id: str) -> tuple[str, ...]:
        found = self._codes.get(chunk_id)
        if found is None:
            found = self._codes[chunk_id] = tuple(c.casefold() for c in codes(self.chunks[chunk_id].indexed_text))
        return found

    def stem_set(self, chunk_id: str) -> frozenset[str]:
        """The chunk's folded tokens, their Snowball stems and seven-letter prefixes (see :func:`holds`)."""
        found = self._stems.get(chunk_id)
        if found is None:
            found = self._stems[chunk_id] = word_forms(self.chunks[chunk_id].indexed_text)
        return found

    def sentences(self, chunk_id: str) -> tuple[tuple[str, list[str], str], ...]:
        """The chunk's text sentences as ``(sentence, tokens, folded sentence)``."""
        found = self._sentences.get(chunk_id)
        if found is None:
            found = self._sentences[chunk_id] = tuple(
                (s, tokenize(s), fold(s)) for s in whole_sentences(self.chunks[chunk_id].text))
        return found


# -- the frozen input --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class JudgeInput:
    """What one request hands the judge (nothing in it is recomputed by the judge).

    Attributes:
        question: the validated question.
        lexical, dense, fused: the generators' windows and their fusion, as the pipeline built them.
        q_vec: the query vector (unit norm), or ``None`` in ``lexical_only``.
        vectors: stored unit vectors of (at least) the candidates that the dense list lacks.
        view: token views of the corpus' chunks and parents.
        stats: the tenant's BM25 statistics.
        reader: the reader's score (MaxSim, :mod:`retrieval.learned.reader.interaction`) of (at least) the window's
            candidates, by chunk id; ``None`` where it did not run (its features are then 0; the judge's
            stages never run without it, see :func:`retrieval.stages.judge.judge_input`).
        reader_sentences: the reader's score of each whole sentence of those chunks, in sentence order
            (:meth:`~retrieval.learned.reader.interaction.MaxSimReader.read`), by chunk id.
    """

    question: str
    lexical: RankedList
    dense: RankedList
    fused: RankedList
    q_vec: np.ndarray | None
    vectors: Mapping[str, np.ndarray]
    view: TextView
    stats: TenantStats
    reader: Mapping[str, float] | None = None
    reader_sentences: Mapping[str, tuple[float, ...]] | None = None
