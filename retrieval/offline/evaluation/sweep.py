"""Top-k sweep: how recall and redundancy of the final list move with k (the lab's "vary k" step).

The sweep reads the final list *before* the gate, deduplicated by chunk (``dedup="chunk"``), so repeated
evidence stays visible. For k = 1 … K:

    recall@k      = |relevant parents ∩ parents of the first k items| / |relevant parents|
                    (answerable questions only; the mean over them)
    redundancy@k  = (items among the first k that are redundant) / (items among the first k)
                    (questions with at least one item; the mean over them)

An item is **redundant** when an earlier item of the list has the same parent document, or is a near
duplicate of it: cosine similarity of the two chunks' stored vectors ≥ ``cosine_threshold`` (0.95). When a
chunk has no stored vector (no dense store), token Jaccard similarity ≥ ``jaccard_threshold`` (0.8) decides
instead; the result names the rule it used.

This top-k is the retrieval cut (how many chunks reach the answer). It is not a generation sampling
parameter (an LLM's top-k / top-p token sampling), which this workbench never sets.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from ...backends.reads import read_vectors
from ...core.text import tokenize

COSINE_RULE = "cosine of stored vectors ≥ {threshold}"
JACCARD_RULE = "token Jaccard ≥ {threshold}"


@dataclass(frozen=True)
class SweepItem:
    """One final-list entry: its chunk, parent, and (when stored) its L2-normalized vector and text."""

    chunk_id: str
    parent_id: str
    vector: np.ndarray | None = None
    text: str = ""


def jaccard(a: str, b: str) -> float:
    """Token Jaccard |A ∩ B| / |A ∪ B| over the BM25 tokenizer's token sets (1.0 for two empty texts)."""
    x, y = set(tokenize(a)), set(tokenize(b))
    return 1.0 if not x and not y else len(x & y) / len(x | y)


def redundancy_flags(items: Sequence[SweepItem], cosine_threshold: float = 0.95,
                     jaccard_threshold: float = 0.8) -> list[bool]:
    """For each item, True when an earlier item shares its parent or is a near duplicate of it."""
    flags = []
    for i, item in enumerate(items):
        redundant = False
        for earlier in items[:i]:
            if earlier.parent_id == item.parent_id:
                redundant = True
            elif item.vector is not None and earlier.vector is not None:
                redundant = float(item.vector @ earlier.vector) >= cosine_threshold
            else:
                redundant = jaccard(item.text, earlier.text) >= jaccard_threshold
            if redundant:
                break
        flags.append(redundant)
    return flags


def sweep_points(lists: Mapping[str, Sequence[SweepItem]], relevant: Mapping[str, Sequence[str]],
                 max_k: int = 20, cosine_threshold: float = 0.95, jaccard_threshold: float = 0.8) -> list[dict[str, Any]]:
    """Recall@k and redundancy@k for k = 1 … ``max_k``.

    Args:
        lists: question id → its final list (best first, chunk-level, before the gate).
        relevant: question id → relevant parent ids (empty: unanswerable, left out of recall).

    Returns:
        ``[{"k", "recall", "redundancy", "items_mean"}]``; a value with nothing to average is ``None``.
    """
    flags = {qid: redundancy_flags(items, cosine_threshold, jaccard_threshold) for qid, items in lists.items()}
    points = []
    for k in range(1, max_k + 1):
        recalls, redundancies, sizes = [], [], []
        for qid, items in lists.items():
            head = items[:k]
            sizes.append(len(head))
            rel = set(relevant.get(qid) or ())
            if rel:
                recalls.append(len(rel & {i.parent_id for i in head}) / len(rel))
            if head:
                redundancies.append(sum(flags[qid][:k]) / len(head))
        points.append({"k": k,
                       "recall": round(statistics.fmean(recalls), 4) if recalls else None,
                       "redundancy": round(statistics.fmean(redundancies), 4) if redundancies else None,
                       "items_mean": round(statistics.fmean(sizes), 2) if sizes else None})
    return points


def run_sweep(bench: Any, questions: Sequence[Any], settings: Any, max_k: int = 20,
              cosine_threshold: float = 0.95, jaccard_threshold: float = 0.8) -> dict[str, Any]:
    """Ask every question once with ``top_k = max_k`` and ``dedup="chunk"``, then sweep k = 1 … max_k.

    Returns:
        ``{"max_k", "dedup", "near_duplicate", "questions", "points"}``; ``near_duplicate`` names the rule
        (cosine of stored vectors when the store holds them, else token Jaccard).
    """
    s = settings.with_overrides(top_k=max_k, dedup="chunk")
    state = bench.state
    lists: dict[str, list[SweepItem]] = {}
    used_cosine = False
    for q in questions:
        trace = bench.ask(q.question, q.filters, settings=s)
        top = trace.selected  # the list the pipeline kept (MMR included), chunk-level
        vectors = read_vectors(state.store, [i.chunk_id for i in top]).value or {}  # guarded: Jaccard if it fails
        used_cosine = used_cosine or bool(vectors)
        items = []
        for i in top:
            v = vectors.get(i.chunk_id)
            if v is not None:
                v = v / (np.linalg.norm(v) or 1.0)
            items.append(SweepItem(i.chunk_id, i.parent_id, v, state.chunk_by_id[i.chunk_id].text))
        lists[q.id] = items
    rule = (COSINE_RULE.format(threshold=cosine_threshold) if used_cosine
            else JACCARD_RULE.format(threshold=jaccard_threshold))
    return {"max_k": max_k, "dedup": "chunk", "near_duplicate": f"same parent, or {rule}",
            "questions": len(lists),
            "points": sweep_points(lists, {q.id: q.relevant for q in questions}, max_k, cosine_threshold,
                                   jaccard_threshold)}
