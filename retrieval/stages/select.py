"""Selecting the final candidates: dedup (by parent or by chunk), the top_k cut or MMR, and what the
reranker lost (fused top_k parents that the reranked top_k no longer holds)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from ..backends.store import DenseStore, read_vectors
from ..core.types import RankedList, ScoredItem
from ..learned.reader import SCORE_KIND as READER_SCORE_KIND
from .mmr import mmr


def dedup(items: Iterable[ScoredItem], mode: str) -> list[ScoredItem]:
    """Keep the best-ranked chunk of each parent (``mode="parent"``) or each chunk once, in order."""
    seen: set[str] = set()
    out = []
    for item in items:
        key = item.parent_id if mode == "parent" else item.chunk_id
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


@dataclass(frozen=True)
class Selection:
    """The list the gate reads, and why MMR did not run when it was asked for (``None`` otherwise)."""

    items: tuple[ScoredItem, ...]
    note: str | None = None


def select(source: RankedList, mode: str, top_k: int, window: int, mmr_lambda: float | None,
           store: DenseStore | None, no_vectors: str = "no vector store") -> Selection:
    """The list the gate reads: ``source`` deduplicated, then the first ``top_k`` — or, with ``mmr_lambda``
    set, MMR's ``top_k`` over the first ``window`` (Carbonell and Goldstein, 1998), from the stored vectors.

    MMR that cannot run is never silent: without a ``store`` (``no_vectors`` says why) or when its guarded
    read fails (:func:`retrieval.backends.store.read_vectors`), the first ``top_k`` are kept and ``note`` says why.
    """
    pool = dedup(source.items, mode)
    if mmr_lambda is None:
        return Selection(tuple(pool[:top_k]))
    if store is None:
        return Selection(tuple(pool[:top_k]), f"MMR not applied ({no_vectors}): the first {top_k} kept in order")
    read = read_vectors(store, [i.chunk_id for i in pool[:window]])
    if read.value is None:
        return Selection(tuple(pool[:top_k]), f"MMR not applied ({read.reason}): the first {top_k} kept in order")
    return Selection(tuple(mmr(pool[:window], read.value, mmr_lambda, top_k)))


def lost_by_reranker(fused: RankedList, reranked: RankedList, mode: str, top_k: int,
                     reader: Mapping[str, float] | None = None) -> list[dict[str, Any]]:
    """Fused top_k parents (or chunks) that the reranked top_k no longer holds; empty when no rerank ran.

    Each entry: ``chunk_id``, ``parent_id``, ``fused_rank``, ``reranked_rank`` and ``reader``: the reader's
    score of the chunk (the reranker's own score when the reranker is the reader; what the judge read when
    it ran), ``None`` when the reader did not read it."""
    if not reranked.items:
        return []
    before = dedup(fused.items, mode)[:top_k]
    after = dedup(reranked.items, mode)[:top_k]
    key = (lambda i: i.parent_id) if mode == "parent" else (lambda i: i.chunk_id)
    kept = {key(i) for i in after}
    rerank_rank = {i.chunk_id: i.rank for i in reranked.items}
    scores = dict(reader or {})
    if reranked.score_kind == READER_SCORE_KIND:
        scores.update((i.chunk_id, i.score) for i in reranked.items)
    return [{"chunk_id": i.chunk_id, "parent_id": i.parent_id, "fused_rank": i.rank,
             "reranked_rank": rerank_rank.get(i.chunk_id),
             "reader": round(scores[i.chunk_id], 4) if i.chunk_id in scores else None}
            for i in before if key(i) not in kept]
