"""Selecting the final candidates: dedup (by parent or by chunk), the top_k cut or MMR, and what the
reranker lost (fused top_k parents that the reranked top_k no longer holds).

When the reranked window holds fewer than ``top_k`` parents (a ``top_k`` above the rerank window, or a window of
few parents), the list goes on with the **fused tail**: the fused items the reranker did not read, in fused
order, each marked ``fused_tail`` and counted in the selection's note. A ``top_k`` is never cut to the window
without a word.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Iterable, Mapping, Sequence

from ..backends.reads import NO_STORE, DenseStore, read_vectors
from ..core.reasons import Reason, declare
from ..core.types import Chunk, FinalItem, RankedList, ScoredItem
from ..learned.reader import SCORE_KIND as READER_SCORE_KIND
from .mmr import mmr

MMR_NOT_APPLIED = declare("select.mmr_not_applied", en="MMR not applied ({why}): the first {top_k} kept in order",
                          pt="MMR não aplicado ({why}): os primeiros {top_k} mantidos em ordem")
FUSED_TAIL = declare("select.fused_tail",
                     en="the reranked window ({window} chunks) held {held} of the top_k={top_k}: {n} more from the "
                        "fused list after it, in fused order",
                     pt="a janela reranqueada ({window} trechos) tinha {held} do top_k={top_k}: mais {n} da lista da "
                        "fusão depois dela, na ordem da fusão")
BOTH = declare("select.notes", en="{first}; {second}", pt="{first}; {second}")
SIBLINGS = declare("select.siblings",
                   en="{n} more chunk(s) of the final documents added to the answer's context after the final "
                      "chunks (context_siblings={per_parent}: dedup keeps one chunk per document in the final list)",
                   pt="mais {n} trecho(s) dos documentos finais no contexto da resposta, depois dos trechos finais "
                      "(context_siblings={per_parent}: a deduplicação mantém um trecho por documento na lista final)")


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


def head(source: RankedList, tail: RankedList | None, mode: str, size: int) -> tuple[list[ScoredItem], int]:
    """The first ``size`` deduplicated items of ``source``, filled up from ``tail``'s items that ``source`` does
    not hold (in their order, each marked ``fused_tail``, keeping its fused rank) when ``source`` has fewer;
    and how many came from the tail."""
    pool = dedup(source.items, mode)[:size]
    if tail is None or len(pool) >= size:
        return pool, 0
    held = {i.chunk_id for i in source.items}
    extra = [replace(i, fused_rank=i.rank, fused_tail=True) for i in tail.items if i.chunk_id not in held]
    filled = dedup(pool + extra, mode)[:size]
    return filled, len(filled) - len(pool)


@dataclass(frozen=True)
class Selection:
    """The list the gate reads, and what the selection did other than asked (``None`` otherwise): MMR that
    could not run, items taken from the fused tail."""

    items: tuple[ScoredItem, ...]
    note: Reason | None = None


def select(source: RankedList, mode: str, top_k: int, window: int, mmr_lambda: float | None,
           store: DenseStore | None, no_vectors: Reason | None = None, tail: RankedList | None = None) -> Selection:
    """The list the gate reads: ``source`` deduplicated, then the first ``top_k`` — or, with ``mmr_lambda``
    set, MMR's ``top_k`` over the first ``window`` (Carbonell and Goldstein, 1998), from the stored vectors.

    ``tail`` (the fused list, when ``source`` is the reranked window) fills the list up to ``top_k`` when the
    window holds fewer (see the module docstring); the note says how many.

    MMR that cannot run is never silent: without a ``store`` (``no_vectors`` says why) or when its guarded
    read fails (:func:`retrieval.backends.reads.read_vectors`), the first ``top_k`` are kept and ``note`` says why.
    """
    first, from_tail = head(source, tail, mode, top_k)
    tail_note = (FUSED_TAIL(window=len(source.items), held=len(first) - from_tail, top_k=top_k, n=from_tail)
                 if from_tail else None)
    if mmr_lambda is None:
        return Selection(tuple(first), tail_note)
    pool = dedup(source.items, mode)[:window]
    if len(pool) < top_k:  # the window holds fewer than top_k: MMR picks among them and the fused tail
        pool = first
    if store is None:
        return Selection(tuple(first), _join(MMR_NOT_APPLIED(why=no_vectors or NO_STORE(), top_k=top_k), tail_note))
    read = read_vectors(store, [i.chunk_id for i in pool])
    if read.value is None:
        return Selection(tuple(first), _join(MMR_NOT_APPLIED(why=read.reason, top_k=top_k), tail_note))
    picked = tuple(mmr(pool, read.value, mmr_lambda, top_k))
    return Selection(picked, tail_note if any(i.fused_tail for i in picked) else None)


def _join(first: Reason, second: Reason | None) -> Reason:
    return first if second is None else BOTH(first=first, second=second)


def lost_by_reranker(fused: RankedList, reranked: RankedList, mode: str, top_k: int,
                     reader: Mapping[str, float] | None = None) -> list[dict[str, Any]]:
    """Fused top_k parents (or chunks) that the reranked top_k (filled from the fused tail, as the selection
    does) no longer holds; empty when no rerank ran.

    Each entry: ``chunk_id``, ``parent_id``, ``fused_rank``, ``reranked_rank`` and ``reader``: the reader's
    score of the chunk (the reranker's own score when the reranker is the reader; what the judge read when
    it ran), ``None`` when the reader did not read it."""
    if not reranked.items:
        return []
    before = dedup(fused.items, mode)[:top_k]
    after, _ = head(reranked, fused, mode, top_k)
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


def siblings(final: Sequence[FinalItem], source: RankedList, chunks: Mapping[str, Chunk], per_parent: int,
             dense: RankedList, lexical: RankedList) -> tuple[FinalItem, ...]:
    """The other chunks of the final documents that ``source`` ranked (the reranked window, else the fused list:
    what the request found relevant and dedup by parent removed), at most ``per_parent`` per document, in
    ``source``'s order: the answer's context carries them after the final chunks, so a document's chunk that
    holds the answer is not lost to the one that ranked first. Each goes on the final list's ranks and names its
    document's final chunk (``sibling_of``); its cosine is the dense list's (``None`` when dense did not list
    it), its BM25 the lexical list's. Empty when ``per_parent`` is 0 or nothing is final.
    """
    if per_parent <= 0 or not final:
        return ()
    rank_of = {f.parent_id: f.rank for f in final}
    held = {f.chunk_id for f in final}
    cosine = {i.chunk_id: i.score for i in dense.items}
    bm25 = {i.chunk_id: i.score for i in lexical.items}
    taken: dict[str, int] = {}
    out: list[FinalItem] = []
    for item in source.items:
        parent = item.parent_id
        if parent not in rank_of or item.chunk_id in held or taken.get(parent, 0) >= per_parent:
            continue
        taken[parent] = taken.get(parent, 0) + 1
        out.append(FinalItem(item.chunk_id, parent, len(final) + len(out) + 1, item.score,
                             cosine.get(item.chunk_id), chunks[item.chunk_id].text, bm25.get(item.chunk_id),
                             sibling_of=rank_of[parent]))
    return tuple(out)
