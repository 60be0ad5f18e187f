"""CombSUM over min-max normalized scores (Fox and Shaw, 1994; normalization as in Lee, 1997).

    norm_r(d) = (s_r(d) − min_r) / (max_r − min_r)      (1.0 for every item when max_r = min_r)
    score(d)  = Σ_r w_r · norm_r(d)                       (an item absent from a list adds 0)

Raw scores of different systems are never added: each list is first mapped to [0, 1] over its own window.
"""

from __future__ import annotations

from typing import Mapping

from ...core.kinds import Text
from ...core.locale import number
from ...core.types import RankedList
from .base import METHODS, FusionMethod, Term, check_weight_names, checked_weight, fused_items, weight_note, weight_of


def combsum(
    lists: Mapping[str, RankedList],
    weights: Mapping[str, float] | None = None,
) -> RankedList:
    """CombSUM over each list's min-max normalized scores (see the module docstring).

    The score kind says so (``combsum (min-max normalized)``); ``contributions`` hold ``w_r · norm_r(d)``.
    Ties: best single rank, then chunk id. A ranker of weight 0 is left out (see
    :func:`~.rrf.weighted_rrf`), and the note names it.

    Raises:
        ValueError: a plain id list (CombSUM needs scores), or a list naming the same id twice; a weight
            outside 0 … :data:`~.base.MAX_WEIGHT` (:class:`~retrieval.core.errors.InvalidSetting`).
    """
    weights = weights or {}
    lists, note = weight_note(lists, weights, {r: weight_of(r, weights) for r in lists})
    contributions: dict[str, dict[str, float]] = {}
    ranks: dict[str, dict[str, int]] = {}
    parent_of: dict[str, str] = {}
    for ranker, ranked in lists.items():
        if not isinstance(ranked, RankedList):
            raise ValueError("combsum needs scored lists (RankedList), not plain id lists")
        ids = [i.chunk_id for i in ranked.items]
        if len(set(ids)) != len(ids):
            raise ValueError(f"ranker '{ranker}' lists an id twice")
        if not ranked.items:
            continue
        scores = [i.score for i in ranked.items]
        low, high = min(scores), max(scores)
        w = checked_weight(ranker, weight_of(ranker, weights))
        for position, item in enumerate(ranked.items, start=1):
            norm = 1.0 if high == low else (item.score - low) / (high - low)
            contributions.setdefault(item.chunk_id, {})[ranker] = w * norm
            ranks.setdefault(item.chunk_id, {})[ranker] = position
            parent_of.setdefault(item.chunk_id, item.parent_id)
    return RankedList("fused", "combsum (min-max normalized)", fused_items(contributions, ranks, parent_of), note)


def normalized_formula(term: Term, weight: float, lang: str) -> str:
    """One normalized term: ``0.7·0.8123`` (the weight times the list's min-max normalized score), or the
    recorded value alone when its weight is 1."""
    if weight in (0, 1):
        return number(term.recorded, ".4f", lang)
    return f"{number(weight, 'g', lang)}·{number(term.recorded / weight, '.4f', lang)}"


METHODS.declare(FusionMethod(
    name="combsum", fuse=lambda lists, k, weights: combsum(lists, weights=weights),
    label=Text("CombSUM (min-max normalized)", "CombSUM (normalizado por mín-máx)"), rank_based=False,
    check_weights=check_weight_names,
    term_weight=lambda term: weight_of(term.ranker, term.weights),
    formula=lambda term, lang: normalized_formula(term, weight_of(term.ranker, term.weights), lang),
    evaluation=("combsum", {"reranker_model": "none", "fusion": "combsum"})))
