"""The figures of a fit on cases: the learned order against RRF (the evaluation's metrics), the learned gate
against the cosine gate, the evidence sentences against the extractive answer (:func:`measure`), the gate's
operating points and the reranker's strongest features."""

from __future__ import annotations

from typing import Any, Mapping, Protocol, Sequence

import numpy as np

from ...core.defaults import MIN_SIMILARITY
from ...core.types import FinalItem
from ...learned.judge.features import CANDIDATE_NAMES, SentenceRows, gate_features, sentence_features
from ...learned.judge.models import Explained, JudgeModels
from ...stages.answer import ExtractiveAnswerer
from ..evaluation.metrics import brief, ranking_scores, relevant_grades
from .cases import TOP_K, Case, contains_span, dedup_parents


def gate_row(case: Case, final: Sequence[int]) -> np.ndarray:
    """The gate's feature row of ``case`` for the chunks ``final`` (row indexes of the window)."""
    return gate_features(case.inp, case.rows, final)


class Orders(Protocol):
    """What orders a case's candidates: the judge's models, or a reranker fitted alone (:class:`RankerOnly`)."""

    def rerank(self, X: np.ndarray) -> Explained: ...


def ltr_order(models: Orders, case: Case) -> list[int]:
    """Candidate indexes in learned order (ties by fused rank)."""
    raw = models.rerank(case.rows.X).raw if len(case.rows.X) else np.zeros(0)
    return sorted(range(len(raw)), key=lambda j: (-raw[j], case.rows.fused_ranks[j]))


def final_indexes(case: Case, order: Sequence[int], k: int = TOP_K) -> list[int]:
    ids = [case.rows.chunk_ids[j] for j in order]
    parents = [case.rows.parent_ids[j] for j in order]
    return [order[j] for j in dedup_parents(ids, parents, k)]


def support_of(models: JudgeModels, case: Case, final: Sequence[int]) -> float:
    """The gate's P(support) for the chunks ``final`` of ``case`` (0 when there is none)."""
    if not final:
        return 0.0
    p, _ = models.support_proba(gate_row(case, final))
    return float(p[0])


def choose_evidence(models: JudgeModels, sent: SentenceRows, question: str = "", n: int = 2) -> list[int]:
    """Indexes of the ``n`` sentences the evidence model scores highest."""
    if len(sent.texts) == 0:
        return []
    raw = models.evidence_scores(sent.X).raw
    return sorted(range(len(raw)), key=lambda j: (-raw[j], j))[:n]


def _extractive_cited(case: Case, ctx_ids: Sequence[str]) -> list[str]:

    view = case.inp.view
    final = [FinalItem(cid, view.chunks[cid].parent_id, r, 0.0, None, view.chunks[cid].text)
             for r, cid in enumerate(ctx_ids, start=1)]
    return [s["text"] for s in ExtractiveAnswerer().answer(case.question.question, final).sentences]


def _span_hit(sentences: Sequence[str], answers: Sequence[str]) -> bool:
    return contains_span(" ".join(sentences), answers) or any(contains_span(s, answers) for s in sentences)


def cosine_gate_abstains(case: Case, final: Sequence[int], min_similarity: float = MIN_SIMILARITY,
                         require_codes: bool = True) -> bool:
    """The current default gate: no final chunk with cosine ≥ ``min_similarity``, or a question code that no
    final chunk holds."""
    cos = case.rows.column("dense_cos")
    if not final or max(cos[j] for j in final) < min_similarity:
        return True
    if require_codes and case.rows.terms.codes:
        cm = case.rows.column("code_match")
        return all(cm[j] < 1.0 for j in final) if final else True
    return False


#: The kinds of case the gate figures count (a clean leave-out case counts as ``leave_out`` too).
GATE_KINDS = ("answerable", "unanswerable", "leave_out", "leave_out_clean")


def gate_kinds(case: Case) -> list[str]:
    """The :data:`GATE_KINDS` ``case`` counts under."""
    return [case.kind] + (["leave_out_clean"] if case.kind == "leave_out" and case.clean else [])


def gate_shares(abstained: Mapping[str, Sequence[bool]]) -> dict[str, float | None]:
    """Answered share of answerable cases, abstained share of each kind of unanswerable case."""
    def mean(v: Sequence[bool]) -> float | None:
        return round(float(np.mean(v)), 4) if len(v) else None

    return {"answered_answerable": mean([not a for a in abstained["answerable"]]),
            "abstained_unanswerable": mean(abstained["unanswerable"]),
            "abstained_leave_out": mean(abstained["leave_out"]),
            "abstained_leave_out_clean": mean(abstained["leave_out_clean"])}


#: The thresholds of the model card's operating-point table (``RETRIEVAL_SUPPORT_THRESHOLD`` picks one).
OPERATING_THRESHOLDS = (0.05, 0.10, 0.15, 0.20, 0.30, 0.50)


def operating_points(models: JudgeModels, cases: Sequence[Case],
                     thresholds: Sequence[float] = OPERATING_THRESHOLDS) -> list[dict[str, Any]]:
    """The learned gate alone at each threshold: answered share of answerable cases, abstained share of
    unanswerable, leave-out and clean leave-out cases."""
    scored = []
    for c in cases:
        final = final_indexes(c, ltr_order(models, c)) if len(c.rows.chunk_ids) else []
        scored.append((c, support_of(models, c, final)))
    out = []
    for t in thresholds:
        abst: dict[str, list[bool]] = {k: [] for k in GATE_KINDS}
        for c, p in scored:
            for k in gate_kinds(c):
                abst[k].append(p < t)
        out.append({"threshold": t, **gate_shares(abst)})
    return out


