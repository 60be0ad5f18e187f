"""Why one chunk ranks above another in a trace (its typed view, :class:`~retrieval.pipeline.view.TraceView`): the
signal-by-signal difference between them and the signal that decided their order in the stage whose order was final
(the rerank when it ran, else the fusion; MMR when it reordered the two in the final list). Plain values and codes;
the page writes them in its language.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..pipeline.view import Item, TraceView
from .card import rrf_terms
from .grid import by_id, final_stage, grid_rows, mmr_ran


def _diff(a: float | None, b: float | None) -> float:
    return (a or 0.0) - (b or 0.0)


def why_above(trace: TraceView, a: str, b: str) -> dict[str, Any]:
    """What separates two chunks, oriented so that ``upper`` ranks above ``lower`` in the stage whose order was
    final (the rerank when it ran, else the fusion; MMR when it reordered the two in the final list).

    Returns:
        ``{"upper", "lower", "stage", "rows", "deciding"}``. ``rows`` are ``{group, signal, upper, lower, diff,
        only}`` (``diff = upper − lower``, a missing value counting 0; ``only`` is ``"upper"``/``"lower"`` for a
        BM25 term one chunk has and the other lacks), grouped ``bm25`` (total score, then each term by
        |diff|), ``dense`` (cosine), ``rrf`` (each ranker's term ``w/(k+r)``), ``share`` (each ranker's share of
        the fused score), ``rerank`` (the score, then each feature's contribution by |diff|, raw LambdaMART
        units). ``deciding`` is ``{kind, stage, signal, diff}``: ``kind`` ``feature`` (the learned ranker: the
        feature whose contribution difference is the largest in the direction of the order), ``score`` (another
        reranker: its score decided), ``rrf`` (no rerank: the ranker whose RRF term difference is the largest in
        that direction), ``tie`` (equal scores, the tie-break decided: ``signal`` names it), ``absent`` (the
        lower chunk is not in that stage's list: ``signal`` is its fate), ``mmr`` (MMR reordered the two for
        diversity) or ``unranked`` (neither is in that stage's list).

    Raises:
        ValueError: ``a == b``. KeyError: a chunk no list of the trace holds.
    """
    if a == b:
        raise ValueError("pick two different chunks")
    rows_by_id = {r["chunk_id"]: r for r in grid_rows(trace)}
    for cid in (a, b):
        if cid not in rows_by_id:
            raise KeyError(cid)
    stage = final_stage(trace)
    stage_rank = {cid: item.rank for cid, item in by_id(trace, stage).items()}
    ra, rb = stage_rank.get(a), stage_rank.get(b)
    if ra is None and rb is None:
        # Neither was in that stage: the grid's order (fused rank, then the generators') places them.
        order = [r["chunk_id"] for r in grid_rows(trace)]
        upper, lower = (a, b) if order.index(a) < order.index(b) else (b, a)
    else:
        upper, lower = (a, b) if rb is None or (ra is not None and ra < rb) else (b, a)
    up, lo = rows_by_id[upper], rows_by_id[lower]
    fused, reranked, lexical = by_id(trace, "fused"), by_id(trace, "reranked"), by_id(trace, "lexical")

    rows: list[dict[str, Any]] = []

    def add(group: str, signal: str, u: float | None, lo: float | None, only: str | None = None) -> None:
        rows.append({"group": group, "signal": signal, "upper": u, "lower": lo, "diff": _diff(u, lo), "only": only})

    add("bm25", "score", up["bm25"], lo["bm25"])
    tu, tl = _terms(lexical.get(upper)), _terms(lexical.get(lower))
    for term in sorted(set(tu) | set(tl), key=lambda t: (-abs(_diff(tu.get(t), tl.get(t))), t)):
        only = "upper" if term not in tl else ("lower" if term not in tu else None)
        add("bm25", term, tu.get(term), tl.get(term), only)
    add("dense", "cosine", up["cosine"], lo["cosine"])
    terms_u = {t["ranker"]: t["recorded"] for t in rrf_terms(trace, upper)}
    terms_l = {t["ranker"]: t["recorded"] for t in rrf_terms(trace, lower)}
    rankers = list(dict.fromkeys([*terms_u, *terms_l]))
    for ranker in rankers:
        add("rrf", ranker, terms_u.get(ranker), terms_l.get(ranker))
    for ranker in rankers:
        add("share", ranker, up["shares"].get(ranker), lo["shares"].get(ranker))
    fu, fl = _features(reranked.get(upper)), _features(reranked.get(lower))
    if upper in reranked or lower in reranked:
        add("rerank", "score", up["rerank"], lo["rerank"])
    features = [f for f in dict.fromkeys([*fu, *fl]) if f != "bias"]
    for feature in sorted(features, key=lambda f: (-abs(_diff(fu.get(f), fl.get(f))), f)):
        add("rerank", feature, fu.get(feature), fl.get(feature))

    deciding = _deciding(trace, stage, upper, lower, stage_rank, fused, reranked, rows, up, lo)
    return {"upper": upper, "lower": lower, "stage": stage, "rows": rows, "deciding": deciding}


def _terms(item: Item | None) -> dict[str, float]:
    return dict(item.terms) if item is not None else {}


def _features(item: Item | None) -> dict[str, float]:
    return dict(item.feature_contributions) if item is not None else {}


def _deciding(trace: TraceView, stage: str, upper: str, lower: str, stage_rank: Mapping[str, int],
              fused: Mapping[str, Item], reranked: Mapping[str, Item], rows: Sequence[Mapping[str, Any]],
              up: Mapping[str, Any], lo: Mapping[str, Any]) -> dict[str, Any]:
    if upper not in stage_rank and lower not in stage_rank:
        return {"kind": "unranked", "stage": stage, "signal": None, "diff": None}
    if lower not in stage_rank:
        return {"kind": "absent", "stage": stage, "signal": lo["fate"], "diff": None}
    if (mmr_ran(trace) and up["final"] is not None and lo["final"] is not None
            and up["final"] > lo["final"]):
        return {"kind": "mmr", "stage": "mmr", "signal": None, "diff": None}
    if stage == "reranked":
        su, sl = reranked[upper].score, reranked[lower].score
        if su == sl:
            return {"kind": "tie", "stage": stage, "signal": "fused_rank", "diff": 0.0}
        feats = [r for r in rows if r["group"] == "rerank" and r["signal"] != "score"]
        if feats:
            best = max(feats, key=lambda r: r["diff"])  # the first of equals: rows are by |diff|, then name
            return {"kind": "feature", "stage": stage, "signal": best["signal"], "diff": best["diff"]}
        return {"kind": "score", "stage": stage, "signal": "score", "diff": su - sl}
    if fused[upper].score == fused[lower].score:
        return {"kind": "tie", "stage": stage, "signal": "best_single_rank", "diff": 0.0}
    terms = [r for r in rows if r["group"] == "rrf"]
    best = max(terms, key=lambda r: r["diff"])
    return {"kind": "rrf", "stage": stage, "signal": best["signal"], "diff": best["diff"]}
