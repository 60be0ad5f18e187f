"""Compare two configurations: on one question (two traces) and over a question set (two report configs).

Pure functions over traces (their typed view, :class:`~retrieval.pipeline.view.TraceView`) and the JSON shape of
:func:`retrieval.offline.evaluation.evaluate_configs`;
nothing is re-scored. Measures:

* rank movement of every id in either list (``None`` = absent from that list);
* Jaccard@k = |A@k ∩ B@k| / |A@k ∪ B@k| (1.0 when both prefixes are empty);
* rank-biased overlap, RBO (Webber, Moffat and Zobel, "A similarity measure for indefinite rankings",
  TOIS 2010): the extrapolated form RBO_ext (their eq. 32), which handles lists of different lengths and
  equals 1 for identical lists. ``p`` is the persistence (0.9: the top 10 carry about 86 % of the weight).
"""

from __future__ import annotations

from typing import Any, Literal, Mapping, Sequence

from ..pipeline.view import TraceView

#: What a list's ids are: its chunks' or their parents'.
IdKey = Literal["chunk_id", "parent_id"]


def rank_movement(a: Sequence[str], b: Sequence[str]) -> list[dict[str, Any]]:
    """One row per id of ``a`` then of ``b``: ``{id, rank_a, rank_b, move}``; ``move`` = rank_a − rank_b
    (positive: ranked higher in b), ``None`` when the id is absent from one side."""
    rank_a = {x: i for i, x in enumerate(a, start=1)}
    rank_b = {x: i for i, x in enumerate(b, start=1)}
    rows = []
    for x in list(dict.fromkeys([*a, *b])):
        ra, rb = rank_a.get(x), rank_b.get(x)
        rows.append({"id": x, "rank_a": ra, "rank_b": rb,
                     "move": (ra - rb) if ra is not None and rb is not None else None})
    return rows


def jaccard_at_k(a: Sequence[str], b: Sequence[str], k: int) -> float:
    """|a[:k] ∩ b[:k]| / |a[:k] ∪ b[:k]|; 1.0 when both are empty."""
    sa, sb = set(a[:k]), set(b[:k])
    union = sa | sb
    return len(sa & sb) / len(union) if union else 1.0


def rbo(a: Sequence[str], b: Sequence[str], p: float = 0.9) -> float:
    """Extrapolated rank-biased overlap RBO_ext of two rankings (Webber et al. 2010, eq. 32).

    With S the shorter list (length s), L the longer (length l) and X_d the overlap of the two depth-d
    prefixes (S's prefix stops growing after s):

        RBO_ext = (1-p)/p · [Σ_{d=1..l} X_d/d · p^d + Σ_{d=s+1..l} X_s (d-s)/(s d) · p^d]
                  + [(X_l - X_s)/l + X_s/s] · p^l

    Raises:
        ValueError: ``p`` outside (0, 1), or an id repeated within one list.
    """
    if not 0.0 < p < 1.0:
        raise ValueError("p must be in (0, 1)")
    if len(set(a)) != len(a) or len(set(b)) != len(b):
        raise ValueError("a ranking must not repeat an id")
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    s, l = len(short), len(long_)  # noqa: E741 - s and l as in Webber, Moffat and Zobel (2010)
    if l == 0:
        return 1.0
    if s == 0:
        return 0.0
    seen_s: set[str] = set()
    seen_l: set[str] = set()
    overlap = 0
    x = [0] * (l + 1)
    for d in range(1, l + 1):
        item_l = long_[d - 1]
        if d <= s:
            item_s = short[d - 1]
            if item_s == item_l:
                overlap += 1
            else:
                overlap += (item_s in seen_l) + (item_l in seen_s)
            seen_s.add(item_s)
        elif item_l in seen_s:
            overlap += 1
        seen_l.add(item_l)
        x[d] = overlap
    total = sum(x[d] / d * p ** d for d in range(1, l + 1))
    total += sum(x[s] * (d - s) / (s * d) * p ** d for d in range(s + 1, l + 1))
    return (1 - p) / p * total + ((x[l] - x[s]) / l + x[s] / s) * p ** l


def final_ids(trace: TraceView, key: IdKey = "chunk_id") -> list[str]:
    return [item.chunk_id if key == "chunk_id" else item.parent_id for item in trace.final]


def list_ids(trace: TraceView, name: str, key: IdKey = "chunk_id") -> list[str]:
    """Ids of the trace list ``name`` (``final`` or one of the four ranked lists)."""
    if name == "final":
        return final_ids(trace, key)
    return [item.chunk_id if key == "chunk_id" else item.parent_id for item in trace.ranked(name).items]


def compare_traces(a: TraceView, b: TraceView, k: int | None = None, p: float = 0.9,
                   list_name: str = "final") -> dict[str, Any]:
    """Two traces of one question side by side: movement, Jaccard@k and RBO of ``list_name``.

    ``k`` defaults to the longer list's length. Returns ``{"k", "jaccard", "rbo", "p", "movement",
    "only_a", "only_b", "same", "tier_a", "tier_b"}``.
    """
    ids_a, ids_b = list_ids(a, list_name), list_ids(b, list_name)
    k = k or max(len(ids_a), len(ids_b), 1)
    movement = rank_movement(ids_a, ids_b)
    return {"k": k, "p": p, "jaccard": jaccard_at_k(ids_a, ids_b, k), "rbo": rbo(ids_a[:k], ids_b[:k], p),
            "movement": movement, "only_a": [r["id"] for r in movement if r["rank_b"] is None],
            "only_b": [r["id"] for r in movement if r["rank_a"] is None], "same": ids_a == ids_b,
            "tier_a": a.tier, "tier_b": b.tier}


def compare_report_configs(report: Mapping[str, Any], a: str, b: str, metric: str) -> dict[str, Any]:
    """Per-question deltas of ``metric`` between configs ``a`` and ``b`` of one evaluation report.

    Returns ``{"rows": [{id, group, a, b, delta, result_a, result_b}], "mean_a", "mean_b", "mean_delta",
    "improved", "worsened", "tied"}`` with delta = b − a, rows sorted by delta (worst first); a question
    missing the metric on either side is left out of the means and counts.

    Raises:
        KeyError: ``a`` or ``b`` is not a config of the report.
    """
    configs = report["configs"]
    rows_a = {r["id"]: r for r in configs[a]["questions"]}
    rows_b = {r["id"]: r for r in configs[b]["questions"]}
    rows = []
    for qid, ra in rows_a.items():
        rb = rows_b.get(qid)
        if rb is None:
            continue
        va, vb = (ra.get("metrics") or {}).get(metric), (rb.get("metrics") or {}).get(metric)
        rows.append({"id": qid, "group": ra.get("group"), "a": va, "b": vb,
                     "delta": None if va is None or vb is None else round(vb - va, 6),
                     "result_a": ra.get("layer") or ra.get("result"), "result_b": rb.get("layer") or rb.get("result")})
    scored = [r for r in rows if r["delta"] is not None]
    rows.sort(key=lambda r: (r["delta"] is None, r["delta"] if r["delta"] is not None else 0, r["id"]))
    mean = (lambda xs: sum(xs) / len(xs) if xs else None)
    return {"rows": rows, "metric": metric, "a": a, "b": b,
            "mean_a": mean([r["a"] for r in scored]), "mean_b": mean([r["b"] for r in scored]),
            "mean_delta": mean([r["delta"] for r in scored]),
            "improved": sum(r["delta"] > 0 for r in scored), "worsened": sum(r["delta"] < 0 for r in scored),
            "tied": sum(r["delta"] == 0 for r in scored)}
