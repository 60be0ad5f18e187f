"""The ranking metrics, declared once, and their values per question (ranx) and aggregates.

A metric is one :class:`Metric` declaration in :data:`METRICS`: its name as ranx spells it, its label and a
line on what it measures in each language, and its place in the headline. Declared here: nDCG@k (linear
graded gains when ``graded`` is present), recall@k, precision@k, MRR@k and hit rate@k. Every value comes from
ranx, by :func:`scores` (an evaluation's questions) or :func:`ranking_scores` (rankings of any source: the
judge's training report). What shows metrics reads the registry: the evaluation computes every declared
metric at every k (:func:`metric_names`), reports and pages show :func:`headline`, the short tables
:func:`brief`, a page labels a key with :func:`label` and explains it with :func:`describe`, and
:func:`compile_ranx` compiles them all. Questions with an empty ``relevant`` list count only in
``abstention_accuracy`` (abstained on unanswerable, answered on answerable).

Relevance is judged per parent document, so a question's ranked list is read as its **parent ranking**: each
parent once, at its best (first) rank (:func:`parent_ranking`). With ``dedup="chunk"`` the final list may hold
two chunks of one parent; read naively, the later one overwrote the earlier (a relevant parent at ranks 1 and
4 scored ``mrr@3`` 1/3 instead of 1). The metrics, the significance tests and the exports all read the one
run :func:`parent_run` builds from those rankings.
"""

from __future__ import annotations

import math
import statistics
import threading
import warnings
from dataclasses import dataclass
from typing import Any, Collection, Mapping, Sequence

from ...core.kinds import Registry, Text
from ...core.types import Question


@dataclass(frozen=True)
class Metric:
    """A ranking metric, declared once.

    Attributes:
        name: ranx's name of it (``ndcg``, ``map``); ``name@k`` is its key in a report.
        label: the metric in words (``nDCG``, ``hit rate``), written ``label@k`` where a text names it.
        description: what it measures, one line (the Evaluation page's metric pickers show it).
        headline: its place among the headline metrics (1 first), the few that reports and pages show at the
            largest k; ``None``: computed and exported (report JSON, comparison CSV) only.
        brief: also in the short tables (the observed lines beside the hypothesis, the tuner's and the
            learned ranker's tables, the judge's training report), in its headline place.
    """

    name: str
    label: Text
    description: Text
    headline: int | None = None
    brief: bool = False


#: The ranking metrics, in declaration order: the order an evaluation computes and exports them in.
METRICS: Registry[Metric] = Registry("metric")
METRICS.declare(Metric("ndcg", Text("nDCG", "nDCG"),
                       Text("the gains of the relevant parents in the top k, each divided by log2(rank + 1), over "
                            "the same sum in the best order",
                            "os ganhos dos pais relevantes no top k, cada um dividido por log2(posição + 1), sobre "
                            "a mesma soma na melhor ordem"), headline=1, brief=True))
METRICS.declare(Metric("recall", Text("recall", "revocação"),
                       Text("the share of the relevant parents found in the top k",
                            "a fração dos pais relevantes achados no top k"), headline=2, brief=True))
METRICS.declare(Metric("precision", Text("precision", "precisão"),
                       Text("the share of the top k that is relevant", "a fração do top k que é relevante"),
                       headline=5))
METRICS.declare(Metric("mrr", Text("MRR", "MRR"),
                       Text("1 / the rank of the first relevant parent in the top k (0 when none is there)",
                            "1 / a posição do primeiro pai relevante no top k (0 quando nenhum está lá)"),
                       headline=3, brief=True))
METRICS.declare(Metric("hit_rate", Text("hit rate", "taxa de acerto"),
                       Text("1 when a relevant parent is in the top k, else 0",
                            "1 quando um pai relevante está no top k, senão 0"), headline=4))


def _shown() -> list[Metric]:
    """The declared metrics in headline order, those outside the headline after them (declaration order)."""
    return sorted(METRICS, key=lambda m: math.inf if m.headline is None else m.headline)


def headline(k: int) -> list[str]:
    """The headline metrics at ``k``, in their headline order: ``ndcg@10, recall@10, mrr@10, hit_rate@10,
    precision@10``. Reports and pages put ``abstention_accuracy`` after them."""
    return [f"{m.name}@{k}" for m in _shown() if m.headline is not None]


