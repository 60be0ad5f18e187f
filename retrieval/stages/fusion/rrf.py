"""Reciprocal Rank Fusion (Cormack, Clarke and Büttcher, 2009) and its weighted form.

    rrf:           score(d) = Σ_r 1 / (k + rank_r(d))
    weighted_rrf:  score(d) = Σ_r w_r / (k + rank_r(d))

Ranks start at 1; ``k`` is the request's ``rrf_k`` (60 by default). An item absent from a list adds nothing.
"""

from __future__ import annotations

from typing import Mapping

from ...core.defaults import RRF_K
from ...core.kinds import Text
from ...core.types import RankedList
from .base import (METHODS, FusionMethod, Term, check_weight_names, checked_weight, fused_items, rank_formula,
                   refuses_weights, weight_note, weight_of)


def rrf(
    lists: Mapping[str, RankedList | list[str]],
    k: int = RRF_K,
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
        ValueError: ``k`` ≤ 0, or a list that names the same id twice; a weight that is not a finite number
            from 0 to :data:`~.base.MAX_WEIGHT` (:class:`~retrieval.core.errors.InvalidSetting`, a ``ValueError``).
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
        w = checked_weight(ranker, weights.get(ranker, 1.0))
        for position, (cid, parent) in enumerate(entries, start=1):
            contributions.setdefault(cid, {})[ranker] = w / (k + position)
            ranks.setdefault(cid, {})[ranker] = position
            parent_of.setdefault(cid, parent)
    return RankedList("fused", "rrf", fused_items(contributions, ranks, parent_of))


def weighted_rrf(
    lists: Mapping[str, RankedList | list[str]],
    k: int = RRF_K,
    weights: Mapping[str, float] | None = None,
    parents: Mapping[str, str] | None = None,
) -> RankedList:
    """RRF with one weight per ranker: score(d) = Σ_r w_r / (k + rank_r(d)), ranks from 1.

    A ranker named ``bm25:rewrite`` takes the weight of ``bm25`` unless it is named itself; an unnamed
    ranker weighs 1. A ranker of weight 0 is left out of the fusion entirely (its items are not listed, and
    do not order the others), and the list's note names it. Same ties, same output as :func:`rrf` (score
    kind ``weighted rrf``).
    """
    weights = weights or {}
    resolved = {ranker: weight_of(ranker, weights) for ranker in lists}
    kept, note = weight_note(lists, weights, resolved)
    fused = rrf(kept, k=k, weights=resolved, parents=parents)
    return RankedList("fused", "weighted rrf", fused.items, note)


#: Plain RRF takes no weights: any weight is refused, naming the methods that take them.
_no_weights = refuses_weights("plain rrf")


def _recorded_weight(term: Term) -> float:
    """A weighted RRF term's weight, read back from what it recorded (``w / (k + rank)`` times ``k + rank``); 1
    for a term without a rank."""
    return round(term.recorded * (term.k + term.rank), 6) if term.rank is not None else 1.0


METHODS.declare(FusionMethod(
    name="rrf", fuse=lambda lists, k, weights: rrf(lists, k=k),
    label=Text("RRF", "RRF"), rank_based=True, check_weights=_no_weights,
    term_weight=lambda term: 1.0,
    formula=lambda term, lang: rank_formula(1.0, term.k, term.rank, lang),
    tuned_weights=("",)))

METHODS.declare(FusionMethod(
    name="weighted_rrf", fuse=lambda lists, k, weights: weighted_rrf(lists, k=k, weights=weights),
    label=Text("weighted RRF", "RRF ponderado"), rank_based=True, check_weights=check_weight_names,
    term_weight=_recorded_weight,
    formula=lambda term, lang: rank_formula(_recorded_weight(term), term.k, term.rank, lang),
    evaluation=("weighted-rrf", {"reranker_model": "none", "fusion": "weighted_rrf",
                                 "fusion_weights": "bm25=1.0,dense=0.5"}),
    tuned_weights=("bm25=1.0,dense=0.5", "bm25=0.5,dense=1.0")))
