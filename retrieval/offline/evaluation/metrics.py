"""Per-question metrics (ranx) and their aggregates.

Metrics come from ``ranx``: recall@k, precision@k, MRR@k, nDCG@k (graded gains when ``graded`` is present)
and hit rate@k. Questions with an empty ``relevant`` list count only in ``abstention_accuracy`` (abstained
on unanswerable, answered on answerable).

Relevance is judged per parent document, so a question's ranked list is read as its **parent ranking**: each
parent once, at its best (first) rank (:func:`parent_ranking`). With ``dedup="chunk"`` the final list may hold
two chunks of one parent; read naively, the later one overwrote the earlier (a relevant parent at ranks 1 and
4 scored ``mrr@3`` 1/3 instead of 1). The metrics, the significance tests and the exports all read the one
run :func:`parent_run` builds from those rankings.
"""

from __future__ import annotations

import statistics
import threading
import warnings
from typing import Any, Collection, Mapping, Sequence

from ...core.types import Question

METRICS = ("ndcg", "recall", "precision", "mrr", "hit_rate")


#: ranx's metrics are numba functions compiled on first use; two threads compiling them at once crashed the
#: process (the app warms ranx up in a background thread). Every ranx call holds this lock.
RANX_LOCK = threading.RLock()


def quiet_ranx() -> None:
    """Silence the one warning ranx's numba code gives when it compiles nDCG (an unsafe cast from uint64 to
    int64 of graded gains 0-3, harmless here), so a user's log holds only what concerns them."""
    warnings.filterwarnings("ignore", message=".*unsafe cast from uint64 to int64.*")


#: The metric names the Evaluation page computes by default (k = 1, 3, 5, 10): what :func:`compile_ranx` compiles.
WARM_METRICS = tuple(f"{m}@{k}" for m in ("ndcg", "recall", "mrr", "hit_rate", "precision") for k in (1, 3, 5, 10))


def compile_ranx() -> None:
    """Compile ranx's metric and significance-test functions on a toy case.

    ranx's numba functions compile on first use and are cached on disk afterwards (numba's ``cache=True``):
    on a fresh install that compile took longer than all the requests of a lab evaluation (over 90 s on 2
    cores). ``make install`` runs this once so a user's first evaluation reads the cache; the Evaluation page
    runs it in a background thread in case the cache is missing.
    """
    quiet_ranx()
    with RANX_LOCK:  # importing and compiling never run beside an evaluation's own ranx calls
        from ranx import Qrels, Run, compare, evaluate

        qrels = Qrels({"a": {"d1": 1, "d2": 3}, "b": {"d3": 1}})
        one = Run({"a": {"d1": 2.0, "d4": 1.0}, "b": {"d3": 1.0}}, name="one")
        two = Run({"a": {"d2": 1.0}, "b": {"__none__": 0.0}}, name="two")
        evaluate(qrels, one, list(WARM_METRICS), return_mean=False, make_comparable=True)
        compare(qrels, [one, two], list(WARM_METRICS), stat_test="fisher", max_p=0.05, rounding_digits=6,
                make_comparable=True)


def relevant_grades(q: Question) -> dict[str, int]:
    if q.graded:
        grades = {d: int(g) for d, g in q.graded.items() if g > 0}
        for d in q.relevant:
            grades.setdefault(d, 1)
        return grades
    return {d: 1 for d in q.relevant}


def best_positions(parents: Sequence[str]) -> list[int]:
    """The 0-based position of each parent's first (best) place in ``parents``, in order.

    ``["a", "b", "a", "c"]`` → ``[0, 1, 3]``: the ranking ``a, b, c`` (ranks 1, 2, 3), the second ``a`` dropped.
    """
    seen: set[str] = set()
    out = []
    for position, parent in enumerate(parents):
        if parent not in seen:
            seen.add(parent)
            out.append(position)
    return out


def parent_ranking(parents: Sequence[str]) -> list[str]:
    """``parents`` with each parent once, at its best rank: the list every metric, test and export reads."""
    return [parents[i] for i in best_positions(parents)]