def measure(models: JudgeModels, cases: Sequence[Case], threshold: float | None = None) -> dict[str, Any]:
    """Figures of the learned judge against RRF and the cosine gate on ``cases``.

    Returns ``{"n", "ndcg@10": {"rrf", "ltr"}, "recall@10", "mrr@10", "lost_relevant", "abstention": {...},
    "evidence": {...}}`` (``None`` where a part has no case). The ranking figures are the brief metrics at 10
    (:func:`~retrieval.offline.evaluation.metrics.brief`), computed by the evaluation's own metric code on each
    answerable case's top 10 parents, in the fused (``rrf``) and the learned (``ltr``) order.
    """
    t = models.threshold if threshold is None else threshold
    lost = 0
    lost_ids = []
    grades_of: dict[str, dict[str, int]] = {}
    orders: dict[str, dict[str, list[str]]] = {"rrf": {}, "ltr": {}}
    abst: dict[str, list[bool]] = {k: [] for k in GATE_KINDS}
    abst_cos: dict[str, list[bool]] = {k: [] for k in GATE_KINDS}
    abst_codes: dict[str, list[bool]] = {k: [] for k in GATE_KINDS}
    groups: dict[str, list[str]] = {}
    ev_before, ev_after, ev_after_ltr = [], [], []
    for c in cases:
        n = len(c.rows.chunk_ids)
        fused_order = list(range(n))
        order = ltr_order(models, c) if n else []
        final_l = final_indexes(c, order)
        final_r = final_indexes(c, fused_order)
        p = support_of(models, c, final_l)
        for k in gate_kinds(c):
            abst[k].append(p < t)
            abst_cos[k].append(cosine_gate_abstains(c, final_r))
            abst_codes[k].append(p < t or cosine_gate_abstains(c, final_l))
        if c.answerable:
            key = str(len(grades_of))  # one key per case: two corpora may share a question id
            grades_of[key] = relevant_grades(c.question)
            pr = [c.rows.parent_ids[j] for j in final_indexes(c, fused_order, 10)]
            pl = [c.rows.parent_ids[j] for j in final_indexes(c, order, 10)]
            orders["rrf"][key], orders["ltr"][key] = pr, pl
            groups.setdefault(c.question.group, []).append(key)
            rel = set(grades_of[key])
            if (set(pr) & rel) - set(pl):
                lost += 1
                lost_ids.append(c.question.id)
            if c.question.answers and c.sentences is not None:
                ctx = [c.rows.chunk_ids[j] for j in final_r]
                ev_before.append(_span_hit(_extractive_cited(c, ctx), c.question.answers))
                chosen = choose_evidence(models, c.sentences, c.question.question)
                ev_after.append(_span_hit([c.sentences.texts[j] for j in chosen], c.question.answers))
                ctx_l = [c.rows.chunk_ids[j] for j in final_l]
                sl = sentence_features(c.question.question, ctx_l, c.inp.view, c.inp.stats, c.rows.terms,
                                       c.inp.reader, c.inp.reader_sentences)
                chosen_l = choose_evidence(models, sl, c.question.question)
                ev_after_ltr.append(_span_hit([sl.texts[j] for j in chosen_l], c.question.answers))

    def mean(v: list) -> float | None:
        return round(float(np.mean(v)), 4) if v else None

    names = brief(10)
    per = {side: ranking_scores(grades_of, orders[side], names, side) for side in orders}

    def figure(name: str, keys: Sequence[str]) -> dict[str, float | None]:
        return {side: mean([per[side][k][name] for k in keys]) for side in orders}

    return {
        "n_answerable": len(grades_of), "n_unanswerable": len(abst["unanswerable"]),
        "n_leave_out": len(abst["leave_out"]), "n_leave_out_clean": len(abst["leave_out_clean"]),
        **{name: figure(name, list(grades_of)) for name in names},
        "lost_relevant": lost, "lost_relevant_ids": lost_ids,
        "support_gate": {"threshold": t, **gate_shares(abst)},
        "support_and_cosine_gate": gate_shares(abst_codes),
        "ndcg@10_by_group": {g: {"n": len(keys), **figure("ndcg@10", keys)} for g, keys in sorted(groups.items())},
        "cosine_gate": {"threshold": MIN_SIMILARITY, **gate_shares(abst_cos)},
        "evidence_span_share": {"n": len(ev_before), "extractive_rrf_context": mean(ev_before),
                                "model_rrf_context": mean(ev_after), "model_ltr_context": mean(ev_after_ltr)},
    }


def strongest_features(models: JudgeModels, cases: Sequence[Case], n: int = 5) -> list[tuple[str, float]]:
    """Features by mean |contribution| to the reranker's score over ``cases`` (raw LambdaMART units)."""
    X = np.vstack([c.rows.X for c in cases if len(c.rows.X)])
    C = models.reranker.contributions(X)[:, :-1]
    mean = np.abs(C).mean(axis=0)
    order = np.argsort(-mean)
    return [(CANDIDATE_NAMES[i], round(float(mean[i]), 4)) for i in order[:n]]
