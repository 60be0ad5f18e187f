"""Calibrating the cosine gate on the dev split (held-out accuracy reported apart)."""

from __future__ import annotations

import statistics
from typing import Any, Sequence

from ...core.split import split_of
from ...core.types import Question
from ...settings import Settings


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
        trace = bench.ask(q.question, q.filters, settings=s)
        sims = [f.similarity for f in trace.final if f.similarity is not None]
        points.append((q.id, split_of(q.id), max(sims) if sims else -1.0, bool(q.relevant)))

    def accuracy(rows: list[tuple], t: float) -> float | None:
        return round(sum((p[2] >= t) == p[3] for p in rows) / len(rows), 4) if rows else None

    dev = [p for p in points if p[1] == "dev"]
    held = [p for p in points if p[1] == "heldout"]
    if not any(p[3] for p in dev) or all(p[3] for p in dev):
        raise ValueError("calibrating the gate needs answerable and unanswerable questions (empty 'relevant') "
                         "in the dev split")
    cuts = sorted({p[2] for p in dev})
    candidates = [cuts[0] - 1e-3] + [(a + b) / 2 for a, b in zip(cuts, cuts[1:])] + [cuts[-1] + 1e-3]
    best = max(accuracy(dev, t) for t in candidates)
    good = [t for t in candidates if accuracy(dev, t) == best]
    threshold = round(statistics.median(good), 4)
    return {"threshold": threshold,
            "dev": {"questions": len(dev), "abstention_accuracy": accuracy(dev, threshold)},
            "heldout": {"questions": len(held), "abstention_accuracy": accuracy(held, threshold)},
            "points": points}
