"""The weighted sum of normalized scores, as ranx computes it (``ranx.fuse(runs, norm=…, method="wsum")``;
Fox and Shaw, 1994, with the normalizations of Montague and Aslam, 2001):

    min-max:  norm_r(d) = (s_r(d) − min_r) / max(max_r − min_r, 1e-9)            (in [0, 1]; 0 for every item
                                                                                 when max_r = min_r)
    z-score:  norm_r(d) = (s_r(d) − mean_r) / max(std_r, 1e-9)                  (population std; unbounded,
                                                                                 0 at the list's mean)
    sum:      norm_r(d) = (s_r(d) − min_r) / max(Σ_d s_r(d) − n_r · min_r, 1e-9) (the list sums to 1)
    score(d)  = Σ_r w_r · norm_r(d)                                                (an item absent from a list
                                                                                 adds 0)

Each list is normalized over its own window (BM25: unbounded, higher is better; dense: cosine in [-1, 1]).
The ``1e-9`` floors are ranx's. Unlike ranx, a ranker of weight 0 is dropped from the fusion (the house rule,
see :mod:`.base`); with weights above 0 the fused scores equal ``ranx.fuse``'s (a test checks to 1e-9).
``wsum_minmax`` differs from ``combsum`` only on a list whose scores are all equal (0 here, as in ranx;
1 there).
"""

from __future__ import annotations

import math
from typing import Callable, Mapping, Sequence

from ...core.kinds import Text
from ...core.types import RankedList
from .base import METHODS, FusionMethod, check_weight_names, checked_weight, fused_items, weight_note, weight_of
from .combsum import normalized_formula

#: ranx's floor on every normalization's denominator.
FLOOR = 1e-9


def min_max(scores: Sequence[float]) -> list[float]:
    """``(s − min) / max(max − min, 1e-9)`` (ranx's ``min-max``)."""
    low, high = min(scores), max(scores)
    return [(s - low) / max(high - low, FLOOR) for s in scores]


def zmuv(scores: Sequence[float]) -> list[float]:
    """``(s − mean) / max(std, 1e-9)``, population std (ranx's ``zmuv``: zero mean, unit variance)."""
    mean = math.fsum(scores) / len(scores)
    std = math.sqrt(math.fsum((s - mean) ** 2 for s in scores) / len(scores))
    return [(s - mean) / max(std, FLOOR) for s in scores]


def sum_norm(scores: Sequence[float]) -> list[float]:
    """``(s − min) / max(Σ s − n · min, 1e-9)`` (ranx's ``sum``)."""
    low = min(scores)
    return [(s - low) / max(math.fsum(scores) - low * len(scores), FLOOR) for s in scores]


#: The normalizations by ranx's name: ``name → (function, label)``.
NORMS: dict[str, Callable[[Sequence[float]], list[float]]] = {"min-max": min_max, "zmuv": zmuv, "sum": sum_norm}


def normalized(lists: Mapping[str, RankedList], norm: str, method_name: str
               ) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, int]], dict[str, str]]:
    """Each list's normalized scores ``{chunk id: {ranker: norm}}``, ranks from 1 and parents.

    Raises:
        ValueError: a plain id list (these methods need scores), or a list naming the same id twice.
    """
    norms: dict[str, dict[str, float]] = {}
    ranks: dict[str, dict[str, int]] = {}
    parent_of: dict[str, str] = {}
    for ranker, ranked in lists.items():
        if not isinstance(ranked, RankedList):
            raise ValueError(f"{method_name} needs scored lists (RankedList), not plain id lists")
        ids = [i.chunk_id for i in ranked.items]
        if len(set(ids)) != len(ids):
            raise ValueError(f"ranker '{ranker}' lists an id twice")
        if not ranked.items:
            continue
        for position, (item, value) in enumerate(zip(ranked.items, NORMS[norm]([i.score for i in ranked.items])),
                                                 start=1):
            norms.setdefault(item.chunk_id, {})[ranker] = value
            ranks.setdefault(item.chunk_id, {})[ranker] = position
            parent_of.setdefault(item.chunk_id, item.parent_id)
    return norms, ranks, parent_of


def wsum(lists: Mapping[str, RankedList], norm: str = "min-max",
         weights: Mapping[str, float] | None = None) -> RankedList:
    """The weighted sum of each list's ``norm``-normalized scores (see the module docstring).

    Args:
        lists: ranker name → its scored list (higher is better).
        norm: ``min-max``, ``zmuv`` or ``sum`` (ranx's names).
        weights: ranker name → ``w_r`` (a variant list takes its generator's; 1 when unnamed; 0 drops it).

    Returns:
        A ``RankedList`` (stage ``fused``, score kind ``wsum (<norm> normalized)``) whose ``contributions``
        are ``w_r · norm_r(d)``; ties by best single rank, then chunk id.

    Raises:
        ValueError: an unknown ``norm``, a plain id list, an id listed twice; a weight outside 0 …
            :data:`~.base.MAX_WEIGHT` (:class:`~retrieval.core.errors.InvalidSetting`).
    """
    if norm not in NORMS:
        raise ValueError(f"unknown normalization '{norm}' (use {', '.join(NORMS)})")
    weights = weights or {}
    lists, note = weight_note(lists, weights, {r: weight_of(r, weights) for r in lists})
    norms, ranks, parent_of = normalized(lists, norm, "wsum")
    w = {r: checked_weight(r, weight_of(r, weights)) for r in lists}
    contributions = {cid: {r: w[r] * v for r, v in by.items()} for cid, by in norms.items()}
    return RankedList("fused", f"wsum ({norm} normalized)", fused_items(contributions, ranks, parent_of), note)


def _declare(name: str, norm: str, label: Text, config: str) -> None:
    METHODS.declare(FusionMethod(
        name=name, fuse=lambda lists, k, weights: wsum(lists, norm, weights=weights), label=label,
        rank_based=False, check_weights=check_weight_names,
        term_weight=lambda term: weight_of(term.ranker, term.weights),
        formula=lambda term, lang: normalized_formula(term, weight_of(term.ranker, term.weights), lang),
        evaluation=(config, {"reranker_model": "none", "fusion": name}),
        tuned_weights=("", "bm25=1.0,dense=0.5", "bm25=0.5,dense=1.0")))


_declare("wsum_minmax", "min-max", Text("weighted sum (min-max normalized, ranx)", "soma ponderada (normalizada por "
                                        "mín-máx, ranx)"), "wsum-minmax")
_declare("wsum_zmuv", "zmuv", Text("weighted sum (z-score normalized, ranx)", "soma ponderada (normalizada por "
                                   "escore z, ranx)"), "wsum-zmuv")
_declare("wsum_sum", "sum", Text("weighted sum (sum normalized, ranx)", "soma ponderada (normalizada pela soma, "
                                 "ranx)"), "wsum-sum")
