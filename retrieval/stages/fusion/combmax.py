"""CombMAX (Fox and Shaw, 1994), as ranx computes it (``ranx.fuse(runs, norm="min-max", method="max")``):

    score(d) = max_r norm_r(d),   norm_r(d) = (s_r(d) − min_r) / max(max_r − min_r, 1e-9)

over the lists that hold ``d``. The item's one contribution is the list that gave the maximum (the first in
the request's order on a tie), so the contributions sum to its score; its ranks name every list that holds it.
Takes no weights.
"""

from __future__ import annotations

from typing import Mapping

from ...core.kinds import Text
from ...core.locale import number
from ...core.types import RankedList
from .base import METHODS, FusionMethod, Term, fused_items, refuses_weights
from .wsum import normalized


def combmax(lists: Mapping[str, RankedList]) -> RankedList:
    """CombMAX over min-max normalized scores (see the module docstring); score kind
    ``combmax (min-max normalized)``. Ties: best single rank, then chunk id.

    Raises:
        ValueError: a plain id list (CombMAX needs scores), or a list naming the same id twice.
    """
    norms, ranks, parent_of = normalized(lists, "min-max", "combmax")
    best = {cid: max(by.items(), key=lambda kv: kv[1]) for cid, by in norms.items()}  # first list wins a tie
    return RankedList("fused", "combmax (min-max normalized)",
                      fused_items({cid: {r: v} for cid, (r, v) in best.items()}, ranks, parent_of))


def _formula(term: Term, lang: str) -> str:
    """``max 0.8123``: the largest min-max normalized score the item has in any list (this list's)."""
    return f"max {number(term.recorded, '.4f', lang)}"


METHODS.declare(FusionMethod(
    name="combmax", fuse=lambda lists, k, weights: combmax(lists),
    label=Text("CombMAX (min-max normalized)", "CombMAX (normalizado por mín-máx)"), rank_based=False,
    check_weights=refuses_weights("combmax"), term_weight=lambda term: 1.0, formula=_formula,
    evaluation=("combmax", {"reranker_model": "none", "fusion": "combmax"}), tuned_weights=("",)))
