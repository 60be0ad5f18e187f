"""BordaFuse (Aslam and Montague, 2001), as ranx computes it (``ranx.fuse(runs, method="bordafuse")``): every
item any list holds is a candidate (``N`` of them); a list gives its item at rank ``r`` (from 1) ``N − r + 1``
points and every candidate it does not hold the same share of what is left,
``(N − n_r + 1) / 2`` (``n_r``: the list's length); an item's score is the sum of its points over the lists.

Ranks only, no scores and no weights. Each list's points are the item's contribution from it, so they sum to
its score; a list that does not hold the item contributes its share with no rank.
"""

from __future__ import annotations

from typing import Mapping

from ...core.kinds import Text
from ...core.locale import number
from ...core.types import RankedList
from .base import METHODS, FusionMethod, Term, fused_items, refuses_weights


def borda(lists: Mapping[str, RankedList]) -> RankedList:
    """BordaFuse over the lists' ranks (see the module docstring); score kind ``borda (points)``. Ties: best
    single rank, then chunk id.

    Raises:
        ValueError: a list naming the same id twice.
    """
    ranks: dict[str, dict[str, int]] = {}
    parent_of: dict[str, str] = {}
    for ranker, ranked in lists.items():
        ids = [i.chunk_id for i in ranked.items]
        if len(set(ids)) != len(ids):
            raise ValueError(f"ranker '{ranker}' lists an id twice")
        for position, item in enumerate(ranked.items, start=1):
            ranks.setdefault(item.chunk_id, {})[ranker] = position
            parent_of.setdefault(item.chunk_id, item.parent_id)
    n = len(ranks)
    points: dict[str, dict[str, float]] = {cid: {} for cid in ranks}
    for ranker, ranked in lists.items():
        unranked = (n - len(ranked.items) + 1) / 2
        for cid in ranks:
            rank = ranks[cid].get(ranker)
            points[cid][ranker] = float(n - rank + 1) if rank is not None else unranked
    return RankedList("fused", "borda (points)", fused_items(points, ranks, parent_of))


NOT_LISTED = Text("not listed", "fora da lista")


def _formula(term: Term, lang: str) -> str:
    """``12 − 3 + 1``: the candidates minus this list's rank plus one; ``4.5 (not listed)`` for a list that does not
    hold the item (its share of the points left)."""
    if term.rank is None:
        return f"{number(term.recorded, 'g', lang)} ({NOT_LISTED(lang)})"
    return f"{int(round(term.recorded)) + term.rank - 1} − {term.rank} + 1"


METHODS.declare(FusionMethod(
    name="borda", fuse=lambda lists, k, weights: borda(lists),
    label=Text("BordaFuse (rank points)", "BordaFuse (pontos por posição)"), rank_based=False,
    check_weights=refuses_weights("borda"), term_weight=lambda term: 1.0, formula=_formula,
    evaluation=("borda", {"reranker_model": "none", "fusion": "borda"}), tuned_weights=("",)))