def brief(k: int) -> list[str]:
    """The metrics of the short tables at ``k``, in their headline order: ``ndcg@10, recall@10, mrr@10``."""
    return [f"{m.name}@{k}" for m in _shown() if m.brief]


def _declared(key: str) -> tuple[Metric, str] | None:
    name, _, k = key.partition("@")
    return (METRICS.get(name), k) if name in METRICS else None


def label(key: str, lang: str = "en") -> str:
    """A metric key in words in ``lang``: ``mrr@10`` → ``MRR@10``, ``hit_rate@10`` → ``taxa de acerto@10``; a key
    of no declared metric as it is."""
    found = _declared(key)
    if found is None:
        return key
    metric, k = found
    return metric.label(lang) + (f"@{k}" if k else "")


def describe(key: str, lang: str = "en") -> str:
    """What the metric of a key measures, in ``lang`` (``mrr@10`` → ``1 / the rank of …``); ``""`` for a key of
    no declared metric."""
    found = _declared(key)
    return "" if found is None else found[0].description(lang)


#: ranx's metrics are numba functions compiled on first use; two threads compiling them at once crashed the
#: process (the app warms ranx up in a background thread). Every ranx call holds this lock.
RANX_LOCK = threading.RLock()


def quiet_ranx() -> None:
    """Silence the one warning ranx's numba code gives when it compiles nDCG (an unsafe cast from uint64 to
    int64 of graded gains 0-3, harmless here), so a user's log holds only what concerns them."""
    warnings.filterwarnings("ignore", message=".*unsafe cast from uint64 to int64.*")


#: The cut-offs the Evaluation page computes by default.
WARM_KS = (1, 3, 5, 10)


def warm_metrics() -> list[str]:
    """The metric keys the Evaluation page computes by default (every declared metric at k = 1, 3, 5, 10, in
    headline order): what :func:`compile_ranx` compiles."""
    return [f"{m.name}@{k}" for m in _shown() for k in WARM_KS]


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
        evaluate(qrels, one, warm_metrics(), return_mean=False, make_comparable=True)
        compare(qrels, [one, two], warm_metrics(), stat_test="fisher", max_p=0.05, rounding_digits=6,
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
    return {q.id: _ranked_run(finals.get(q.id) or []) for q in questions if q.relevant}


def _ranked_run(parents: Sequence[str]) -> dict[str, float]:
    """One question's entry of a run: its :func:`parent_ranking`, rank ``r`` of ``n`` scored ``n − r + 1``."""
    ranked = parent_ranking(parents)
    return {d: float(len(ranked) - i) for i, d in enumerate(ranked)} or {"__none__": 0.0}


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
    """Every declared metric at every k: ``ndcg@1, recall@1, …, hit_rate@10`` (k first, then declaration order)."""
    return [f"{m}@{k}" for k in ks for m in METRICS.names()]


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
    return _ranx({q.id: relevant_grades(q) for q in answerable}, run, names, run_name)


def ranking_scores(grades: Mapping[str, Mapping[str, int]], rankings: Mapping[str, Sequence[str]],
                   names: list[str], run_name: str) -> dict[str, dict[str, float]]:
    """The metrics ``names`` of rankings that are not an evaluation's (the judge's training report reads its
    orders with them): ``{key: {metric: value}}``, one entry per key of ``grades``.

    Args:
        grades: key → the grades of its relevant parents (> 0; :func:`relevant_grades` of a question); every
            key needs one.
        rankings: key → its parents, best first (each read at its best rank; a missing key ranks nothing).
    """
    if not grades:
        return {}
    return _ranx(grades, {key: _ranked_run(rankings.get(key) or []) for key in grades}, names, run_name)


def _ranx(grades: Mapping[str, Mapping[str, int]], run: Mapping[str, Mapping[str, float]], names: list[str],
          run_name: str) -> dict[str, dict[str, float]]:
    """ranx's values of ``names`` per key of ``grades``: the one place a metric is computed."""
    quiet_ranx()
    with RANX_LOCK:  # ranx builds numba structures and compiles on first use: one thread at a time
        from ranx import Qrels, Run, evaluate

        qrels = Qrels({key: dict(g) for key, g in grades.items()})
        run_dict = {key: dict(run.get(key) or {"__none__": 0.0}) for key in grades}
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
