"""Calibrating the cosine gate on the dev split (held-out accuracy reported apart)."""

from __future__ import annotations

import statistics
from typing import Any, Sequence

from ...core.split import split_of
from ...core.types import Question
from ...pipeline.view import Gate
from ...settings import Settings
from .compare import p_text


def calibrate_gate(bench: Any, questions: Sequence[Question], settings: Settings | None = None) -> dict[str, Any]:
    """Choose ``min_similarity`` on the dev split; report abstention accuracy on dev and held-out.

    A request abstains when no final chunk reaches the threshold, i.e. when the best cosine among its
    final top_k is below it. The threshold maximizing dev accuracy (abstain on unanswerable, answer on
    answerable) is chosen; among equally good ones, the midpoint of the widest best interval.

    Returns:
        ``{"threshold", "dev": {...}, "heldout": {...}, "points": [(qid, split, best_cosine, answerable)]}``.
    """
    s = (settings or bench.settings).with_overrides(min_similarity=-1.0)
    points = []
    for q in questions:
        best = _best_cosine(bench.ask(q.question, q.filters, settings=s))
        points.append((q.id, split_of(q.id), -1.0 if best is None else best, bool(q.relevant)))

    def right(rows: list[tuple], t: float) -> float:
        """The share of ``rows`` (not empty) the threshold ``t`` gets right."""
        return round(sum((p[2] >= t) == p[3] for p in rows) / len(rows), 4)

    def accuracy(rows: list[tuple], t: float) -> float | None:
        return right(rows, t) if rows else None

    dev = [p for p in points if p[1] == "dev"]
    held = [p for p in points if p[1] == "heldout"]
    if not any(p[3] for p in dev) or all(p[3] for p in dev):
        raise ValueError("calibrating the gate needs answerable and unanswerable questions (empty 'relevant') "
                         "in the dev split")
    candidates = _midpoints([p[2] for p in dev], None)
    top = max(right(dev, t) for t in candidates)  # dev holds both kinds of question: not empty
    good = [t for t in candidates if right(dev, t) == top]
    threshold = round(statistics.median(good), 4)
    return {"threshold": threshold,
            "dev": {"questions": len(dev), "abstention_accuracy": accuracy(dev, threshold)},
            "heldout": {"questions": len(held), "abstention_accuracy": accuracy(held, threshold)},
            "points": points}


def _best_cosine(trace: Any) -> float | None:
    """The best cosine among the final chunks the gate passed (``None``: none with a known cosine)."""
    sims = [f.similarity for f in trace.gated if f.similarity is not None]
    return max(sims) if sims else None


def _abstained_by(cosine: float | None, support: float | None, forced: bool, cos_t: float,
                  sup_t: float | None) -> bool:
    """Whether a request abstains at thresholds ``(cos_t, sup_t)``, from its best final cosine, its P(support)
    (``None``: the learned gate did not decide) and whether something else abstains it anyway (``forced``)."""
    if forced or cosine is None or cosine < cos_t:
        return True
    return sup_t is not None and support is not None and support < sup_t


def _midpoints(values: Sequence[float], keep: float | None) -> list[float]:
    """The thresholds worth trying on ``values``: just below the lowest, each midpoint, just above the highest
    (and ``keep``, the current one)."""
    cuts = sorted(set(values))
    if not cuts:
        return [keep] if keep is not None else []
    out = [cuts[0] - 1e-3] + [(a + b) / 2 for a, b in zip(cuts, cuts[1:])] + [cuts[-1] + 1e-3]
    return sorted(set(out) | ({keep} if keep is not None else set()))


