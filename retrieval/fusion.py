"""Reciprocal Rank Fusion (Cormack, Clarke and Büttcher, 2009).

    score(d) = Σ_r w_r / (k + rank_r(d)),   ranks start at 1, k = ``rrf_k`` (60 by default)

Fusion runs over the generators' whole windows, never lists already cut to top_k. An item found by several
rankers appears once with one contribution per ranker. Ties are broken by the best rank the item got in any
single list, then by chunk id. Inputs are never mutated.
"""

from __future__ import annotations

import math
from typing import Mapping

from .types import RankedList, ScoredItem


def rrf(
    lists: Mapping[str, RankedList | list[str]],
    k: int = 60,
    weights: Mapping[str, float] | None = None,
    parents: Mapping[str, str] | None = None,
) -> RankedList:
    """Fuse ranked lists by RRF.

    Args:
        lists: ranker name → its ranked list (a ``RankedList`` or a plain list of ids, best first).
        k: the RRF constant (> 0).
        weights: optional ranker name → weight ``w_r`` (1.0 when absent).
        parents: chunk id → parent id, for plain id lists (defaults to the id itself).

    Returns:
        A ``RankedList`` (stage ``fused``, score kind ``rrf``) whose items carry ``contributions`` and
        ``ranks`` per ranker.

    Raises:
        ValueError: ``k`` ≤ 0, or a list that names the same id twice.
    """
    if k <= 0:
        raise ValueError("rrf_k must be positive")
    weights = weights or {}
    contributions: dict[str, dict[str, float]] = {}
    ranks: dict[str, dict[str, int]] = {}
    parent_of: dict[str, str] = {}
    for ranker, ranked in lists.items():
        if isinstance(ranked, RankedList):
            entries = [(item.chunk_id, item.parent_id) for item in ranked.items]
        else:
            entries = [(cid, (parents or {}).get(cid, cid)) for cid in ranked]
        ids = [cid for cid, _ in entries]
        if len(set(ids)) != len(ids):
            raise ValueError(f"ranker '{ranker}' lists an id twice")
        w = float(weights.get(ranker, 1.0))
        for position, (cid, parent) in enumerate(entries, start=1):
            contributions.setdefault(cid, {})[ranker] = w / (k + position)
            ranks.setdefault(cid, {})[ranker] = position
            parent_of.setdefault(cid, parent)
    order = sorted(contributions, key=lambda cid: (-math.fsum(contributions[cid].values()), min(ranks[cid].values()), cid))
    items = tuple(
        ScoredItem(cid, parent_of[cid], rank, math.fsum(contributions[cid].values()),
                   contributions=dict(contributions[cid]), ranks=dict(ranks[cid]))
        for rank, cid in enumerate(order, start=1)
    )
    return RankedList("fused", "rrf", items)
