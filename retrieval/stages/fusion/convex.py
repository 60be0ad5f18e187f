"""The normalized convex combination of BM25 and cosine, with one weight ``w`` (of BM25):

    norm_r(d) = (s_r(d) − min_r) / (max_r − min_r)           (1.0 for every item when max_r = min_r)
    score(d)  = w · norm_bm25(d) + (1 − w) · norm_dense(d)    (an item absent from a list adds 0)

Each list is min-max normalized over its own window (BM25: unbounded, higher is better; dense: cosine in
[-1, 1]), so the score lies in [0, 1].
"""

from __future__ import annotations

import math
from typing import Mapping

from ...core.errors import InvalidSetting
from ...core.kinds import Text
from ...core.types import RankedList
from .base import METHODS, FusionMethod, Term
from .combsum import combsum, normalized_formula

#: The convex combination's weight of BM25 when ``fusion_weights`` does not name it.
CONVEX_DEFAULT_WEIGHT = 0.5


def convex_weight(weights: Mapping[str, float] | None) -> float:
    """The convex combination's one weight ``w`` (of BM25) from ``fusion_weights``: ``bm25=w``, else 0.5.

    Raises:
        InvalidSetting: a weight naming another ranker than ``bm25`` (the dense side takes ``1 − w``; a
            transform's list takes its generator's), or ``w`` outside [0, 1].
    """
    weights = weights or {}
    others = [name for name in weights if name != "bm25"]
    if others:
        raise InvalidSetting(f"fusion=convex takes one weight, bm25=w (dense gets 1 − w); got {', '.join(others)}")
    w = float(weights.get("bm25", CONVEX_DEFAULT_WEIGHT))
    if not (math.isfinite(w) and 0.0 <= w <= 1.0):
        raise InvalidSetting(f"fusion=convex: the weight bm25={w!r} must be in [0, 1]")
    return w


def convex(lists: Mapping[str, RankedList], weights: Mapping[str, float] | None = None) -> RankedList:
    """The convex combination (see the module docstring). ``w`` comes from ``fusion_weights`` as ``bm25=w``
    (default 0.5: :func:`convex_weight`); a transform's list takes its generator's weight (``bm25:rewrite`` →
    ``w``, ``dense:hyde`` → ``1 − w``). ``w = 0`` or ``1`` drops the other side from the fusion, and the note
    says so. This is :func:`~.combsum.combsum` with the weights ``{bm25: w, dense: 1 − w}`` (same ties,
    contributions ``w_r · norm_r(d)``); score kind ``convex (min-max normalized, w=…)``.

    Raises:
        InvalidSetting: see :func:`convex_weight`; ValueError: as :func:`~.combsum.combsum`.
    """
    w = convex_weight(weights)
    fused = combsum(lists, weights={"bm25": w, "dense": 1.0 - w})
    return RankedList("fused", f"convex (min-max normalized, w={w:g})", fused.items, fused.note)


def _check(weights: Mapping[str, float]) -> None:
    convex_weight(weights)  # one weight, bm25=w in [0, 1]


def _side_weight(term: Term) -> float:
    w = convex_weight(term.weights)
    return w if term.ranker.split(":", 1)[0] == "bm25" else 1.0 - w


METHODS.declare(FusionMethod(
    name="convex", fuse=lambda lists, k, weights: convex(lists, weights=weights),
    label=Text("convex combination (min-max normalized)", "combinação convexa (normalizada por mín-máx)"),
    rank_based=False, check_weights=_check,
    term_weight=_side_weight,
    formula=lambda term, lang: normalized_formula(term, _side_weight(term), lang),
    tuned_weights=("bm25=0.3", "bm25=0.5", "bm25=0.7")))
