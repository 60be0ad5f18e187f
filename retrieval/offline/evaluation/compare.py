"""Comparisons of configurations: the baseline (the first) against each candidate, per metric: ranx's paired
Fisher randomization test of the mean difference (Smucker et al., 2007), Holm's correction over the
candidates when there are several, per-group deltas, and the questions that lost a relevant
document the baseline had found.

Only the pairs a page or a report shows are tested (the baseline against each candidate), on the per-question
metrics the run computed once: no metric is computed again here."""

from __future__ import annotations

import statistics
from typing import Any, Mapping, Sequence

import numpy as np

from ...core.locale import number
from ...core.reasons import Reason, declare, raw
from ...core.types import Question
from .configs import Config
from .metrics import brief, parent_ranking


OBSERVED = declare("observed.line", en="{candidate!c} vs {baseline!c}: {deltas}; {improved} questions improved, "
                   "{worsened} worsened", pt="{candidate!c} contra {baseline!c}: {deltas}; {improved} perguntas "
                   "melhoraram, {worsened} pioraram")
OBSERVED_LOST = declare("observed.line_lost", en="{candidate!c} vs {baseline!c}: {deltas}; {improved} questions "
                        "improved, {worsened} worsened; {lost} lost a relevant document the baseline had in its top {k}",
                        pt="{candidate!c} contra {baseline!c}: {deltas}; {improved} perguntas melhoraram, {worsened} "
                        "pioraram; {lost} perderam um documento relevante que a referência tinha no top {k}")
DELTA = declare("observed.delta", en="{metric} {delta:+.4f} ({p})", pt="{metric} {delta:+.4f} ({p})")
DELTAS = declare("observed.deltas", en="{first}, {rest}", pt="{first}, {rest}")
P_EQUALS = declare("p.equals", en="p={p:.4f}", pt="p={p:.4f}")
P_TINY = declare("p.tiny", en="p={p:.1e}", pt="p={p:.1e}")
P_BELOW = declare("p.below", en="p<0.001", pt="p<0,001")
P_NONE = declare("p.none", en="p=n/a", pt="p=n/d")


def p_reason(p: Any) -> Reason:
    """A p-value as a reason (its numbers written per language): what :func:`p_text` writes in English."""
    if p is None:
        return P_NONE()
    if p == 0:
        return P_BELOW()  # an older report: no permutation out of ranx's reached the observed difference
    return P_EQUALS(p=p) if p >= 0.0001 else P_TINY(p=p)


def observed(report: Mapping[str, Any]) -> list[Reason]:
    """One line per candidate: what the run showed on the brief metrics at the largest k (nDCG, recall, MRR;
    :func:`~.metrics.brief`), to set beside the hypothesis."""
    kmax = report["k"][-1]
    lines = []
    rows = report.get("comparisons") or []
    for candidate in dict.fromkeys(r["candidate"] for r in rows):
        parts = []
        for metric in brief(kmax):
            row = next((r for r in rows if r["candidate"] == candidate and r["metric"] == metric), None)
            if row:
                parts.append(DELTA(metric=metric, delta=row["delta"], p=p_reason(row["p_value"])))
        deltas = parts[0] if parts else raw("")
        for part in parts[1:]:
            deltas = DELTAS(first=deltas, rest=part)
        head = next(r for r in rows if r["candidate"] == candidate and r["metric"] == f"ndcg@{kmax}")
        lost = len(head["lost_relevant"])
        fields = dict(candidate=candidate, baseline=head["baseline"], deltas=deltas, improved=len(head["improved"]),
                      worsened=len(head["worsened"]))
        lines.append(OBSERVED_LOST(**fields, lost=lost, k=kmax) if lost else OBSERVED(**fields))
    return lines


def _metric_k(metric: str) -> int:
    return int(metric.rsplit("@", 1)[1])


#: Random sign flips of the paired randomization test (seeded: the same p at every run).
PERMUTATIONS = 10_000
#: The seed of those flips.
SEED = 0
#: Flips drawn at a time (memory: 1,000 × questions × 8 bytes).
_BLOCK = 1_000


