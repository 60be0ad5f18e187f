"""CombMNZ (Fox and Shaw, 1994) and ISR (Mourão, Martins and Magalhães, 2015), as ranx computes them
(``ranx.fuse(runs, norm="min-max", method="mnz")`` and ``ranx.fuse(runs, norm=None, method="isr")``):

    combmnz:  score(d) = n(d) · Σ_r norm_r(d),   norm_r(d) = (s_r(d) − min_r) / max(max_r − min_r, 1e-9)
    isr:      score(d) = n(d) · Σ_r 1 / rank_r(d)²                                (ranks from 1)

``n(d)`` is the number of lists that hold ``d`` (an item absent from a list adds 0 to the sum and 0 to ``n``).
Neither method takes weights. Each item's ``contributions`` are ``n(d) · norm_r(d)`` (``n(d) / rank_r(d)²``),
so they sum to its score, and the card writes each as ``n·norm``.
"""

from __future__ import annotations

from typing import Mapping

from ...core.kinds import Text
from ...core.locale import number
from ...core.types import RankedList
from .base import METHODS, FusionMethod, Term, fused_items, refuses_weights
from .wsum import normalized


def _multiplied(terms: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float]]:
    return {cid: {r: len(by) * v for r, v in by.items()} for cid, by in terms.items()}


def combmnz(lists: Mapping[str, RankedList]) -> RankedList:
    """CombMNZ over min-max normalized scores (see the module docstring); score kind
    ``combmnz (min-max normalized)``. Ties: best single rank, then chunk id.

    Raises:
        ValueError: a plain id list (CombMNZ needs scores), or a list naming the same id twice.
    """
    norms, ranks, parent_of = normalized(lists, "min-max", "combmnz")
    return RankedList("fused", "combmnz (min-max normalized)", fused_items(_multiplied(norms), ranks, parent_of))


def isr(lists: Mapping[str, RankedList]) -> RankedList:
    """Inverse square rank (see the module docstring); score kind ``isr``. Ranks are the lists' positions, from
    1. Ties: best single rank, then chunk id.

    Raises:
        ValueError: a plain id list, or a list naming the same id twice.
    """
    _, ranks, parent_of = normalized(lists, "min-max", "isr")
    inverse = {cid: {r: 1.0 / rank ** 2 for r, rank in by.items()} for cid, by in ranks.items()}
    return RankedList("fused", "isr", fused_items(_multiplied(inverse), ranks, parent_of))


def _mnz_formula(term: Term, lang: str) -> str:
    """``2·0.8123``: the number of lists holding the item times this list's min-max normalized score."""
    return f"{term.lists}·{number(term.recorded / term.lists, '.4f', lang)}"


def _isr_formula(term: Term, lang: str) -> str:
    """``2·1/3²``: the number of lists holding the item times one over this list's rank squared."""
    return f"{term.lists}·1/{term.rank}²"


METHODS.declare(FusionMethod(
    name="combmnz", fuse=lambda lists, k, weights: combmnz(lists),
    label=Text("CombMNZ (min-max normalized)", "CombMNZ (normalizado por mín-máx)"), rank_based=False,
    check_weights=refuses_weights("combmnz"), term_weight=lambda term: 1.0, formula=_mnz_formula,
    evaluation=("combmnz", {"reranker_model": "none", "fusion": "combmnz"}), tuned_weights=("",)))

METHODS.declare(FusionMethod(
    name="isr", fuse=lambda lists, k, weights: isr(lists),
    label=Text("ISR (inverse square rank)", "ISR (inverso do quadrado da posição)"), rank_based=False,
    check_weights=refuses_weights("isr"), term_weight=lambda term: 1.0, formula=_isr_formula,
    evaluation=("isr", {"reranker_model": "none", "fusion": "isr"}), tuned_weights=("",)))