def calibrate_abstention(open_bench: Any, settings: Settings, questions: Sequence[Question],
                         alpha: float = 0.05) -> dict[str, Any]:
    """The abstention thresholds of a corpus, chosen on its dev split and adopted only where held-out says so.

    Every dev and held-out question is asked once with both gates open (``min_similarity=-1``, the support
    threshold 0), keeping its best final cosine and P(support); the pair of thresholds (cosine, support) that
    abstains on the most dev questions it should (unanswerable) while answering the others is chosen, the
    current pair kept on a tie. The held-out questions are then asked again under the current and the chosen
    pair (the real pipeline: the support gate reads the chunks the cosine gate passed), and the chosen pair is
    recommended only when its held-out abstention accuracy is higher with an exact McNemar test's p < ``alpha``.

    Returns:
        ``{"cosine": {"current", "chosen"}, "support": {"current", "chosen"} (``None`` when the learned gate is
        off), "dev": {"questions", "current", "chosen"}, "heldout": {"questions", "current", "chosen", "gained",
        "lost", "p_value"}, "recommended", "why", "overrides"}`` (accuracies as shares).

    Raises:
        ValueError: the dev or the held-out split lacks answerable or unanswerable questions.
    """
    from scipy.stats import binomtest

    dev = [q for q in questions if split_of(q.id) == "dev"]
    held = [q for q in questions if split_of(q.id) == "heldout"]
    for name, part in (("dev", dev), ("held-out", held)):
        if not any(q.relevant for q in part) or all(q.relevant for q in part):
            raise ValueError(f"calibrating abstention needs answerable and unanswerable questions (empty "
                             f"'relevant') in the {name} split")
    learned = bool(settings.support_gate)
    bench = open_bench(settings)
    open_gates = settings.with_overrides(min_similarity=-1.0, **({"support_threshold": 0.0} if learned else {}))

    def read(q: Question, s: Settings) -> tuple[float | None, float | None, bool, bool]:
        trace = bench.ask(q.question, q.filters, settings=s)
        best = Gate.from_dict(trace.gate).support.best
        return (_best_cosine(trace), None if best is None else float(best), trace.answer.abstained,
                bool(q.relevant))

    points = [read(q, open_gates) for q in dev]
    model_t = None
    if learned:
        probe = bench.ask(dev[0].question, dev[0].filters, settings=settings)
        model_t = (probe.gate.get("support") or {}).get("threshold")
    cur_cos, cur_sup = settings.min_similarity, (settings.support_threshold if settings.support_threshold is not None
                                                 else model_t)

    def accuracy(rows: Sequence[tuple], cos_t: float, sup_t: float | None) -> float:
        return sum(_abstained_by(c, p, forced, cos_t, sup_t) != answerable
                   for c, p, forced, answerable in rows) / len(rows)

    # "forced": the open-gates request abstained anyway (no final chunk, a code no chunk holds)
    cos_grid = _midpoints([c for c, _, _, _ in points if c is not None], cur_cos)
    sup_grid = _midpoints([p for _, p, _, _ in points if p is not None], cur_sup) if learned else [None]
    best = (accuracy(points, cur_cos, cur_sup), 0.0, cur_cos, cur_sup)
    for cos_t in cos_grid:
        for sup_t in sup_grid:
            acc = accuracy(points, cos_t, sup_t)
            moved = abs(cos_t - cur_cos) + (abs(sup_t - cur_sup) if sup_t is not None and cur_sup is not None else 0)
            if (acc, -moved) > (best[0], -best[1]):
                best = (acc, moved, cos_t, sup_t)
    _, _, cos_t, sup_t = best
    chosen = {"min_similarity": round(float(cos_t), 4)}
    if learned and sup_t is not None:
        chosen["support_threshold"] = round(min(1.0, max(0.0, float(sup_t))), 4)
    now = [bench.ask(q.question, q.filters, settings=settings).answer.abstained for q in held]
    then = [bench.ask(q.question, q.filters, settings=settings.with_overrides(**chosen)).answer.abstained
            for q in held]
    right_now = [a != bool(q.relevant) for a, q in zip(now, held)]
    right_then = [a != bool(q.relevant) for a, q in zip(then, held)]
    gained = sum(b and not a for a, b in zip(right_now, right_then))
    lost = sum(a and not b for a, b in zip(right_now, right_then))
    p = binomtest(gained, gained + lost, 0.5).pvalue if gained + lost else None
    changed = chosen != {"min_similarity": round(float(cur_cos), 4),
                         **({"support_threshold": round(float(cur_sup), 4)} if learned and cur_sup is not None else {})}
    if not changed:
        recommended, why = False, "the current thresholds were the best on dev: nothing to confirm on held-out"
    elif gained <= lost:
        recommended, why = False, (f"current thresholds kept: held-out abstention accuracy does not improve "
                                   f"({gained} questions gained, {lost} lost)")
    elif p is None or p >= alpha:
        recommended, why = False, (f"current thresholds kept: held-out abstention accuracy {gained - lost:+d} "
                                   f"questions is not significant ({p_text(p)}; needs p < {alpha})")
    else:
        recommended, why = True, (f"held-out abstention accuracy {gained - lost:+d} questions ({gained} gained, "
                                  f"{lost} lost; {p_text(p)})")
    return {"cosine": {"current": cur_cos, "chosen": chosen["min_similarity"]},
            "support": ({"current": cur_sup, "chosen": chosen.get("support_threshold")} if learned else None),
            "dev": {"questions": len(dev), "current": round(accuracy(points, cur_cos, cur_sup), 4),
                    "chosen": round(best[0], 4)},
            "heldout": {"questions": len(held), "current": round(sum(right_now) / len(held), 4),
                        "chosen": round(sum(right_then) / len(held), 4), "gained": gained, "lost": lost,
                        "p_value": None if p is None else round(float(p), 4)},
            "recommended": recommended, "why": why, "overrides": dict(chosen) if recommended else {}}