def paired_p(baseline: Sequence[float], candidate: Sequence[float]) -> float | None:
    """Two-sided p-value of the paired Fisher randomization test of the two means (Smucker et al., 2007): the
    share of random swaps within each question's pair (a sign flip of its difference) whose mean difference is
    at least the observed one; ``None`` for fewer than two questions; 1.0 for identical lists.

    The same test as ranx's ``fisher_randomization_test``, written here with a seeded generator: ranx draws its
    swaps in parallel numba threads that its seed does not reach, so the same two systems got p = 0.8297 to
    0.8378 across five runs (and an analyst saw 0.0448 then 0.05 on the page). Here the same input always gives
    the same p."""
    control = np.asarray(baseline, dtype=np.float64)
    treatment = np.asarray(candidate, dtype=np.float64)
    if control.size < 2:
        return None
    if np.array_equal(control, treatment):
        return 1.0
    diff = treatment - control
    observed = abs(diff.mean()) - 1e-12   # a flip that reaches the observed difference counts (float noise aside)
    rng = np.random.default_rng(SEED)
    reached = 0
    for start in range(0, PERMUTATIONS, _BLOCK):
        n = min(_BLOCK, PERMUTATIONS - start)
        signs = rng.integers(0, 2, size=(n, diff.size), dtype=np.int8) * 2 - 1
        reached += int((np.abs(signs @ diff) / diff.size >= observed).sum())
    return reached / PERMUTATIONS


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjustment of one metric's p-values over the candidates (``None`` stays ``None``): sorted
    ascending, the i-th of m is multiplied by m − i + 1, then made non-decreasing and capped at 1 (Holm, 1979).

    Written out rather than taken from statsmodels' ``multipletests``, which runs a full garbage collection at
    every call: 0.3 s each in an app process, 19 s for one three-configuration evaluation."""
    known = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    out: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(known):
        running = max(running, min(1.0, (len(known) - rank) * p))
        out[i] = round(running, 6)
    return out


def compare(questions: Sequence[Question], configs: Sequence[Config], finals: Mapping[str, Mapping[str, list[str]]],
            per_q: Mapping[str, Mapping[str, Mapping[str, float]]], names: list[str],
            runs: Mapping[str, Mapping[str, Mapping[str, float]]] | None = None) -> list[dict[str, Any]]:
    """Each config against the first (the baseline), per metric, on the per-question metrics ``per_q``.

    Each row: ``delta`` of the means, ``p_value`` of the paired randomization test (:func:`paired_p`),
    ``p_holm`` (Holm's adjustment over the candidates of that metric; the same as ``p_value`` for one
    candidate), the questions that ``improved`` or ``worsened``, the same counted ``by_group``, and
    ``lost_relevant``: the questions where a relevant parent the baseline had in its top K (K of the metric)
    is missing from the candidate's top K, whatever the mean says. ``wins_on_mean_but_lost_relevant`` flags a
    positive delta with losses. ``runs`` is accepted for callers that built the parent runs (unused).
    """
    answerable = [q for q in questions if q.relevant]
    if len(configs) < 2 or not answerable:
        return []
    base = configs[0].name
    groups = sorted({q.group for q in answerable})
    out: list[dict[str, Any]] = []
    for config in configs[1:]:
        for metric in names:
            k = _metric_k(metric)
            b = [per_q[base][q.id][metric] for q in answerable]
            c = [per_q[config.name][q.id][metric] for q in answerable]
            lost = []
            for q in answerable:
                had = set(q.relevant) & set(parent_ranking(finals[base].get(q.id) or [])[:k])
                missing = sorted(had - set(parent_ranking(finals[config.name].get(q.id) or [])[:k]))
                if missing:
                    lost.append({"id": q.id, "group": q.group, "lost": missing})
            by_group = {}
            for g in groups:
                idx = [i for i, q in enumerate(answerable) if q.group == g]
                by_group[g] = {"questions": len(idx),
                               "delta": round(statistics.fmean(c[i] - b[i] for i in idx), 4),
                               "improved": [answerable[i].id for i in idx if c[i] > b[i]],
                               "worsened": [answerable[i].id for i in idx if c[i] < b[i]]}
            delta = round(statistics.fmean(c) - statistics.fmean(b), 4)
            p = paired_p(b, c)
            out.append({
                "baseline": base, "candidate": config.name, "metric": metric,
                "delta": delta,
                "p_value": None if p is None else round(p, 6),
                "improved": [q.id for q, x, y in zip(answerable, b, c) if y > x],
                "worsened": [q.id for q, x, y in zip(answerable, b, c) if y < x],
                "by_group": by_group,
                "lost_relevant": lost,
                "wins_on_mean_but_lost_relevant": bool(delta > 0 and lost),
            })
    for metric in names:
        rows = [r for r in out if r["metric"] == metric]
        for row, adjusted in zip(rows, holm([r["p_value"] for r in rows])):
            row["p_holm"] = adjusted
    return out


def fmt_p(p: Any, lang: str = "en") -> str:
    """A p-value as text: ``n/a`` when absent, ``<0.001`` for 0 (the resolution of 1,000 permutations); decimals
    in ``lang`` (``0,0312`` in Portuguese)."""
    if p is None:
        return "n/a"
    if p == 0:
        return "<" + number(0.001, ".3f", lang)  # no permutation out of ranx's 1,000 reached the difference
    return number(p, ".4f", lang) if p >= 0.0001 else f"{p:.1e}"


def p_text(p: Any, lang: str = "en") -> str:
    """``p=0.0312``, or ``p<0.001`` when no permutation reached the observed difference (decimals in ``lang``)."""
    text = fmt_p(p, lang)
    return f"p{text}" if text.startswith("<") else f"p={text}"
