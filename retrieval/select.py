"""Selecting the final candidates: dedup (by parent or by chunk), the top_k cut or MMR, and what the
reranker lost (fused top_k parents that the reranked top_k no longer holds)."""

from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from .mmr import mmr
from .types import RankedList, ScoredItem


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


def select(source: RankedList, mode: str, top_k: int, window: int, mmr_lambda: float | None,
           vectors: Callable[[Sequence[str]], Mapping[str, np.ndarray]] | None) -> tuple[ScoredItem, ...]:
    """The list the gate reads: ``source`` deduplicated, then the first ``top_k`` — or, with ``mmr_lambda``
    set and stored vectors available (``vectors`` not ``None``), MMR's ``top_k`` over the first ``window``."""
    pool = dedup(source.items, mode)
    if mmr_lambda is not None and vectors is not None:
        return tuple(mmr(pool[:window], vectors([i.chunk_id for i in pool[:window]]), mmr_lambda, top_k))
    return tuple(pool[:top_k])


def lost_by_reranker(fused: RankedList, reranked: RankedList, mode: str, top_k: int) -> list[dict[str, Any]]:
    """Fused top_k parents (or chunks) that the reranked top_k no longer holds; empty when no rerank ran."""
    if not reranked.items:
        return []
    before = dedup(fused.items, mode)[:top_k]
    after = dedup(reranked.items, mode)[:top_k]
    key = (lambda i: i.parent_id) if mode == "parent" else (lambda i: i.chunk_id)
    kept = {key(i) for i in after}
    rerank_rank = {i.chunk_id: i.rank for i in reranked.items}
    return [{"chunk_id": i.chunk_id, "parent_id": i.parent_id, "fused_rank": i.rank,
             "reranked_rank": rerank_rank.get(i.chunk_id)} for i in before if key(i) not in kept]