def parent_run(questions: Sequence[Question], finals: Mapping[str, Sequence[str]]) -> dict[str, dict[str, float]]:
    """The run of one configuration in ranx's form, ``{qid: {parent: score}}``, over the answerable questions.

    Each question's list is its :func:`parent_ranking`; the score of rank ``r`` among ``n`` parents is
    ``n − r + 1`` (only the order matters to the metrics); a question with no parent holds ``{"__none__": 0}``
    (ranx needs one entry). Build it once per configuration and pass it to :func:`scores` and
    :func:`~retrieval.offline.evaluation.compare.compare` (each ranx call makes its own ``Run`` of it: ranx's
    ``make_comparable`` edits the ``Run`` it is given).
    """
    run: dict[str, dict[str, float]] = {}
    for q in questions:
        if not q.relevant:
            continue
        ranked = parent_ranking(finals.get(q.id) or [])
        run[q.id] = {d: float(len(ranked) - i) for i, d in enumerate(ranked)} or {"__none__": 0.0}
    return run


def judged_share(parents: Sequence[str], judged: Collection[str], k: int) -> tuple[float | None, list[str]]:
    """judged@k: the share of the top-``k`` parents that carry a judgment, and the unjudged ones.

    A parent carries a judgment when the question names it in ``relevant`` or ``graded`` (grade 0 included:
    judged not relevant). The top ``k`` is read from the :func:`parent_ranking` of ``parents``; the share is
    over the parents actually there (``min(k, n)``), so a short list is not penalized for its length:

        judged@k = |{p in top-k : p judged}| / |top-k|

    A low judged@k says that nDCG@k scored unjudged items as not relevant (the pooling bias of Buckley and
    Voorhees, 2004). ``(None, [])`` when the list is empty.

    Raises:
        ValueError: ``k`` < 1.
    """
    if k < 1:
        raise ValueError(f"k must be ≥ 1, got {k}")
    top = parent_ranking(parents)[:k]
    if not top:
        return None, []
    unjudged = [p for p in top if p not in judged]
    return (len(top) - len(unjudged)) / len(top), unjudged


def metric_names(ks: Sequence[int]) -> list[str]:
    return [f"{m}@{k}" for k in ks for m in METRICS]


def scores(questions: Sequence[Question], finals: Mapping[str, Sequence[str]], names: list[str],
           run_name: str, run: Mapping[str, Mapping[str, float]] | None = None) -> dict[str, dict[str, float]]:
    """Per-question ranx metrics (answerable questions only): ``{qid: {metric: value}}``.

    Args:
        finals: question id → the parents of its final list, best first (a parent may repeat: each is read at
            its best rank).
        run: :func:`parent_run` of ``finals`` when the caller already built it (then ``finals`` is not read).
    """
    answerable = [q for q in questions if q.relevant]
    if not answerable:
        return {}
    run = parent_run(answerable, finals) if run is None else run
    quiet_ranx()
    with RANX_LOCK:  # ranx builds numba structures and compiles on first use: one thread at a time
        from ranx import Qrels, Run, evaluate

        qrels = Qrels({q.id: relevant_grades(q) for q in answerable})
        run_dict = {q.id: dict(run.get(q.id) or {"__none__": 0.0}) for q in answerable}
        values = evaluate(qrels, Run(run_dict, name=run_name), names, return_mean=False, make_comparable=True)
    if len(names) == 1:
        values = {names[0]: values}
    ids = list(qrels.keys())
    return {qid: {n: float(values[n][i]) for n in names} for i, qid in enumerate(ids)}


def aggregate(rows: Sequence[dict[str, Any]], per_q: Mapping[str, Mapping[str, float]], names: list[str]) -> dict:
    out: dict[str, Any] = {}
    scored = [per_q[r["id"]] for r in rows if r["id"] in per_q]
    for n in names:
        out[n] = round(statistics.fmean(s[n] for s in scored), 4) if scored else None
    abst = [r["abstained"] == (not r["relevant"]) for r in rows]
    out["abstention_accuracy"] = round(sum(abst) / len(abst), 4) if abst else None
    judged = [r["judged"] for r in rows if (r.get("judged") or {}).get("share") is not None]
    if judged:  # judged@k of every question with a list, averaged (k: the run's top_k)
        out[f"judged@{judged[0]['k']}"] = round(statistics.fmean(j["share"] for j in judged), 4)
    out["questions"] = len(rows)
    out["answerable"] = len(scored)
    return out


def percentile(values: list[float], p: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(round(p * (len(ordered) - 1))))], 3)
