"""Maximal Marginal Relevance (Carbonell and Goldstein, 1998) over the final candidates.

    MMR = argmax_{d ∈ R∖S} [ λ · rel(d) − (1 − λ) · max_{s ∈ S} cos(d, s) ]

``rel(d)`` is the candidate's score in the list it comes from (fused or reranked), min-max normalized to
[0, 1] (labelled normalized; 1 when all scores are equal), so λ = 1 returns the relevance order unchanged.
Similarities between candidates are cosines of their stored vectors.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from ..core.types import ScoredItem


def mmr(items: Sequence[ScoredItem], vectors: Mapping[str, np.ndarray], lam: float, k: int) -> list[ScoredItem]:
    """Select up to ``k`` items by MMR. Items without a stored vector count as dissimilar to all others.

    Raises:
        ValueError: ``lam`` outside [0, 1].
    """
    if not 0.0 <= lam <= 1.0:
        raise ValueError("MMR λ must be in [0, 1]")
    if not items:
        return []
    scores = np.array([i.score for i in items], dtype=np.float64)
    spread = scores.max() - scores.min()
    rel = (scores - scores.min()) / spread if spread > 0 else np.ones_like(scores)
    selected: list[int] = []
    remaining = list(range(len(items)))
    while remaining and len(selected) < k:
        def value(j: int) -> float:
            vj = vectors.get(items[j].chunk_id)
            if not selected or vj is None:
                redundancy = 0.0
            else:
                sims = [float(vj @ vectors[items[s].chunk_id]) for s in selected if items[s].chunk_id in vectors]
                redundancy = max(sims, default=0.0)
            return lam * rel[j] - (1 - lam) * redundancy

        best = max(remaining, key=lambda j: (value(j), -j))
        selected.append(best)
        remaining.remove(best)
    return [items[j] for j in selected]
