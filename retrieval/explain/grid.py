"""The analyst's views over one trace dict: the rank grid, one chunk's provenance, and why one chunk ranks
above another.

* :func:`grid_rows` — one row per chunk found by any list (the union of ``lexical``, ``dense``, ``fused`` and
  ``reranked``): its rank and score in each, its RRF shares, its move in the rerank, and its final position or
  why it was cut before the answer (:data:`FATES`).
* :func:`rrf_terms` and :func:`provenance` — every signal of one chunk: BM25 per term, cosine, the RRF terms
  ``w / (k + r)`` per list (Cormack, Clarke and Büttcher, 2009; ranks from 1, ``k`` the request's ``rrf_k``),
  the reranker's score and, for the learned ranker, each feature's contribution (raw LambdaMART units: they
  sum, with the bias, to the score; not a probability), and the gate's decision.
* :func:`why_above` — the signal-by-signal difference between two chunks and the signal that decided their
  order in the stage whose order was final (the rerank when it ran, else the fusion).

Like :mod:`retrieval.explain.views`, everything reads the JSON-shaped dict of ``Trace.to_dict()``, returns plain
values, never re-scores and never imports streamlit. Texts shown to people are the interface's (``ui/``): this
module returns codes and numbers.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from .views import relevance_of

#: Why a chunk of the grid is not in the final list (``fate``), in pipeline order; ``final`` when it is.
#:
#: * ``not_fused`` — a generator found it but the fusion did not take that list (a weight of 0, a decomposed
#:   question fusing its parts);
#: * ``window`` — fused, but ranked below the reranker's window (``reranker_max_input``), so never reranked;
#: * ``dedup`` — another chunk of its parent ranked better (dedup by parent); ``fate_detail["kept"]`` names it;
#: * ``top_k`` — deduplicated but below the first ``top_k``;
#: * ``mmr`` — not picked by MMR among the first candidates;
#: * ``gate`` — read by the gate and refused (its cosine, or BM25, below the threshold; or the whole request
#:   refused by the code identity or the learned support gate: ``fate_detail["reason"]``).
FATES = ("final", "not_fused", "window", "dedup", "top_k", "mmr", "gate")

_LISTS = ("lexical", "dense", "fused", "reranked")


def _items(trace: Mapping[str, Any], name: str) -> list[Mapping[str, Any]]:
    return sorted((trace.get(name) or {}).get("items") or [], key=lambda i: i["rank"])


def _by_id(trace: Mapping[str, Any], name: str) -> dict[str, Mapping[str, Any]]:
    return {item["chunk_id"]: item for item in _items(trace, name)}


def _mmr_ran(trace: Mapping[str, Any]) -> bool:
    """MMR was asked for and no note says it fell back to the plain top_k."""
    settings = trace.get("settings") or {}
    if settings.get("mmr_lambda") is None:
        return False
    return not any("MMR not applied" in str(n.get("note", "")) for n in trace.get("notes") or [])


def final_stage(trace: Mapping[str, Any]) -> str:
    """``reranked`` when the rerank produced a list (the selection reads it), else ``fused``."""
    return "reranked" if (trace.get("reranked") or {}).get("items") else "fused"


def shares(contributions: Mapping[str, float] | None) -> dict[str, float]:
    """Each ranker's share of an item's fused score, in [0, 1] (they sum to 1); ``{}`` without contributions."""
    total = sum((contributions or {}).values())
    if not contributions or total <= 0:
        return {}
    return {ranker: value / total for ranker, value in contributions.items()}


def fates(trace: Mapping[str, Any]) -> dict[str, tuple[str, dict[str, Any]]]:
    """Every chunk of the four lists → ``(fate, detail)`` (:data:`FATES`), replaying the selection the trace
    records: the final stage's list deduplicated as the request was (``settings.dedup``), cut to the ``selected``
    chunks (``top_k`` or MMR), then the gate's ``final``.

    ``detail``: ``{"position": n}`` (final, 1-based), ``{"kept": chunk_id}`` (dedup), ``{"top_k": n}``,
    ``{"max_input": n}`` (window), ``{"kind": "cosine"|"bm25", "value": v or None, "threshold": t}`` or
    ``{"reason": text}`` (gate; the latter when the whole request was refused).
    """
    settings = trace.get("settings") or {}
    final = {item["chunk_id"]: item["rank"] for item in trace.get("final") or []}
    selected = {item["chunk_id"] for item in trace.get("selected") or []}
    stage = final_stage(trace)
    source = _items(trace, stage)
    in_source = {item["chunk_id"] for item in source}
    fused = {item["chunk_id"] for item in _items(trace, "fused")}
    key = "chunk_id" if settings.get("dedup") == "chunk" else "parent_id"
    kept_for: dict[str, str] = {}
    out: dict[str, tuple[str, dict[str, Any]]] = {}
    gate = trace.get("gate") or {}
    gate_kind = "bm25" if str(gate.get("kind") or "").startswith("bm25") else "cosine"
    dense = _by_id(trace, "dense")
    lexical = _by_id(trace, "lexical")
    for item in source:
        cid = item["chunk_id"]
        if cid in final:
            out[cid] = ("final", {"position": final[cid]})
        elif item[key] in kept_for and kept_for[item[key]] != cid:
            out[cid] = ("dedup", {"kept": kept_for[item[key]]})
        elif cid not in selected:
            out[cid] = ("mmr", {}) if _mmr_ran(trace) else ("top_k", {"top_k": settings.get("top_k")})
        elif not final:  # the whole request was refused: one reason for every chunk the gate read
            out[cid] = ("gate", {"reason": gate.get("reason") or trace.get("tier_reason") or ""})
        else:
            found = (dense if gate_kind == "cosine" else lexical).get(cid, {}).get("score")
            out[cid] = ("gate", {"kind": gate_kind, "value": found, "threshold": gate.get("threshold")})
        kept_for.setdefault(item[key], cid)
    for name in _LISTS:
        for item in _items(trace, name):
            cid = item["chunk_id"]
            if cid in out:
                continue
            if cid in fused and cid not in in_source:
                out[cid] = ("window", {"max_input": settings.get("reranker_max_input")})
            else:
                out[cid] = ("not_fused", {})
    return out


def movement(fused_rank: int | None, reranked_rank: int | None) -> int | None:
    """``fused_rank − reranked_rank``: positive moved up in the rerank, negative down; ``None`` when not reranked."""
    if fused_rank is None or reranked_rank is None:
        return None
    return fused_rank - reranked_rank


def grid_rows(trace: Mapping[str, Any], relevant: Sequence[str] | None = None,
              graded: Mapping[str, int] | None = None) -> list[dict[str, Any]]:
    """The rank grid: one row per chunk of any of the four lists (their union), best final position first.

    Each row: ``chunk_id``, ``parent_id``, ``relevance`` (:func:`retrieval.explain.views.relevance_of`: ``None`` for an
    unlabeled question), ``bm25_rank``/``bm25`` (BM25, unbounded), ``dense_rank``/``cosine`` (cosine in [-1, 1]
    from the dense list, else the gate's read of the chunk's vector, ``cosine_from`` says which), ``fused_rank``/
    ``rrf`` (the fused score: RRF by default, the ``settings.fusion`` method otherwise), ``shares`` (ranker →
    share of ``rrf``), ``rerank_rank``/``rerank`` (the reranker's score, its own scale), ``move``
    (:func:`movement`), ``final`` (1-based position in the final list, else ``None``), ``fate`` and
    ``fate_detail`` (:func:`fates`). A rank or score is ``None`` where the list does not hold the chunk.

    Sorted by final position, then fused rank, then reranked, BM25 and dense rank, then chunk id.
    """
    lists = {name: _by_id(trace, name) for name in _LISTS}
    final = {item["chunk_id"]: item for item in trace.get("final") or []}
    fate_of = fates(trace)
    order: list[str] = []
    for name in _LISTS:
        order.extend(cid for cid in lists[name] if cid not in order)
    rows = []
    for cid in order:
        lex, den, fus, rer = (lists[name].get(cid) or {} for name in _LISTS)
        parent = next(i["parent_id"] for i in (lex, den, fus, rer) if i)
        cosine, source = den.get("score"), "dense" if den else None
        if cosine is None and (final.get(cid) or {}).get("similarity") is not None:
            cosine, source = final[cid]["similarity"], "gate"
        fate, detail = fate_of[cid]
        rows.append({
            "chunk_id": cid, "parent_id": parent, "relevance": relevance_of(parent, relevant, graded),
            "bm25_rank": lex.get("rank"), "bm25": lex.get("score"),
            "dense_rank": den.get("rank"), "cosine": cosine, "cosine_from": source,
            "fused_rank": fus.get("rank"), "rrf": fus.get("score"), "shares": shares(fus.get("contributions")),
            "rerank_rank": rer.get("rank"), "rerank": rer.get("score"),
            "move": movement(rer.get("fused_rank", fus.get("rank")), rer.get("rank")),
            "final": detail["position"] if fate == "final" else None, "fate": fate, "fate_detail": detail,
        })

    def key(row: Mapping[str, Any]) -> tuple:
        far = float("inf")
        return tuple(far if row[k] is None else row[k] for k in ("final", "fused_rank", "rerank_rank", "bm25_rank",
                                                                 "dense_rank")) + (row["chunk_id"],)

    return sorted(rows, key=key)


# -- one chunk's provenance ----------------------------------------------------------------------------------
def rrf_terms(trace: Mapping[str, Any], chunk_id: str) -> list[dict[str, Any]]:
    """The fused item's terms, one per ranker that found it (the order of the trace):
    ``{ranker, rank, k, weight, value, recorded}``.

    ``value`` is the formula ``weight / (k + rank)`` with ``k`` the request's ``rrf_k`` and ranks from 1
    (``weight`` is 1 for plain RRF; for ``weighted_rrf`` it is read back from the recorded term); ``recorded``
    is the contribution the fusion wrote. For CombSUM and the convex combination (``settings.fusion`` ``combsum``
    or ``convex``) the terms are not rank based: ``value`` is ``None``. Empty when the fused list does not hold the chunk.
    """
    settings = trace.get("settings") or {}
    method = settings.get("fusion") or "rrf"
    k = settings.get("rrf_k", 60)
    item = _by_id(trace, "fused").get(chunk_id)
    if item is None:
        return []
    ranks, contributions = item.get("ranks") or {}, item.get("contributions") or {}
    out = []
    for ranker, recorded in contributions.items():
        rank = ranks.get(ranker)
        weight, value = 1.0, None
        if method not in {"combsum", "convex"} and rank is not None:
            if method == "weighted_rrf":
                weight = round(recorded * (k + rank), 6)
            value = weight / (k + rank)
        out.append({"ranker": ranker, "rank": rank, "k": k, "weight": weight, "value": value,
                    "recorded": recorded})
    return out


def provenance(trace: Mapping[str, Any], chunk_id: str, relevant: Sequence[str] | None = None,
               graded: Mapping[str, int] | None = None) -> dict[str, Any]:
    """Every signal the trace holds for one chunk, for its provenance card.

    Returns:
        ``{"row": its grid row, "bm25": {rank, score, terms: [(term, contribution)] largest first} | None,
        "dense": {rank, cosine, cosine_from}, "fusion": {method, k, rank, score, terms: rrf_terms} | None,
        "rerank": {kind, score_kind, rank, score, fused_rank, move, features: [(feature, contribution)] by
        magnitude, bias} | None, "gate": {...}}``. ``gate``: ``decision`` is ``passed`` (in the final list),
        ``refused`` (read by the gate, not kept) or ``not_read`` (cut before the gate), with ``kind``
        (``cosine``/``bm25``), the chunk's ``value`` and the ``threshold``, ``reason`` when the whole request
        was refused, and the learned support gate's request-level verdict (``support``) when it ran.

    Raises:
        KeyError: no list of the trace holds ``chunk_id``.
    """
    row = next((r for r in grid_rows(trace, relevant, graded) if r["chunk_id"] == chunk_id), None)
    if row is None:
        raise KeyError(chunk_id)
    settings = trace.get("settings") or {}
    lex = _by_id(trace, "lexical").get(chunk_id)
    fus = _by_id(trace, "fused").get(chunk_id)
    rer = _by_id(trace, "reranked").get(chunk_id)
    bm25 = None if lex is None else {
        "rank": lex["rank"], "score": lex["score"],
        "terms": sorted((lex.get("terms") or {}).items(), key=lambda kv: (-kv[1], kv[0]))}
    fusion = None if fus is None else {
        "method": settings.get("fusion") or "rrf", "k": settings.get("rrf_k", 60), "rank": fus["rank"],
        "score": fus["score"], "terms": rrf_terms(trace, chunk_id)}
    rerank = None
    if rer is not None:
        contributions = dict(rer.get("feature_contributions") or {})
        bias = contributions.pop("bias", None)
        rerank = {"kind": (trace.get("models") or {}).get("reranker_kind"),
                  "score_kind": (trace.get("reranked") or {}).get("score_kind"), "rank": rer["rank"],
                  "score": rer["score"], "fused_rank": rer.get("fused_rank"),
                  "move": movement(rer.get("fused_rank"), rer["rank"]),
                  "features": sorted(contributions.items(), key=lambda kv: (-abs(kv[1]), kv[0])), "bias": bias}
    gate = trace.get("gate") or {}
    kind = "bm25" if str(gate.get("kind") or "").startswith("bm25") else "cosine"
    value = row["cosine"] if kind == "cosine" else row["bm25"]
    decision = {"final": "passed", "gate": "refused"}.get(row["fate"], "not_read")
    gate_view: dict[str, Any] = {"decision": decision, "kind": kind, "value": value, "threshold": gate.get("threshold"),
                                 "reason": row["fate_detail"].get("reason")}
    support = gate.get("support") or {}
    if support.get("best") is not None:
        gate_view["support"] = {"p": support["best"], "threshold": support.get("threshold"),
                                "passes": bool(support.get("passes")),
                                "read": chunk_id in (support.get("chunks") or [])}
    return {"row": row, "bm25": bm25, "dense": {"rank": row["dense_rank"], "cosine": row["cosine"],
                                                "cosine_from": row["cosine_from"]},
            "fusion": fusion, "rerank": rerank, "gate": gate_view}


# -- why A above B -------------------------------------------------------------------------------------------
def _diff(a: float | None, b: float | None) -> float:
    return (a or 0.0) - (b or 0.0)


def why_above(trace: Mapping[str, Any], a: str, b: str) -> dict[str, Any]:
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
    stage_rank = {cid: item["rank"] for cid, item in _by_id(trace, stage).items()}
    ra, rb = stage_rank.get(a), stage_rank.get(b)
    if ra is None and rb is None:
        # Neither was in that stage: the grid's order (fused rank, then the generators') places them.
        order = [r["chunk_id"] for r in grid_rows(trace)]
        upper, lower = (a, b) if order.index(a) < order.index(b) else (b, a)
    else:
        upper, lower = (a, b) if rb is None or (ra is not None and ra < rb) else (b, a)
    up, lo = rows_by_id[upper], rows_by_id[lower]
    fused, reranked, lexical = _by_id(trace, "fused"), _by_id(trace, "reranked"), _by_id(trace, "lexical")

    rows: list[dict[str, Any]] = []

    def add(group: str, signal: str, u: float | None, l: float | None, only: str | None = None) -> None:
        rows.append({"group": group, "signal": signal, "upper": u, "lower": l, "diff": _diff(u, l), "only": only})

    add("bm25", "score", up["bm25"], lo["bm25"])
    tu = dict((lexical.get(upper) or {}).get("terms") or {})
    tl = dict((lexical.get(lower) or {}).get("terms") or {})
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
    fu, fl = dict((reranked.get(upper) or {}).get("feature_contributions") or {}), \
        dict((reranked.get(lower) or {}).get("feature_contributions") or {})
    if upper in reranked or lower in reranked:
        add("rerank", "score", up["rerank"], lo["rerank"])
    features = [f for f in dict.fromkeys([*fu, *fl]) if f != "bias"]
    for feature in sorted(features, key=lambda f: (-abs(_diff(fu.get(f), fl.get(f))), f)):
        add("rerank", feature, fu.get(feature), fl.get(feature))

    deciding = _deciding(trace, stage, upper, lower, stage_rank, fused, reranked, rows, up, lo)
    return {"upper": upper, "lower": lower, "stage": stage, "rows": rows, "deciding": deciding}


def _deciding(trace: Mapping[str, Any], stage: str, upper: str, lower: str, stage_rank: Mapping[str, int],
              fused: Mapping[str, Any], reranked: Mapping[str, Any], rows: Sequence[Mapping[str, Any]],
              up: Mapping[str, Any], lo: Mapping[str, Any]) -> dict[str, Any]:
    if upper not in stage_rank and lower not in stage_rank:
        return {"kind": "unranked", "stage": stage, "signal": None, "diff": None}
    if lower not in stage_rank:
        return {"kind": "absent", "stage": stage, "signal": lo["fate"], "diff": None}
    if (_mmr_ran(trace) and up["final"] is not None and lo["final"] is not None
            and up["final"] > lo["final"]):
        return {"kind": "mmr", "stage": "mmr", "signal": None, "diff": None}
    if stage == "reranked":
        su, sl = reranked[upper]["score"], reranked[lower]["score"]
        if su == sl:
            return {"kind": "tie", "stage": stage, "signal": "fused_rank", "diff": 0.0}
        feats = [r for r in rows if r["group"] == "rerank" and r["signal"] != "score"]
        if feats:
            best = max(feats, key=lambda r: r["diff"])  # the first of equals: rows are by |diff|, then name
            return {"kind": "feature", "stage": stage, "signal": best["signal"], "diff": best["diff"]}
        return {"kind": "score", "stage": stage, "signal": "score", "diff": su - sl}
    if fused[upper]["score"] == fused[lower]["score"]:
        return {"kind": "tie", "stage": stage, "signal": "best_single_rank", "diff": 0.0}
    terms = [r for r in rows if r["group"] == "rrf"]
    best = max(terms, key=lambda r: r["diff"])
    return {"kind": "rrf", "stage": stage, "signal": best["signal"], "diff": best["diff"]}
